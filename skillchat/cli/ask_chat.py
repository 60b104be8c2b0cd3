"""`ask`'s work, once its line is read (by Typer, cli/ask_cmd.py, or without it when
plain, cli/ask_line.py): the prompt, the chat opened, the question sent, the answer
on stdout and the usage line on stderr.

Start-up time is the product here, so this module imports no Typer and nothing
heavy: the engine, Rich and the backend's code are imported inside `ask_chat`, once
the command line is known to be valid. Errors are raised as `SkillchatError`s and
turned into one line and an exit code by cli/app.py.
"""

from __future__ import annotations

import gc
import os
import re
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from skillchat.cli.invocation import Invocation, consoles_of
from skillchat.cli.open_chat import open_chat, workspace_note
from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.cli.ask_line import AskLine
    from skillchat.config import Settings
    from skillchat.engine.emit import Listener
    from skillchat.engine.events import Usage
    from skillchat.engine.loop import Chat
    from skillchat.mcp.policy import McpConsent
    from skillchat.sandbox.command_tool import Consent
    from skillchat.sandbox.envs.provider import InstallRequest
    from skillchat.ui.stream_json import StreamPrinter


# The most stdin `ask` takes: a big diff or log fits; more would not fit a context.
MAX_STDIN_BYTES = 1_000_000


def _stdin_piped() -> bool:
    """stdin is a pipe or a file (`git diff | ...`, `< notes.md`), not a terminal and
    not /dev/null or another device: only then is there text to read."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _read_stdin() -> str:
    """All of stdin as UTF-8 text, within MAX_STDIN_BYTES; UsageError otherwise."""
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise UsageError(f"stdin is over {MAX_STDIN_BYTES:,} bytes: pass a smaller part")
    if b"\0" in data:
        raise UsageError("stdin is binary (it holds NUL bytes): pipe text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"stdin is not UTF-8 text (byte {exc.start})") from None


def _fenced(text: str) -> str:
    """`text` as a Markdown code block whose fence no backtick run inside can close."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def read_prompt(prompt: str | None) -> str:
    """The prompt: the argument; stdin for '-' or when only stdin is given; and with
    both (`git diff | skillchat ask "/commit-message write one"`), the argument then
    the piped text as a fenced block, as `llm` does."""
    if prompt == "-" or (prompt is None and not sys.stdin.isatty()):
        prompt = _read_stdin()
    elif prompt is None:
        raise UsageError("no prompt: skillchat ask 'QUESTION' (or pipe it on stdin)")
    elif _stdin_piped() and (piped := _read_stdin()).strip():
        prompt = f"{prompt}\n\n{_fenced(piped)}"
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def usage_line(usage: Usage | None, model: str) -> str | None:
    """`tokens: 12,400 in (11,900 cached) + 56 out = 12,456 · $0.0060 (the cache
    saved $0.0321)`: the input read from the provider's prompt cache said when any
    was, the cost only when known (counting cached tokens at the cache's price), and
    what the cache saved on `model`'s prices (or what writing it cost more, on a
    first turn)."""
    if usage is None:
        return None
    cached = f" ({usage.cached_tokens:,} cached)" if usage.cached_tokens else ""
    line = (
        f"tokens: {usage.prompt_tokens:,} in{cached} + {usage.completion_tokens:,} out "
        f"= {usage.total_tokens:,}"
    )
    if usage.cost is None:
        return line
    from skillchat.engine.pricing import cache_saving

    line += f" · ${usage.cost:.4f}"
    saved = cache_saving(model, usage)
    if saved is not None and saved >= 0.00005:
        line += f" (the cache saved ${saved:.4f})"
    elif saved is not None and saved <= -0.00005:
        line += f" (writing the cache cost ${-saved:.4f} more)"
    return line


