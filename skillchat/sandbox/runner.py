"""Run one shell command line in a fresh bubblewrap sandbox, and only there.

Each run is its own sandbox: new user, pid, ipc, uts (and, unless allowed,
network) namespaces. bubblewrap's pid 1 exits when the command does, and the
kernel then kills every process left in the namespace, so a daemon a script
starts dies with it; killing bubblewrap (timeout, output flood, Ctrl-C) does the
same, through `--die-with-parent`.

As root, bubblewrap's `--uid` would still map to root outside, where
RLIMIT_NPROC does not apply and a fork bomb could take the machine. So skillchat
writes the namespace's maps itself (`--userns-block-fd`): uid 0 inside is root for
bubblewrap's own setup (it can bind folders under /root), and the command then
drops to uid 1000 inside, which is nobody (65534) outside, with no capabilities.
Either way the command cannot make a user namespace of its own (where it would have
every capability again): `--disable-userns` as a user, `user.max_user_namespaces`
set to 0 in the sandbox's namespace as root.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.errors import SandboxFailure
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.layout import (
    BASE_ENV,
    SANDBOX_UID,
    SandboxSpec,
    bwrap_args,
    etc_files,
    limit_prefix,
)
from skillchat.sandbox.protect import make_mount_points, remove_mount_points
from skillchat.sandbox.written import notes, snapshot

NOBODY = 65534
KILL_WAIT_S = 2.0
OutputSink = Callable[[str, str], None]  # (stream name "stdout"|"stderr", text)


@dataclass
class Outcome:
    """What a run gave: tails of both streams and how it ended."""

    exit_code: int | None  # None when skillchat stopped it
    stdout: str
    stderr: str
    truncated: bool
    duration_ms: int
    files_written: list[str] = field(default_factory=list)
    stopped: str | None = None  # "timeout" | "output_limit" | "interrupted"
    notes: list[str] = field(default_factory=list)  # what the model should know too


class _Tail:
    """The last `keep` bytes of a stream, and how many came in all."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.buf = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        if len(self.buf) > 2 * self.keep:
            del self.buf[: len(self.buf) - self.keep]

    def text(self) -> str:
        return bytes(self.buf[-self.keep :]).decode("utf-8", errors="replace")


def run_in_sandbox(
    tools: Tools,
    spec: SandboxSpec,
    command: str,
    *,
    cwd: str | None = None,
    timeout_s: float | None = None,
    extra_env: Mapping[str, str] | None = None,
    on_output: OutputSink | None = None,
) -> Outcome:
    """Run `command` (one shell line) in the sandbox `spec` describes.

    Raises SandboxFailure if the sandbox could not be started. A KeyboardInterrupt
    while it runs kills the whole sandbox and is raised again.
    """
    as_root = os.geteuid() == 0
    limits = spec.limits
    _prepare_scratch(spec.scratch, as_root)
    watched = [spec.scratch] + (
        [spec.workspace] if spec.writable_workspace and spec.workspace else []
    )
    before = snapshot(watched, limits)
    made = make_mount_points(spec.workspace) if len(watched) > 1 and spec.workspace else []
    try:
        outcome = _start_and_collect(
            tools,
            spec,
            command,
            cwd=cwd or spec.default_cwd(),
            timeout=limits.timeout_s if timeout_s is None else timeout_s,
            env={**BASE_ENV, **(extra_env or {})},
            on_output=on_output,
            as_root=as_root,
        )
    finally:
        remove_mount_points(made)
    if outcome.exit_code is not None and outcome.exit_code != 0 and _setup_failed(outcome):
        raise SandboxFailure(outcome.stderr.strip().splitlines()[-1])
    after = snapshot(watched, limits)
    outcome.files_written = after.changed_since(before, _mounts(spec))
    outcome.notes = notes(after, outcome.files_written, spec.scratch, limits)
    return outcome


