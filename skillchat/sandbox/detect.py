"""Is there a sandbox here? Find bubblewrap and the helpers, and try it once.

A sandbox that is merely installed may still be refused by the kernel (user
namespaces off, an AppArmor rule, a container without them), so `probe` runs a
real, trivial sandbox and keeps the answer for the life of the process. A working
sandbox is also remembered in the user cache (`sandbox.json`, safe_io/user_cache.py),
keyed by the bwrap binary, the kernel and the user, so `ask` and the REPL do not pay
the ~30 ms trial at every start; a failure is never cached (fixing it must show at
once). No sandbox, no `run_command`: `skillchat doctor` and `config show` say why and
how to get one.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skillchat.safe_io import user_cache

INSTALL_HINT = (
    "install bubblewrap: Debian/Ubuntu `sudo apt install bubblewrap`, "
    "Fedora `sudo dnf install bubblewrap`, Arch `sudo pacman -S bubblewrap`"
)


@dataclass(frozen=True)
class Tools:
    """The programs a run needs, by absolute path (the same inside: /usr is shared)."""

    bwrap: str
    prlimit: str
    setpriv: str | None  # only needed as root
    shell: str
    nsenter: str | None = None  # only needed as root


@dataclass(frozen=True)
class SandboxStatus:
    """The answer of `probe`: usable or not, and why not in one line."""

    available: bool
    reason: str  # what works ("bubblewrap 0.8.0 ...") or what does not
    hint: str = ""  # how to fix it, when not available
    tools: Tools | None = None
    version: str = ""


def find_tools() -> Tools | SandboxStatus:
    """The programs, or a not-available status saying which one is missing."""
    if not sys.platform.startswith("linux"):
        return SandboxStatus(False, f"the sandbox needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed", INSTALL_HINT)
    prlimit = shutil.which("prlimit")
    setpriv = shutil.which("setpriv")
    nsenter = shutil.which("nsenter")
    if prlimit is None or (os.geteuid() == 0 and (setpriv is None or nsenter is None)):
        return SandboxStatus(
            False, "util-linux's prlimit/setpriv/nsenter are missing", "install util-linux"
        )
    shell = next((s for s in ("/usr/bin/bash", "/bin/bash") if Path(s).exists()), "/bin/sh")
    return Tools(bwrap=bwrap, prlimit=prlimit, setpriv=setpriv, shell=shell, nsenter=nsenter)


_cached: SandboxStatus | None = None


def probe(*, refresh: bool = False) -> SandboxStatus:
    """Try a real sandbox once (`true` inside the full layout) and remember the answer."""
    global _cached
    if _cached is not None and not refresh:
        return _cached
    found = find_tools()
    if isinstance(found, SandboxStatus):
        _cached = found
        return found
    key = _cache_key(found)
    if not refresh and (known := _read_cache(key)) is not None:
        _cached = SandboxStatus(True, known, "", found, known.split(" at ")[0])
        return _cached
    from skillchat.errors import SandboxFailure
    from skillchat.sandbox.layout import SandboxSpec
    from skillchat.sandbox.runner import run_in_sandbox

    version = _version(found.bwrap)
    # The scratch folder is made one level inside a temp folder of our own: the
    # runner makes a scratch folder's parent private (0700), and that parent must be
    # ours, never the system temp folder itself.
    with tempfile.TemporaryDirectory(prefix="skillchat-probe-") as tmp:
        try:
            scratch = Path(tmp) / "scratch"
            outcome = run_in_sandbox(found, SandboxSpec(scratch=scratch), "exit 0")
        except SandboxFailure as exc:
            _cached = SandboxStatus(
                False,
                f"bubblewrap cannot start a sandbox here: {exc}",
                _refusal_hint(),
                found,
                version,
            )
            return _cached
    if outcome.exit_code != 0:
        reason = (outcome.stderr.strip().splitlines() or ["unknown error"])[-1]
        _cached = SandboxStatus(
            False,
            f"bubblewrap cannot start a sandbox here: {reason}",
            _refusal_hint(),
            found,
            version,
        )
        return _cached
    who = "as root: commands run as the unprivileged uid 65534" if os.geteuid() == 0 else ""
    detail = f"{version} at {found.bwrap}" + (f" ({who})" if who else "")
    _cached = SandboxStatus(True, detail, "", found, version)
    _write_cache(key, detail)
    return _cached


CACHE_NAME = "sandbox.json"


def _cache_key(tools: Tools) -> str:
    st = os.stat(tools.bwrap)
    return f"{tools.bwrap}:{st.st_mtime_ns}:{st.st_size}:{os.uname().release}:{os.geteuid()}"


def _read_cache(key: str) -> str | None:
    data = user_cache.read(CACHE_NAME)
    detail = data.get("detail") if isinstance(data, dict) and data.get("key") == key else None
    return detail if isinstance(detail, str) else None


def _write_cache(key: str, detail: str) -> None:
    # One that cannot be written costs the next start a probe, nothing else.
    user_cache.update(CACHE_NAME, lambda _: {"key": key, "detail": detail})


def _version(bwrap: str) -> str:
    import subprocess

    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "bubblewrap"
    return out.stdout.strip() or "bubblewrap"


def _refusal_hint() -> str:
    return (
        "user namespaces may be disabled: check `sysctl kernel.unprivileged_userns_clone` "
        "(Debian) or `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 24.04+), "
        "or run outside a container that forbids them"
    )
