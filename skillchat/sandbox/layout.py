"""What a sandboxed command sees: the bubblewrap arguments for one run (pure, no I/O
beyond looking at which system folders exist).

    /usr /bin /lib ...   the host's, read-only (symlinks kept as symlinks)
    /etc                 a short allowlist of the host's files, read-only, plus a
                         made-up passwd/group naming only root, `user` and nobody
    /skills/<name>       every discovered skill folder, read-only
    /workspace           the workspace, read-only unless writes were allowed; even
                         then `PROTECTED` (.git, editor and skill folders) stays
                         read-only
    /scratch             the chat's scratch folder, writable (the working folder
                         when there is no workspace)
    /home/user           an empty home (a tmpfs: gone after the run), where
                         ~/.agents/skills, ~/.claude/skills and
                         ~/.config/skillchat/skills lead to /skills
    /opt/skillchat/bin   `python` (the system's python3) and a `uv` that runs
                         `uv run SCRIPT` offline; first on PATH
    /opt/skillchat/env   the skill's Python environment, read-only, when it has
                         one (skillchat/sandbox/envs); its bin/ comes before everything
    /tmp  /dev/shm       empty tmpfs
    /opt/skillchat/cache an installer's cache, an empty tmpfs of the install's size
                         cap (skillchat/sandbox/envs), only in an install's sandbox
    /proc /dev           new ones, for the sandbox's own pid namespace (/dev is
                         read-only: only its device nodes are usable)

Every RAM-backed folder has a size (`Limits`): without one a tmpfs may grow to half
the machine's RAM, each.

Nothing else of the host exists inside: not `/root`, not `/home`, not the data
folder, not `/etc/shadow` or `/etc/ssh`. Hiding by absence matters because the
tests and CI run as root, where file permissions hide nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.mounts import SCRATCH_MOUNT, SKILLS_MOUNT, WORKSPACE_MOUNT, start_folder

HOME = "/home/user"
SANDBOX_UID = 1000
SANDBOX_USER = "user"
SHIM_BIN = "/opt/skillchat/bin"
PATH = f"{SHIM_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The user-level spellings of a skill's folder that SKILL.md files print
# (`~/.agents/skills/NAME/...`): links to /skills in the empty home.
HOME_SKILL_LINKS = (".agents/skills", ".claude/skills", ".config/skillchat/skills")
# `uv run scripts/x.py` (the spec's recommendation) inside the sandbox: the script
# runs with the environment skillchat prepared before the run, offline; uv's other
# commands would reach for the network, so they say why they are not here.
UV_SHIM = """#!/bin/sh
if [ "$1" = run ]; then
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --) shift; break ;;
      --with|--python|-p|--directory|--project|--extra|--group|--index|--env-file) shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  exec python "$@"
fi
echo "uv: only 'uv run SCRIPT' works in skillchat's sandbox" \
  "(its packages are prepared before the run)" >&2