def _start_and_collect(
    tools: Tools,
    spec: SandboxSpec,
    command: str,
    *,
    cwd: str,
    timeout: float,
    env: Mapping[str, str],
    on_output: OutputSink | None,
    as_root: bool,
) -> Outcome:
    """Start bubblewrap and read the run to its end.

    bubblewrap starts with the command's environment only, and reads its options
    from a memfd (`--args`): its pid 1 inside keeps its environment and command
    line in /proc/1, readable by the command, so neither may hold a key or a host
    path. As root, its `--userns-block-fd` is fd 0, the command's stdin: bubblewrap
    never closes that fd in the sandbox, so any other number would be inherited by
    the command; fd 0 is closed here once the maps are written, and reads as empty.
    """
    fds: dict[str, int] = {}
    to_close: list[int] = []
    try:
        for path, content in etc_files(spec.network).items():
            fds[path] = _memfd(content.encode())
            to_close.append(fds[path])
        info_r, info_w = os.pipe()
        to_close += [info_r, info_w]
        options = ["--info-fd", str(info_w)]
        block_r = block_w = -1
        if as_root:
            block_r, block_w = os.pipe()
            to_close += [block_r, block_w]
            options += ["--userns-block-fd", "0"]
        options += bwrap_args(spec, cwd=cwd, data_fds=fds, as_root=as_root)
        args_fd = _memfd(b"\0".join(o.encode() for o in options))
        to_close.append(args_fd)
        prefix = limit_prefix(
            spec.limits, prlimit=tools.prlimit, setpriv=tools.setpriv if as_root else None
        )
        passed = [*fds.values(), info_w, args_fd]
        start = time.monotonic()
        proc = subprocess.Popen(
            [tools.bwrap, "--args", str(args_fd), "--", *prefix, tools.shell, "-c", command],
            env=dict(env),
            stdin=block_r if as_root else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=tuple(passed),
            start_new_session=True,  # no controlling terminal, no Ctrl-C from the tty
        )
        sandbox = _Running(proc)
        try:
            for fd in passed + ([block_r] if as_root else []):  # the child has them
                os.close(fd)
                to_close.remove(fd)
            init_pid = _child_pid(proc, info_r)
            sandbox.attach(init_pid)
            if as_root:
                _map_user_namespace(init_pid)
                _forbid_nested_user_namespaces(tools, init_pid)
                os.write(block_w, b"1")
                os.close(block_w)
                to_close.remove(block_w)
            outcome = _collect(
                sandbox,
                spec.limits.max_output_bytes,
                spec.limits.stop_after_bytes,
                start + timeout,
                on_output,
            )
        except BaseException:
            sandbox.kill()
            raise
    finally:
        for fd in to_close:
            with contextlib.suppress(OSError):
                os.close(fd)
    outcome.duration_ms = int((time.monotonic() - start) * 1000)
    return outcome


