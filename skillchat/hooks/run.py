"""Run one hook on the host, within its bounds, and read what it answered.

A hook is one shell line (`/bin/sh -c`, as Claude Code runs its hooks), started in
its folder in a session of its own, the event's JSON on its stdin. Bounds: its
`timeout`, and `MAX_OUTPUT_BYTES` of output on either stream; past either, its
whole process group is killed and the run says which (`stopped`), so the caller
says it in one line. Its environment is the user's, plus `SKILLCHAT_HOOK=1`: a
skillchat started inside a hook runs no hooks (a hook that runs `skillchat ask`
would otherwise fire itself without end), and `SKILLCHAT_PROJECT_DIR` (also as
`CLAUDE_PROJECT_DIR`, which Claude Code's hook scripts read).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.hooks.spec import Hook

MAX_OUTPUT_BYTES = 1_000_000  # of each stream; more stops the hook
INSIDE_HOOK = "SKILLCHAT_HOOK"  # set for a hook's process: skillchat there runs none


@dataclass(frozen=True)
class Ran:
    """How one run of a hook ended, and what it printed (each stream at most
    MAX_OUTPUT_BYTES)."""

    exit_code: int | None  # None when it was stopped
    stdout: str
    stderr: str
    stopped: str | None = None  # "timeout" | "output"

    def answer(self) -> dict[str, Any] | None:
        """Its stdout as Claude Code's JSON answer, when it is one object."""
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


def hook_env(project: Path) -> dict[str, str]:
    """The environment of a hook on the host: the user's, marked as a hook's."""
    return {
        **os.environ,
        INSIDE_HOOK: "1",
        "SKILLCHAT_PROJECT_DIR": str(project),
        "CLAUDE_PROJECT_DIR": str(project),
    }


def run_on_host(hook: Hook, event: bytes, env: Mapping[str, str]) -> Ran:
    """Run `hook` with `event` on its stdin; a failure to start is exit 127's."""
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", hook.command],
            cwd=hook.folder,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its group is killed as one; no Ctrl-C from the tty
        )
    except OSError as exc:
        return Ran(127, "", f"cannot start: {exc.strerror or exc}")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    feeder = threading.Thread(target=_feed, args=(proc.stdin, event), daemon=True)
    feeder.start()
    try:
        out, err, stopped = _collect(proc, time.monotonic() + hook.timeout_s)
    finally:
        if proc.poll() is None:
            _kill(proc)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    if stopped is None:
        # Its own process ended; what it left running in its group ends with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    text = (bytes(out).decode("utf-8", "replace"), bytes(err).decode("utf-8", "replace"))
    return Ran(None if stopped else proc.returncode, *text, stopped=stopped)


def _feed(stdin: Any, event: bytes) -> None:
    """Write the event and close stdin; a hook that never reads it is no error."""
    with contextlib.suppress(OSError):
        stdin.write(event)
    with contextlib.suppress(OSError):
        stdin.close()


def _collect(
    proc: subprocess.Popen[bytes], deadline: float
) -> tuple[bytearray, bytearray, str | None]:
    """Both streams until they close, the deadline passes or one is too long."""
    buffers = {"stdout": bytearray(), "stderr": bytearray()}
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")  # type: ignore[arg-type]
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")  # type: ignore[arg-type]
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return buffers["stdout"], buffers["stderr"], "timeout"
            for key, _ in sel.select(min(left, 1.0)):
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                buf = buffers[key.data]
                buf += data[: MAX_OUTPUT_BYTES - len(buf) + 1]
                if len(buf) > MAX_OUTPUT_BYTES:
                    del buf[MAX_OUTPUT_BYTES:]
                    return buffers["stdout"], buffers["stderr"], "output"
        left = deadline - time.monotonic()
        try:
            proc.wait(max(left, 0))
        except subprocess.TimeoutExpired:
            return buffers["stdout"], buffers["stderr"], "timeout"
    finally:
        sel.close()
    return buffers["stdout"], buffers["stderr"], None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