def attach_all(chat: Chat, paths: list[str]) -> None:
    """`--attach` each path, before anything is sent: a file the user named and that
    cannot be read stops the command (exit 2) rather than being answered without."""
    from skillchat.errors import FileAccessError

    for path in paths:
        try:
            chat.attach(path)
        except FileAccessError as exc:
            raise UsageError(f"--attach {path}: {exc.message}") from None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is: the reply in flight ends as a
    Ctrl-C would end it (what arrived is written out and saved, marked
    interrupted), and `ask` exits 143 as a process ended by SIGTERM would."""


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While the block runs, SIGTERM (`kill`, `timeout`, a closing CI job) raises
    `Terminated` instead of ending the process where it stands, which would lose
    a reply held until its end (a pipe holds it) and leave the chat unsaved."""

    def terminated(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def collect_after_start() -> None:
    """The cyclic garbage collector, held off by cli/app.py while `ask` starts, back
    on as its first request leaves, with what the start made set aside (`gc.freeze`)
    so that no pass walks it again. Before, 65 passes walked a start's 25,000 objects
    for 648 freed (a few hundred cycles, now kept for the process's life) at 16 M
    instructions, 2% of the start with the 234 real skills."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def ask_chat(run: Invocation, line: AskLine) -> int:
    """Ask one question (`line`, `ask`'s arguments); the exit code: 0, or 130/143
    when interrupted or terminated (what arrived is out and saved). With
    `--output-format stream-json` every error is an event too, before cli/app.py
    says it on stderr."""
    if line.format() != "stream-json":
        return _ask(run, line, None)
    from skillchat.errors import SkillchatError
    from skillchat.ui.stream_json import StreamPrinter

    stream = StreamPrinter()
    try:
        return _ask(run, line, stream)
    except SkillchatError as exc:
        stream.failed(exc, exc.exit_code)
        raise


def _ask(run: Invocation, line: AskLine, stream: StreamPrinter | None) -> int:
    text = read_prompt(line.prompt)
    attach = line.attach
    opened = open_chat(
        run,
        line.options,
        allow_install=line.allow_install,
        needs_workspace=(
            "--attach needs a workspace: --workspace DIR, or `workspace` in the config"
            if attach
            else None
        ),
    )
    settings, folder, store, transcript = (
        opened.settings, opened.workspace, opened.store, opened.transcript,
    )  # fmt: skip
    from skillchat.engine.emit import ViewListener
    from skillchat.errors import StorageError
    from skillchat.sandbox.setup import flag_consent
    from skillchat.session import Session
    from skillchat.session_settings import load_registry
    from skillchat.ui import views
    from skillchat.ui.console import keys_unechoed, stdout_is_terminal

    consoles = consoles_of(run)  # this command's output: the views and its own lines
    warn = consoles.warn
    # A workspace the user did not name is said.
    if (note := workspace_note(settings, opened.sources["workspace"])) and stream:
        stream.notice(note)
    elif note:
        consoles.err.print(note, style="muted", markup=False, highlight=False, soft_wrap=True)
    registry = load_registry(settings)
    for problem in registry.problems:  # e.g. an installed skill changed since installed
        if stream is not None:
            stream.problem(problem.message, path=str(problem.path))
        else:
            warn(f"{problem.path}: {problem.message}")
    if stream is not None:
        stream.registry = registry
        stream.model = opened.target.model if opened.target is not None else settings.model.name
    if text.startswith("/"):  # only a `/name` can be a mistaken one: the module loads for one
        from skillchat.engine.invocation import unknown_name

        if mistake := unknown_name(text, registry):
            # Refused, not sent as text: a script's typo would pay for a wrong answer.
            raise UsageError(f"{mistake} (nothing was sent)")
    listeners: list[Listener] = []
    view: ViewListener
    if stream is not None:
        view = ViewListener()  # nothing on stderr: every event is on stdout
        listeners.append(stream)
    elif line.format() == "json":
        from skillchat.ui.json_report import JsonReport

        report = JsonReport()
        view = views.CardsView(consoles)
        listeners.append(report)
    elif stdout_is_terminal():
        view = views.TerminalView(consoles)
    else:
        view = views.PipeView(consoles)
    from skillchat.engine.emit import ForkEnded, Waiting

    forks: list[ForkEnded] = []  # the forked skills' runs, for the usage line
    listeners.append(lambda e: forks.append(e) if isinstance(e, ForkEnded) else None)
    listeners.append(lambda e: collect_after_start() if isinstance(e, Waiting) else None)

    def install_progress(
        request: InstallRequest,
    ) -> AbstractContextManager[Callable[[str], None]]:
        """A package install's steps as lines on stderr; ui/consent.py (the REPL's
        questions and cards) is imported only when a skill's packages are installed."""
        from skillchat.ui.consent import stderr_install_progress

        return stderr_install_progress(consoles.err, request)

    def consent() -> Consent:
        flags = flag_consent(settings.run, install_progress)
        return stream.consent(flags) if stream is not None else flags

    session = Session(
        settings,
        registry=registry,
        store=store,
        transcript=transcript,
        listeners=[view, *listeners],
        workspace=folder,
        consent=consent,
        mcp_consent=stream_mcp_consent(settings, stream) if stream is not None else None,
        target=opened.target,
        sources=opened.sources,
    )
    if stream is not None:
        stream.session, stream.model = session, session.target.model
    attach_all(session.chat, attach or [])
    try:
        with keys_unechoed(), sigterm_interrupts():
            result = session.send(text)
    except KeyboardInterrupt as stop:  # what was shown stays shown (the view flushed it)
        how = "terminated" if isinstance(stop, Terminated) else "interrupted"
        consoles.err.print(how, style="warning", markup=False, highlight=False)
        code = 143 if how == "terminated" else 130
        if stream is not None:
            stream.finish(how, code)
        return code
    finally:
        session.close()  # the MCP servers: stopped before the answer is reported
    recorder = session.recorder
    if stream is not None:
        if recorder and recorder.pending:  # raised, said as the `result`
            raise StorageError(f"the chat was not saved: {recorder.failure}")
        stream.finish("success", 0)
    elif line.format() == "json":
        from skillchat.ui.safe import json_text

        sys.stdout.write(json_text(report.report(session.target.model, session.chat_id)) + "\n")
    else:
        from skillchat.ui.fork_view import fork_tokens

        runs = [(fork.model, fork.summary) for fork in forks]
        parts = [
            usage_line(result.usage, session.target.model),
            *fork_tokens(runs),
            f"chat {session.chat_id}",
        ]
        said = " · ".join(filter(None, parts))
        # Never wrapped (Rich cuts a pipe's lines at 80): a script reads the chat id here.
        consoles.err.print(said, style="muted", markup=False, highlight=False, soft_wrap=True)
    if recorder and recorder.pending:  # the answer is out; a script must learn it is unsaved
        raise StorageError(f"the chat was not saved: {recorder.failure}")
    return 0


def stream_mcp_consent(settings: Settings, stream: StreamPrinter) -> Callable[[], McpConsent]:
    """The MCP calls' consent of `ask` (its flags), each question and answer said as
    stream-json events."""

    def consent() -> McpConsent:
        from skillchat.mcp.policy import flag_consent

        return stream.mcp_consent(flag_consent(settings.mcp))

    return consent
