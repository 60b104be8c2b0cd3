"""How a stdio MCP server is started so that it never outlives skillchat.

The SDK starts the server in a session (and process group) of its own, so Ctrl-C at
the terminal does not reach it, and stops the whole group when the connection
closes. That covers every orderly end; a `kill -9` of skillchat runs no code at
all. So the server is started through a few lines of Python that set Linux's
parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL) and then `exec` the server's
command: the kernel kills the server when the thread that started it (the MCP
event loop's, alive as long as skillchat) dies, however it dies. A parent that
died before the signal was set is caught by comparing the parent's pid. Where
`prctl` is missing (not Linux) the server starts without the fail-safe.

The server's own children are its business: a server that forks workers and
dies leaves them to its process group, which the SDK signals on an orderly end.

**skillchat's environment** (its provider keys) is not the server's: the server
starts with `INHERITED` and its table's `env` only, and cannot read the rest from
`/proc/<skillchat>/environ` or skillchat's memory: `hide_environment` makes
skillchat's process not dumpable at start, which a process of the same user gets
past only with one of `PEEK_CAPS`, and the guard drops those (from the bounding,
inheritable and ambient sets) before it starts the server: that matters for root,
the only one who has them. Past that, an unsandboxed server is the user's own
program: as a user it reads the user's files and reaches the network; as root it
keeps root's other powers.
"""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from skillchat.errors import McpError

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream, Process

# What a stdio server inherits of skillchat's environment besides its table's `env`:
# the variables the SDK's own client passes on POSIX (a shell function's value, which
# starts with "()", never).
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")

# The capabilities that let a process of the same user read a non-dumpable one's
# environment (seen on Linux 6.18: each alone reads /proc/<pid>/environ, root's other
# capabilities do not): CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON. Only root has them.
PEEK_CAPS = (19, 21, 38)
STDERR_TAIL = 64 * 1024  # bytes of a server's stderr kept: its last words, for a failure

# prctl: PR_SET_PDEATHSIG (1) SIGKILL; then, with PR_CAPBSET_DROP (24), PR_CAP_AMBIENT
# (47) CLEAR_ALL (4) and capset on the inheritable set, no PEEK_CAPS after exec (below).
_GUARD = (
    "import ctypes,os,sys\n"
    "try:\n"
    "    libc = ctypes.CDLL(None, use_errno=True)\n"
    "    libc.prctl(1, 9, 0, 0, 0)\n"
    "    libc.prctl(47, 4, 0, 0, 0)\n"
    "    head, sets = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()\n"
    "    libc.capget(head, sets)\n"
    "    for cap in map(int, sys.argv[2].split(',')):\n"
    "        libc.prctl(24, cap, 0, 0, 0)\n"
    "        sets[2 + 3 * (cap // 32)] &= ~(1 << cap % 32)\n"
    "    libc.capset(head, sets)\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(1)\n"
    "try:\n"
    "    os.execvp(sys.argv[3], sys.argv[3:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot start {sys.argv[3]}: {exc.strerror}\\n')\n"
    "    os._exit(127)\n"
)


def hide_environment() -> None:
    """Make skillchat's process not dumpable (`PR_SET_DUMPABLE` 0), so that no child
    of the same user reads its environment or memory through /proc or ptrace (see
    above). Its children become dumpable again at exec, so the sandbox is unchanged;
    its own `/proc/self/fd` lookups (safe_io/walk.py) are the same thread group's,
    always allowed. Where `prctl` is missing (not Linux) nothing changes."""
    import ctypes

    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)


def guarded_command(command: str, args: tuple[str, ...]) -> tuple[str, list[str]]:
    """The program and arguments that start `command args` under the guard.

    McpError when `command` is not found (said before anything starts)."""
    found = shutil.which(command)
    if found is None:
        raise McpError(f"command not found: {command}")
    peek = ",".join(map(str, PEEK_CAPS))
    return sys.executable, ["-I", "-S", "-c", _GUARD, str(os.getpid()), peek, found, *args]


def server_env(configured: dict[str, str]) -> dict[str, str]:
    """The environment a stdio server starts with: `INHERITED`, then its table's."""
    base = {k: v for k in INHERITED if (v := os.environ.get(k)) is not None}
    return {k: v for k, v in base.items() if not v.startswith("()")} | configured


class StderrTail:
    """The last `STDERR_TAIL` bytes a server wrote on stderr, over its restarts: what
    a failure quotes. A server may write gigabytes there; only this much is kept."""

    def __init__(self, limit: int = STDERR_TAIL) -> None:
        self.limit = limit
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.limit:
            del self.data[: len(self.data) - self.limit]

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", "replace")


async def keep_tail(stream: ByteReceiveStream, tail: StderrTail) -> None:
    """Read a server's stderr to its end, chunk by bounded chunk, into `tail` (read
    all along: a server blocked on a full pipe would stop answering)."""
    import anyio

    with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async for chunk in stream:
            tail.add(chunk)


async def start_stdio(program: str, args: list[str], env: dict[str, str], cwd: Any) -> Process:
    """Start a stdio server as the SDK's client would (a session of its own, so the
    terminal's Ctrl-C does not reach it), with only anyio loaded: the hub starts it
    before it imports the SDK, so the server's own start-up (often a second or more
    of its imports) overlaps skillchat's import of the SDK instead of following it.
    Its stderr is a pipe for `keep_tail`. Called on the hub's thread, the
    parent-death guard's parent."""
    import subprocess

    import anyio

    return await anyio.open_process(
        [program, *args], env=env, stderr=subprocess.PIPE, cwd=cwd, start_new_session=True
    )