def _memfd(data: bytes) -> int:
    """An fd holding `data`, read from its start (close-on-exec unless passed)."""
    fd = os.memfd_create("skillchat", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _prepare_scratch(scratch: Path, as_root: bool) -> None:
    """The scratch folder exists, is private (0700; a folder made on the way is made
    0700, which the umask can only narrow), and the command's user (nobody, as root)
    can write it. Only the scratch folder itself is ever chmodded: its parent may be
    a folder skillchat did not make (a temporary folder's parent is `/tmp`, which a
    chmod to 0700 takes from every other user of the machine)."""
    scratch.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # its own mode, if made
    scratch.mkdir(exist_ok=True, mode=0o700)
    if scratch.stat().st_mode & 0o077:
        scratch.chmod(0o700)
    if as_root and scratch.stat().st_uid != NOBODY:
        os.chown(scratch, NOBODY, NOBODY)


def _child_pid(proc: subprocess.Popen[bytes], info_r: int) -> int:
    """The pid of bubblewrap's child, the sandbox's pid 1, from `--info-fd`."""
    data = b""
    while True:
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            continue
    proc.wait()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    raise SandboxFailure(err.strip() or "bubblewrap exited before it started")


def _forbid_nested_user_namespaces(tools: Tools, pid: int) -> None:
    """Set `user.max_user_namespaces` to 0 in the sandbox's user namespace, before
    the command starts: what `--disable-userns` does for a user, which bubblewrap
    does not combine with `--userns-block-fd`. A nested namespace would give the
    command every capability over its own mounts again. Only a process with
    CAP_SYS_RESOURCE in that namespace may raise it back, and the command has none
    (nor a writable /proc/sys)."""
    assert tools.nsenter is not None
    write = "echo 0 > /proc/sys/user/max_user_namespaces"
    try:
        done = subprocess.run(
            [tools.nsenter, f"--target={pid}", "--user", "--", tools.shell, "-c", write],
            env={"PATH": BASE_ENV["PATH"]},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxFailure(f"cannot forbid nested user namespaces: {exc}") from exc
    if done.returncode != 0:
        raise SandboxFailure(f"cannot forbid nested user namespaces: {done.stderr.strip()}")


def _map_user_namespace(pid: int) -> None:
    """Write the maps of bubblewrap's new user namespace: root stays root for its
    setup; the command's uid is nobody outside."""
    mapping = f"0 0 1\n{SANDBOX_UID} {NOBODY} 1\n"
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(mapping)


class _Running:
    """A started sandbox: bubblewrap, and a pidfd of its namespace's pid 1 once known
    (a pidfd, not the pid: a pid that has exited may be reused by anyone)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pidfd: int | None = None

    def attach(self, init_pid: int) -> None:
        with contextlib.suppress(OSError):  # already gone: nothing left to kill
            self.pidfd = os.pidfd_open(init_pid)

    def kill(self) -> None:
        """Kill bubblewrap and its pid 1, and wait (briefly) until the namespace is
        empty: the kernel kills every other process in it when pid 1 dies. Also run
        after a normal exit: bubblewrap reports the command's exit before its pid 1
        has finished, and a daemon the command left must not outlive the call."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.pidfd is None:
            return
        try:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            select.select([self.pidfd], [], [], KILL_WAIT_S)  # readable once it exited
        finally:
            os.close(self.pidfd)
            self.pidfd = None


def _collect(
    sandbox: _Running,
    keep: int,
    stop_after: int,
    deadline: float,
    on_output: OutputSink | None,
) -> Outcome:
    """Read both streams until they close, the deadline passes or output floods."""
    proc = sandbox.proc
    assert proc.stdout is not None and proc.stderr is not None
    tails = {"stdout": _Tail(keep), "stderr": _Tail(keep)}
    decoders = {n: codecs.getincrementaldecoder("utf-8")(errors="replace") for n in tails}
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    stopped: str | None = None
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "timeout"
                break
            for key, _ in sel.select(min(left, 0.5)):
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                tails[key.data].add(data)
                if on_output is not None:
                    on_output(key.data, decoders[key.data].decode(data))
            if tails["stdout"].total + tails["stderr"].total > stop_after:
                stopped = "output_limit"
                break
    finally:
        sel.close()
    try:
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic())) if not stopped else None
    except subprocess.TimeoutExpired:
        code, stopped = None, "timeout"
    sandbox.kill()  # whatever the command left behind goes too
    proc.stdout.close()
    proc.stderr.close()
    truncated = any(t.total > t.keep for t in tails.values()) or stopped == "output_limit"
    return Outcome(
        exit_code=code,
        stdout=tails["stdout"].text(),
        stderr=tails["stderr"].text(),
        truncated=truncated,
        duration_ms=0,
        stopped=stopped,
    )


def _setup_failed(outcome: Outcome) -> bool:
    """bubblewrap's own errors ("bwrap: ...") end the run before the command starts."""
    lines = outcome.stderr.strip().splitlines()
    return bool(lines) and lines[-1].startswith("bwrap: ") and not outcome.stdout


def _mounts(spec: SandboxSpec) -> dict[Path, str]:
    """Host folder -> where the command sees it, to name written files as it does."""
    out = {spec.scratch: "/scratch"}
    if spec.workspace is not None:
        out[spec.workspace] = "/workspace"
    return out
