"""`skillchat ARGS` run inside the test's own process, as `llm`'s tests run `llm`.

Starting Python, importing the CLI and its SDKs costs far more than most commands
do, and the suite runs the CLI a few hundred times: where the process itself is not
what a test checks, `run_cli` runs `skillchat.cli.app.run` here instead and returns
what `subprocess.run` would have.

A run sees what a child process would see: the argv; `env` (a whole environment, as
`subprocess.run` takes it) applied to os.environ and `cwd` chdir'd to, both put back
afterwards; stdin a real pipe holding `input` (or /dev/null, or the given file), so
`isatty()`, `fileno()` and `fstat` answer as they do for a piped child; stdout and
stderr real files, decoded with universal newlines as `text=True` decodes them; the
exit code from the returned code or SystemExit; `timeout` raising TimeoutExpired.

What would outlive a child's exit is reset or checked around each run, so one run
cannot leak into the next: the sandbox probe's remembered answer (it depends on
PATH), tempfile's cached folder (it depends on TMPDIR). (Consoles need no reset: each
run makes its own, cli/common.py.) A run that leaves os.environ, the
working directory, a signal handler or a running thread behind fails the test: those
would be product bugs a subprocess hides.
"""

from __future__ import annotations

import io
import locale
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

# A child of these differs before a line of skillchat runs (how Python starts, what
# it imports first): a run that changes them must be a real subprocess.
START_UP_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
)
WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGCHLD)
# Variables a library sets when it is first imported (once per process, as in a
# child): litellm points tiktoken at its bundled tokenizers.
IMPORT_TIME_ENV = {"litellm": ("TIKTOKEN_CACHE_DIR",)}
# Threads that may outlive a run: the scripted server answers each connection on a
# thread of its own, alive while the client keeps the connection; litellm runs its
# success callbacks on a pool of workers it starts once and keeps, idle between calls.
LASTING_THREADS = ("process_request_thread", "litellm-logging_")


class _TimedOut(BaseException):
    """Raised into the run by its timer: a BaseException, so no `except Exception` in
    the product swallows it."""


def _reset_process_caches() -> None:
    from skillchat.sandbox import detect

    detect._cached = None
    tempfile.tempdir = None


@contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[dict[str, str]]:
    """os.environ replaced by `env` for the run (unchanged without one); restored after.
    Yields the environment the run started with, to compare with what it left."""
    before = dict(os.environ)
    if env is not None:
        # An environment without HOME sends the run to the account's real home (Python
        # and platformdirs fall back to it): the test's private one must be passed on.
        assert "HOME" in env, "env without HOME: pass {**os.environ, ...}"
        changed = [k for k in START_UP_VARIABLES if env.get(k) != before.get(k)]
        assert not changed, f"{changed} change interpreter start-up: use subprocess=True"
        os.environ.clear()
        os.environ.update(env)
    started = dict(os.environ)
    try:
        yield started
    finally:
        os.environ.clear()
        os.environ.update(before)


def _stdin(input: str | None, stdin: Any) -> IO[str]:
    """A text stdin over a real descriptor: a pipe holding `input`, /dev/null, or a
    duplicate of the given file's descriptor."""
    if input is not None:
        read, write = os.pipe()
        data = input.encode()

        def feed() -> None:
            with suppress(BrokenPipeError), open(write, "wb") as pipe:
                pipe.write(data)

        threading.Thread(target=feed, name="stdin-feed", daemon=True).start()
        raw: IO[bytes] = open(read, "rb")  # noqa: SIM115 - closed with the run
    elif stdin is None or stdin == subprocess.DEVNULL:
        # None would inherit the test runner's stdin; no test means that.
        raw = open(os.devnull, "rb")  # noqa: SIM115 - closed with the run
    else:
        raw = open(os.dup(stdin.fileno()), "rb")  # noqa: SIM115 - closed with the run
    return io.TextIOWrapper(raw, encoding="utf-8")