exit 2
"""
EXECUTABLE_FILES = frozenset({f"{SHIM_BIN}/uv"})

# Top-level system folders bound read-only when they exist (a symlink stays one).
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# What of /etc a script needs: the dynamic linker's cache, alternatives (Debian
# links /usr/bin/awk through it), the time zone. Name resolution and TLS roots only
# when the network is allowed (useless without it). Each bind costs bubblewrap about
# a millisecond, so the list is short. Never passwd/shadow/ssh/hostname/ssl/private.
ETC_ALWAYS = ("alternatives", "ld.so.cache", "localtime")
ETC_NETWORK = (
    "resolv.conf",
    "nsswitch.conf",
    "gai.conf",
    "services",
    "protocols",
    "ssl/certs",
    "ssl/openssl.cnf",  # read by Node and Python's ssl at start: unreadable stops them
    "ca-certificates",
    "pki/tls/certs",
    "crypto-policies",
)
# bubblewrap itself starts with only these variables (with these values, never the
# host's), and the command inherits them: no API key or token can leak through the
# environment, neither the command's nor that of bubblewrap's pid 1, whose
# /proc/1/environ the command can read.
BASE_ENV = {
    "PATH": PATH,
    "HOME": HOME,
    "USER": SANDBOX_USER,
    "LOGNAME": SANDBOX_USER,
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",  # skill folders are read-only anyway
    "PYTHONUNBUFFERED": "1",  # so output streams to the card as it is printed
    "DISABLE_TELEMETRY": "1",
    "SKILLCHAT_SANDBOX": "1",
    # Read-only workspaces appear owned by someone else; git would refuse them.
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "safe.directory",
    "GIT_CONFIG_VALUE_0": "*",
}
# The workspace entries that stay read-only when the command may write the
# workspace: what the host runs on its own, without the user running the project's
# code, so a command must not plant or change them (nor create them when missing).
PROTECTED = {
    ".git": "hooks, and config (core.fsmonitor, core.hooksPath, aliases) git runs; a "
    "file when the workspace is a worktree or a submodule",
    ".agents": "project skills (.agents/skills) skillchat loads and may run",
    ".claude": "project skills, and settings whose hooks Claude Code runs",
    "skills": "project skills skillchat loads from ./skills",
    ".envrc": "the shell code direnv runs on entering the folder",
    ".vscode": "tasks and settings VS Code runs (tasks on folder open, interpreters)",
    ".idea": "run configurations and tools JetBrains IDEs run",
    ".devcontainer": "the container and its commands an editor builds and runs",
}
# Missing ones are made empty for the run (so there is a mount point) and removed
# after it: files stay files, everything else is a folder.
PROTECTED_FILES = frozenset({".envrc"})
_MOUNT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Processes and memory are rlimits set inside the sandbox,
    where the command's user is unprivileged, so they hold even when skillchat runs
    as root (RLIMIT_NPROC is ignored for root). The RAM-backed folders have sizes.
    The scratch folder is on disk and kept with the chat: past `scratch_mb` after a
    run the result says so (nothing is deleted: it is the user's data). Memory
    across processes has no total: that needs cgroups, which an unprivileged user
    cannot count on."""

    timeout_s: float = 120.0
    max_output_bytes: int = 32_000  # kept of each stream: what the model gets and is stored
    stop_after_bytes: int = 20_000_000  # total output past which the run is stopped
    max_processes: int = 256
    memory_mb: int = 4096  # address space per process
    max_file_mb: int = 1024
    tmp_mb: int = 256  # /tmp, in RAM
    home_mb: int = 64  # /home/user, in RAM
    shm_mb: int = 64  # /dev/shm, in RAM
    scratch_mb: int = 1024  # on disk, kept: over it, the result says so
    scan_entries: int = 20_000  # entries looked at per folder when listing writes
    scan_depth: int = 64  # folder depth looked into when listing writes


@dataclass(frozen=True)
class SandboxSpec:
    """The folders one chat's sandbox shows, and what it may do."""

    scratch: Path
    skills: Mapping[str, Path] = field(default_factory=dict)  # name -> real folder
    workspace: Path | None = None
    writable_workspace: bool = False
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    # More folders: (host folder, where it is seen, writable). A skill's
    # environment at /opt/skillchat/env; the install's own folders (skillchat/sandbox/envs).
    binds: tuple[tuple[Path, str, bool], ...] = ()
    # Empty folders in RAM, each with its size in MiB: an installer's cache, which
    # then can hold no more than the install's cap and is gone when the run ends.
    tmpfs: tuple[tuple[str, int], ...] = ()

    def default_cwd(self) -> str:
        """Where a command starts: the workspace if there is one, else the scratch."""
        return start_folder(self.workspace is not None)

    def mountable_skills(self) -> dict[str, Path]:
        """Skills that can be shown at /skills/<name>: a name usable as a folder name,
        and a folder that is not `/` nor holds the user's home (a skill symlinked to
        `~` must not expose it)."""
        home = Path.home().resolve()
        out = {}
        for name, root in self.skills.items():
            real = root.resolve()
            if not _MOUNT_NAME.match(name) or real == Path("/") or home.is_relative_to(real):
                continue
            out[name] = real
        return out


def _passwd() -> str:
    return (
        "root:x:0:0:root:/root:/bin/sh\n"
        f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:{SANDBOX_USER}:{HOME}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )


def _group() -> str:
    return f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n"


_HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n"


def etc_files(network: bool) -> dict[str, str]:
    """The made-up files (path -> content): `whoami`, `id` and Python's `pwd`
    work without the host's user list, and `localhost` resolves (scripts wait for
    their servers on it) without the host's hosts file. With the network, the
    host's nsswitch.conf is bound instead of this one. Plus the `uv` shim."""
    files = {"/etc/passwd": _passwd(), "/etc/group": _group(), "/etc/hosts": _HOSTS}
    files[f"{SHIM_BIN}/uv"] = UV_SHIM
    if not network:
        files["/etc/nsswitch.conf"] = "passwd: files\ngroup: files\nhosts: files\n"
    return files


