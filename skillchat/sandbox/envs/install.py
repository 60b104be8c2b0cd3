"""Install a requirement set with uv, in a sandbox of its own, from wheels only.

uv is the pinned `uv` wheel's static binary (`uv.find_uv_bin()`), bound read-only
into a bubblewrap sandbox made like a command's (skillchat/sandbox/layout.py), with:

    /opt/skillchat/env    the new environment, writable (the staging folder's env/)
    /opt/skillchat/cache  uv's cache: an empty tmpfs of the size cap, this install's
                          alone, gone when it ends
    /opt/skillchat/uv     uv, read-only
    /scratch              where uv's cache's final size is written
    the network           on: the package index is reached from inside

Nothing else of the host: no home (no keys, no ~/.config/uv, no ~/.pypirc), no data
folder, no other environment. The index is the user's, passed through uv's and
pip's variables (UV_INDEX_URL, UV_DEFAULT_INDEX, UV_EXTRA_INDEX_URL, UV_FIND_LINKS,
UV_NO_INDEX, PIP_INDEX_URL, ...) and proxy variables; a local find-links folder is
bound read-only at its own path. The requirements are uv's arguments, each one
requirement as packaging wrote it (envs/declared.py), never a file uv reads
options from, and no configuration file is read (`--no-config`). Wheels only, on
every uv command, the resolve's too (`--no-build`, uv's `--only-binary :all:`), so no
source distribution is built and no package's code runs during the install (a
`.pth` file in a wheel runs only when the environment's Python starts, which is
only inside a command's sandbox: the record is read from files). The environment is
made at the path it is mounted at for commands, so its scripts' `#!` lines work there.

Bounded: the run's timeout, uv's HTTP timeout (a hung index ends with a clear
line), the environment's size and its number of packages. The size holds while uv
runs: uv unpacks every wheel into its cache, then copies it into the environment,
and that cache is a tmpfs of the cap's size, so a small wheel that expands past the
cap fails there (no space left) before anything is copied, and the environment can
only hold what fitted in it. A tmpfs rather than a watcher that kills uv past the
cap: the kernel refuses the first byte over, where a watcher lets uv write on
between two looks. Its price is RAM (or swap) for what the install unpacks while it
runs. No cache outlives an install, so nothing one install writes can be read by
another, and a refused or failed install leaves nothing: its staging folder goes.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import InstallFailed, SandboxFailure
from skillchat.redact import redact
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.envs.store import (
    EnvStore,
    Record,
    env_key,
    fingerprint,
    folder_size,
    installed_packages,
)
from skillchat.sandbox.layout import Limits, SandboxSpec
from skillchat.sandbox.runner import NOBODY, run_in_sandbox

ENV_MOUNT = "/opt/skillchat/env"
CACHE_MOUNT = "/opt/skillchat/cache"
UV_MOUNT = "/opt/skillchat/uv"
LINKS_MOUNT = "/opt/skillchat/links"
CERT_MOUNT = "/opt/skillchat/ca-certificates.crt"
# pip's and uv's "index off" variables (uv has no variable of its own for it).
NO_INDEX = ("UV_NO_INDEX", "PIP_NO_INDEX")
SYSTEM_PYTHON = "/usr/bin/python3"
# On every uv command that resolves or installs (`uv venv` installs nothing, and
# gets `--no-config` only): no configuration file read; wheels only (`--no-build`
# is uv's `--only-binary :all:`, and the two may not be given together).
UV_SAFE = "--no-config --no-build"
# How uv and npm say a write did not fit (in the cache's tmpfs, or the file-size limit).
NO_SPACE = ("No space left on device", "ENOSPC", "File too large", "EFBIG")
FETCHED = "fetched"  # the scratch file the install's last step writes its cache's size to
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
# What of the host's environment reaches uv: where the index is, how to reach it.
PASSED_VARIABLES = (
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_INDEX_STRATEGY",
    "UV_HTTP_TIMEOUT",
    "UV_NATIVE_TLS",
    "UV_SYSTEM_CERTS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    *PROXY_VARIABLES,
)


@dataclass(frozen=True)
class InstallLimits:
    timeout_s: float = 600.0
    http_timeout_s: int = 30
    max_mb: int = 2048
    max_packages: int = 200


@functools.cache
def sandbox_python() -> tuple[int, ...]:
    """The version of the Python commands run (`python3` inside the sandbox)."""
    done = subprocess.run(
        [SYSTEM_PYTHON, "-I", "-c", "import sys; print(*sys.version_info[:3])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return tuple(int(p) for p in done.stdout.split())


def uv_binary() -> str:
    """The pinned uv's binary."""
    try:
        from uv import find_uv_bin
    except ImportError:
        raise InstallFailed("uv is not installed with skillchat: pip install uv") from None
    return find_uv_bin()