def _output(errors: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(tempfile.TemporaryFile(), encoding="utf-8", errors=errors)


def _text(stream: io.TextIOWrapper) -> str:
    """What `subprocess.run(text=True)` reads: locale-decoded, universal newlines."""
    stream.flush()
    raw = stream.buffer
    raw.seek(0)
    data = raw.read().decode(locale.getpreferredencoding(False))
    stream.close()
    return data.replace("\r\n", "\n").replace("\r", "\n")


@contextmanager
def _timer(seconds: float, interrupted: list[int]) -> Iterator[None]:
    """`_TimedOut` raised in the run after `seconds` (main thread only, as a child's
    timeout is measured by its parent's clock). A Ctrl-C meant for pytest is noted in
    `interrupted`: the CLI turns KeyboardInterrupt into exit 130, so the caller raises
    it again after the run and pytest still stops."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _TimedOut

    def ctrl_c(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, expire)
    previous_int = signal.signal(signal.SIGINT, ctrl_c)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)


def _exit_code(exc: SystemExit, stderr: IO[str]) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    stderr.write(f"{exc.code}\n")
    return 1


def run_cli(
    args: tuple[str, ...],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    stdin: Any = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m skillchat ARGS`, run in this process; see the module's docstring."""
    from skillchat.cli.app import run

    argv = [sys.executable, "-m", "skillchat", *args]
    streams = (sys.stdin, sys.stdout, sys.stderr)
    handlers = {sig: signal.getsignal(sig) for sig in WATCHED_SIGNALS}
    threads = set(threading.enumerate())
    unimported = [name for name in IMPORT_TIME_ENV if name not in sys.modules]
    home = os.getcwd()
    new_in, new_out, new_err = _stdin(input, stdin), _output("strict"), _output("backslashreplace")
    timed_out, interrupted = False, []
    with _environment(env) as started:
        _reset_process_caches()
        if cwd is not None:
            os.chdir(cwd)
        here = os.getcwd()
        sys.stdin, sys.stdout, sys.stderr = new_in, new_out, new_err
        try:
            with _timer(timeout, interrupted):
                try:
                    code = run(list(args))
                except SystemExit as exc:
                    code = _exit_code(exc, new_err)
        except _TimedOut:
            timed_out, code = True, -signal.SIGKILL
        finally:
            sys.stdin, sys.stdout, sys.stderr = streams
            left_env = dict(os.environ)
            left_cwd = os.getcwd()
            os.chdir(home)
            _reset_process_caches()
    new_in.close()
    out, err = _text(new_out), _text(new_err)
    if interrupted:
        raise KeyboardInterrupt
    if timed_out:
        raise subprocess.TimeoutExpired(argv, timeout, out, err)
    for name in unimported:
        if name in sys.modules:
            for var in IMPORT_TIME_ENV[name]:
                left_env.pop(var, None)
                started.pop(var, None)
    _check_leaks(started, left_env, here, left_cwd, handlers, threads)
    return subprocess.CompletedProcess(argv, code, out, err)


def _check_leaks(
    env: dict[str, str],
    left_env: dict[str, str],
    cwd: str,
    left_cwd: str,
    handlers: dict[signal.Signals, Any],
    threads: set[threading.Thread],
) -> None:
    """Fail on what a run left behind that a child's exit would have cleared."""
    changed = sorted(k for k in env.keys() | left_env.keys() if env.get(k) != left_env.get(k))
    assert not changed, f"the run changed os.environ: {changed}"
    assert left_cwd == cwd, f"the run left the working directory at {left_cwd}"
    moved = [sig.name for sig, handler in handlers.items() if signal.getsignal(sig) != handler]
    for sig, handler in handlers.items():
        signal.signal(sig, handler)
    assert not moved, f"the run left signal handlers changed: {moved}"
    running = [
        t
        for t in threading.enumerate()
        if t not in threads
        and t.name != "stdin-feed"
        and not any(name in t.name for name in LASTING_THREADS)
    ]
    for thread in running:
        thread.join(timeout=30)
    alive = [t.name for t in running if t.is_alive()]
    assert not alive, f"the run left threads running: {alive}"