def bwrap_args(
    spec: SandboxSpec,
    *,
    cwd: str,
    data_fds: Mapping[str, int],
    as_root: bool,
    host_root: Path = Path("/"),
) -> list[str]:
    """The bubblewrap options for one run (everything before the command).

    `data_fds` maps each of `etc_files()` to an open fd holding its content.
    `as_root`: skillchat runs as root, so the caller maps the user namespace itself
    (uid 0 for bubblewrap's setup, `SANDBOX_UID` -> nobody for the command), and
    forbids nested user namespaces there (bubblewrap's `--disable-userns` cannot be
    combined with those maps); the command drops to `SANDBOX_UID` with setpriv, and
    bubblewrap keeps only the two capabilities that drop needs. As a user,
    `--disable-userns` does it. With workspace writes, every `PROTECTED` entry must
    exist (the caller makes missing ones) to be bound read-only over it.
    """
    args = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]
    if not spec.network:
        args.append("--unshare-net")
    if as_root:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns"]
    for name in SYSTEM_DIRS:
        host = host_root / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_ALWAYS + (ETC_NETWORK if spec.network else ()):
        if os.path.lexists(host_root / "etc" / name):
            if "/" in name:  # else bubblewrap makes the parent 0700: unreadable inside
                args += ["--perms", "0755", "--dir", f"/etc/{os.path.dirname(name)}"]
            args += ["--ro-bind-try", str(host_root / "etc" / name), f"/etc/{name}"]
    args += ["--perms", "0755", "--dir", SHIM_BIN]
    args += ["--symlink", "/usr/bin/python3", f"{SHIM_BIN}/python"]
    for path, fd in data_fds.items():
        perms = "0755" if path in EXECUTABLE_FILES else "0644"
        args += ["--perms", perms, "--ro-bind-data", str(fd), path]
    mib = 1024 * 1024
    limits = spec.limits
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(limits.shm_mb * mib), "--perms", "1777", "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev"]  # else a user's command could fill /dev's tmpfs
    args += ["--size", str(limits.tmp_mb * mib), "--perms", "1777", "--tmpfs", "/tmp"]
    args += ["--size", str(limits.home_mb * mib)]
    args += ["--perms", "0777" if as_root else "0700", "--tmpfs", HOME]
    for link in HOME_SKILL_LINKS:
        parts = link.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            args += ["--perms", "0755", "--dir", f"{HOME}/{'/'.join(parts[:depth])}"]
        args += ["--symlink", SKILLS_MOUNT, f"{HOME}/{link}"]
    args += ["--perms", "0755", "--dir", SKILLS_MOUNT]
    for name, root in sorted(spec.mountable_skills().items()):
        args += ["--ro-bind", str(root), f"{SKILLS_MOUNT}/{name}"]
    if spec.workspace is not None:
        bind = "--bind" if spec.writable_workspace else "--ro-bind"
        args += [bind, str(spec.workspace), WORKSPACE_MOUNT]
        if spec.writable_workspace:
            for name in PROTECTED:
                args += ["--ro-bind", str(spec.workspace / name), f"{WORKSPACE_MOUNT}/{name}"]
    args += ["--bind", str(spec.scratch), SCRATCH_MOUNT]
    for host, dest, writable in spec.binds:  # parents made traversable by the command
        args += ["--perms", "0755", "--dir", os.path.dirname(dest)]
        args += ["--bind" if writable else "--ro-bind", str(host), dest]
    for dest, size_mb in spec.tmpfs:
        args += ["--perms", "0755", "--dir", os.path.dirname(dest)]
        args += ["--size", str(size_mb * mib), "--perms", "0777" if as_root else "0700"]
        args += ["--tmpfs", dest]
    # The root is a tmpfs without a size, which the command's user owns when
    # skillchat is not root: read-only, like everything not bound writable.
    args += ["--remount-ro", "/", "--chdir", cwd]
    return args


def limit_prefix(limits: Limits, *, prlimit: str, setpriv: str | None) -> list[str]:
    """The command's first programs inside the sandbox: drop to the sandbox user
    (with `setpriv`, as root only), then set the rlimits, then the shell."""
    prefix: list[str] = []
    if setpriv is not None:
        prefix += [
            setpriv,
            f"--reuid={SANDBOX_UID}",
            f"--regid={SANDBOX_UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ]
    mem = limits.memory_mb * 1024 * 1024
    size = limits.max_file_mb * 1024 * 1024
    prefix += [
        prlimit,
        f"--nproc={limits.max_processes}",
        f"--as={mem}",
        f"--fsize={size}",
        "--core=0",
        "--",
    ]
    return prefix