def ensure(
    store: EnvStore,
    packages: tuple[str, ...],
    tools: Tools,
    *,
    limits: InstallLimits = InstallLimits(),
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[Record, bool]:
    """The environment of `packages`: (its record, whether it was installed now)."""

    def build(staging: Path) -> Record:
        return _install(key, packages, staging, tools, limits, progress)

    key = env_key(packages, sandbox_python())
    return made_once(store, key, build)


def made_once(store: EnvStore, key: str, build: Callable[[Path], Record]) -> tuple[Record, bool]:
    """The environment `key`, made by `build` (into the staging folder's `env/`)
    under the key's lock when it is not ready: a second caller waits, then reuses
    it; a failed build leaves nothing."""
    if (record := store.ready(key)) is not None:
        return record, False
    with store.lock(key):
        if (record := store.ready(key)) is not None:
            return record, False
        staging = store.staging(key)
        try:
            record = build(staging)
            store.publish(staging / "env", record)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return record, True


def _install(
    key: str,
    packages: tuple[str, ...],
    staging: Path,
    tools: Tools,
    limits: InstallLimits,
    progress: Callable[[str], None],
) -> Record:
    env, work = staging / "env", staging / "work"
    env.mkdir(mode=0o755)
    work.mkdir(mode=0o755)
    if os.geteuid() == 0:  # the install runs as nobody
        os.chown(env, NOBODY, NOBODY)
    binds, variables, no_index = uv_access(limits)
    binds.insert(0, (env, ENV_MOUNT, True))
    command = (
        f"{UV_MOUNT} venv --no-config --quiet --no-project --python {SYSTEM_PYTHON} {ENV_MOUNT}"
        f" && {UV_MOUNT} pip install {UV_SAFE} --python {ENV_MOUNT}/bin/python "
        f"{'--no-index ' if no_index else ''}{uv_arguments(packages)}"
        f" && {cache_size(CACHE_MOUNT)}"
    )
    spec = install_spec(work, binds, limits, CACHE_MOUNT)
    start = time.monotonic()
    run_install(tools, spec, command, variables, limits, progress, ", ".join(packages))
    size = finish(env, limits, len(installed := installed_packages(env)))
    return Record(
        key=key,
        requested=list(packages),
        python=".".join(map(str, sandbox_python())),
        installed=installed,
        size_bytes=size,
        fetched_bytes=fetched(work),
        duration_ms=int((time.monotonic() - start) * 1000),
        fingerprint=fingerprint(env),
    )


def uv_arguments(packages: tuple[str, ...]) -> str:
    """The requirements as uv's arguments, one each (checked and rewritten by
    packaging: none starts with `-`, none holds a line break)."""
    return " ".join(shlex.quote(p) for p in packages)


def cache_size(mount: str) -> str:
    """An install's last step: its cache's size (what it fetched and unpacked),
    written to the scratch folder for the record (`fetched`)."""
    return f"du -sb {mount} > /scratch/{FETCHED}"


def fetched(work: Path) -> int:
    """The size `cache_size` wrote, or 0."""
    try:
        return int((work / FETCHED).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def uv_access(
    limits: InstallLimits,
) -> tuple[list[tuple[Path, str, bool]], dict[str, str], bool]:
    """What uv gets in its sandbox to reach the user's index: its binary (a bind),
    the index's and proxies' variables, and whether the index is off."""
    binds = [(Path(uv_binary()), UV_MOUNT, False)]
    variables = {"UV_HTTP_TIMEOUT": str(limits.http_timeout_s)}
    variables |= {n: os.environ[n] for n in PASSED_VARIABLES if n in os.environ}
    links = _local_find_links()
    for number, folder in enumerate(links):
        binds.append((folder, f"{LINKS_MOUNT}/{number}", False))
    if links:  # local folders seen where they are bound; URLs pass as they are
        urls = [u for n in ("UV_FIND_LINKS", "PIP_FIND_LINKS") for u in _items(n) if "://" in u]
        variables["UV_FIND_LINKS"] = ",".join(
            [f"{LINKS_MOUNT}/{n}" for n in range(len(links))] + urls
        )
        variables.pop("PIP_FIND_LINKS", None)
    cert = os.environ.get("SSL_CERT_FILE")
    if cert and Path(cert).is_file():  # a company's CA bundle, read-only
        binds.append((Path(cert).resolve(), CERT_MOUNT, False))
        variables["SSL_CERT_FILE"] = CERT_MOUNT
    no_index = any(os.environ.get(n, "") not in ("", "0", "false") for n in NO_INDEX)
    variables |= {
        "UV_CACHE_DIR": CACHE_MOUNT,
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_LINK_MODE": "copy",
        "UV_NO_PROGRESS": "1",
        "UV_HTTP_RETRIES": "1",
    }
    return binds, variables, no_index


def install_spec(
    work: Path, binds: list[tuple[Path, str, bool]], limits: InstallLimits, *unpacked: str
) -> SandboxSpec:
    """An installer's sandbox: `work` as its scratch, the network on, `binds`, the
    folders where packages are `unpacked` (its cache, for uv) each a tmpfs of the
    cap's size (see above), and room for big packages (file size up to the cap)."""
    return SandboxSpec(
        scratch=work,
        network=True,
        binds=tuple(binds),
        tmpfs=tuple((folder, limits.max_mb) for folder in unpacked),
        limits=Limits(timeout_s=limits.timeout_s, max_file_mb=limits.max_mb, memory_mb=16384),
    )


def run_install(
    tools: Tools,
    spec: SandboxSpec,
    command: str,
    variables: dict[str, str],
    limits: InstallLimits,
    progress: Callable[[str], None],
    what: str,
    reason: Callable[[str], str] | None = None,
) -> None:
    """Run an installer's command line in its sandbox, its lines to `progress`;
    InstallFailed with one line (`reason` of its stderr: uv's by default) when it
    could not start, timed out or failed."""
    partial = {"stdout": "", "stderr": ""}

    def sink(stream: str, text: str) -> None:
        """The installer's lines, whole, as they come (a chunk may end mid-line)."""
        *lines, partial[stream] = (partial[stream] + text).split("\n")
        for line in lines:
            if line.strip():
                progress(redact(line.strip()))

    try:
        outcome = run_in_sandbox(tools, spec, command, extra_env=variables, on_output=sink)
    except SandboxFailure as exc:
        raise InstallFailed(f"the install sandbox could not start: {exc}") from None
    if outcome.stopped == "timeout":
        raise InstallFailed(
            f"the install took longer than {limits.timeout_s:g} s and was stopped "
            "(is the package index reachable?)"
        )
    if outcome.exit_code != 0 and any(n in outcome.stderr for n in NO_SPACE):
        raise InstallFailed(
            f"installing {what} was stopped: it would be over the {limits.max_mb} MB cap"
        )
    if outcome.exit_code != 0:
        why = redact((reason or _reason)(outcome.stderr))  # uv quotes the index's URL
        raise InstallFailed(f"installing {what} failed: {why}")


def finish(env: Path, limits: InstallLimits, count: int) -> int:
    """Check a made environment against the caps and make it read-only (owned by
    root when skillchat is: commands run as nobody); its size."""
    size = folder_size(env)
    if size > limits.max_mb * 1024 * 1024:
        raise InstallFailed(
            f"the environment would be {size // 2**20} MB, over the {limits.max_mb} MB cap"
        )
    if count > limits.max_packages:
        raise InstallFailed(
            f"{count} packages would be installed, over the cap of {limits.max_packages}"
        )
    if os.geteuid() == 0:
        _chown_tree(env, 0)
    _read_only(env)
    return size


def _reason(stderr: str) -> str:
    """uv's error, on one line: the wheel-less package named, hints dropped."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    picked = [ln for ln in lines if not ln.startswith(("hint:", "help:"))] or lines or ["no output"]
    text = " ".join(picked[-4:])
    if "no usable wheels" in text or "no wheels" in text or "building from source" in text:
        text += " (only wheels are installed: building from source would run the package's code)"
    return " ".join(text.replace("×", "").replace("╰─▶", "").split())


def _items(name: str) -> list[str]:
    return os.environ.get(name, "").replace(",", " ").split()


def _local_find_links() -> list[Path]:
    """Local folders named by UV_FIND_LINKS / PIP_FIND_LINKS: bound read-only."""
    out = []
    for name in ("UV_FIND_LINKS", "PIP_FIND_LINKS"):
        for item in _items(name):
            if "://" in item and not item.startswith("file://"):
                continue
            path = Path(item.removeprefix("file://"))
            if path.is_absolute() and path.is_dir():
                out.append(path.resolve())
    return out


def _read_only(root: Path) -> None:
    """No write bit on files: an environment changes only by being made again.
    Folders keep theirs, so the owner can still remove it (prune)."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.lstat(path).st_mode & ~0o222)


def _chown_tree(root: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), uid, uid)
    os.lchown(root, uid, uid)
