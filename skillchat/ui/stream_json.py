"""`ask --output-format stream-json`: the turn as newline-delimited JSON events, one
line each, written and flushed as it happens (docs/stream-json.md is the schema).

A script reads stdout line by line: `init` first (the model, the skills served and
those left out with why, the MCP servers and their errors), then text deltas, tool
uses and results, consent asked and answered, forks started and ended, compaction,
notices and errors, and `result` last, whatever happened (its usage is the one the
`json` format's object has: both are added up by ui/json_report.py's `JsonReport`).
Every event has its `type`, its `seq` (0, 1, 2... in the order written) and the
chat's id.

The chat's id exists once its first message is saved, so the events before it
(notices while the MCP servers start) are held and written, after `init`, as soon as
it does, or at the latest when the first request leaves (a chat that could not be
saved has no id: null): a script is never told an id it cannot use yet. A fork's
own events carry its number (`fork`): the answer is rebuilt from the deltas that
have none.

Nothing here imports Rich (`init` goes out before the first request, which
nothing heavy may precede); text from outside (the model's, a tool's) goes through
`json_text`, which leaves no character a terminal would obey, and a tool's result
is cut at `MAX_RESULT_CHARS`, as the text mode shows a preview rather than all of it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from skillchat.engine.emit import (
    Compacted,
    Event,
    ForkEnded,
    ForkStarted,
    ForkStep,
    Notice,
    TextDelta,
    TextEnded,
    ToolFinished,
    ToolRecord,
    ToolStarted,
    UsageReported,
    Waiting,
)
from skillchat.ui.json_report import JsonReport, decoded
from skillchat.ui.safe import json_text

if TYPE_CHECKING:
    from skillchat.mcp.policy import McpConsent, McpRequest, McpVerdict
    from skillchat.sandbox.command_tool import Consent
    from skillchat.sandbox.run_request import RunRequest, Verdict
    from skillchat.session import Session
    from skillchat.skills.registry import Registry


class Decided(Protocol):
    """A consent's answer (a command's `Verdict`, an MCP call's `McpVerdict`)."""

    @property
    def kind(self) -> str: ...

    @property
    def reason(self) -> str: ...


Answer = TypeVar("Answer", bound=Decided)

# The most characters of one tool result an event carries (the model got all of it;
# `content_chars` says how much that was). A megabyte of a server's output is not
# a line a script should have to hold.
MAX_RESULT_CHARS = 64_000


class StreamPrinter:
    """A listener of the chat's events that writes them as JSON lines to `out`."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.report = JsonReport()  # the usage and answer `result` gives, as `json` does
        self.session: Session | None = None
        self.registry: Registry | None = None
        self.model = ""
        self._seq = 0
        self._held: list[dict[str, Any]] | None = []  # until the chat has an id
        self._lock = threading.Lock()

    # ----------------------------------------------------------- the events

    def __call__(self, event: Event) -> None:
        self.report(event)
        if self._held is not None and (self._chat_id() is not None or isinstance(event, Waiting)):
            self._release()  # saved (the recorder listens after this), or a request leaves
        match event:
            case ForkStep(fork, skill, _, inner):
                if (line := _line(inner)) is not None:
                    self._put({**line, "fork": fork, "skill": skill})
            case ForkStarted(fork, skill, model, task):
                self._put({"type": "fork_start", "fork": fork, "skill": skill, "model": model,
                           "task": task})  # fmt: skip
            case ForkEnded(fork, skill, model, _, summary):
                self._put({"type": "fork_end", "fork": fork, "skill": skill, "model": model,
                           **summary})  # fmt: skip
            case _:
                if (line := _line(event)) is not None:
                    self._put(line)

    def problem(self, message: str, *, path: str | None = None) -> None:
        """Something wrong that does not end the command (a skill that cannot load)."""
        self._put({"type": "error", "fatal": False, "message": message}
                  | ({"path": path} if path else {}))  # fmt: skip

    def notice(self, message: str) -> None:
        """A line the text mode writes on stderr (which workspace was taken)."""
        self._put({"type": "notice", "message": message, "level": "info"})

    def failed(self, exc: BaseException, exit_code: int) -> None:
        """The command ends on `exc`: an `error` event, then the `result`."""
        kind = type(exc).__name__
        self._put({"type": "error", "fatal": True, "message": str(exc), "error_type": kind})
        self.finish("error", exit_code, error=str(exc))

    def finish(self, subtype: str, exit_code: int, **more: Any) -> None:
        """The last event: how the turn ended, its answer, usage and cost per model
        (the `json` format's own fields), and the exit code that follows."""
        report = self.report.report(self.model, self._chat_id())
        report.pop("tool_calls")
        forks = report.pop("forks")
        self._put({"type": "result", "subtype": subtype, "is_error": subtype != "success",
                   "exit_code": exit_code, **report, "forks": len(forks), **more})  # fmt: skip
        self._release()

    # ---------------------------------------------------------- consent

    def consent(self, inner: Consent) -> StreamConsent:
        """`inner` (ask's flags) with each question and its answer as events."""
        return StreamConsent(inner, self)

    def mcp_consent(self, inner: McpConsent) -> Callable[[McpRequest], McpVerdict]:
        """The MCP calls' consent, said the same way."""

        def consent(request: McpRequest) -> McpVerdict:
            asked = {"tool": request.offered, "server": request.server,
                     "arguments": request.arguments, "reason": request.verdict.reason}  # fmt: skip
            return self.told(asked, lambda: inner(request))

        return consent

    def told(self, question: dict[str, Any], answer: Callable[[], Answer]) -> Answer:
        """A `consent_request` for `question` (naming the fork that asks: "digest #2"),
        `answer()`, its `consent_response`."""
        asker = self.session.questions.asker if self.session is not None else None
        self._put({"type": "consent_request", **question} | ({"asked_by": asker} if asker else {}))
        verdict = answer()
        self._put({"type": "consent_response", "tool": question["tool"],
                   "decision": verdict.kind, "reason": verdict.reason})  # fmt: skip
        return verdict

    # ---------------------------------------------------------- writing

    def _chat_id(self) -> str | None:
        return self.session.chat_id if self.session is not None else None

    def _put(self, line: dict[str, Any]) -> None:
        with self._lock:
            if self._held is not None:
                self._held.append(line)
            else:
                self._write(line)

    def _release(self) -> None:
        """`init`, then the events held until the chat had an id (once)."""
        with self._lock:
            if self._held is None:
                return
            held, self._held = self._held, None
            self._write(self._init())
            for line in held:
                self._write(line)

    def _write(self, line: dict[str, Any]) -> None:
        event = {"type": line.pop("type"), "seq": self._seq, "chat_id": self._chat_id(), **line}
        self._seq += 1
        # A lone surrogate (never from the engine, which replaces them) is written as
        # its JSON escape, so the line stays valid UTF-8 and parses back to it.
        text = json_text(event).encode("utf-8", "backslashreplace").decode("utf-8")
        self.out.write(text + "\n")
        self.out.flush()

    def _init(self) -> dict[str, Any]:
        """What the turn starts with: model, skills, tools offered, MCP servers."""
        from skillchat import __version__

        init: dict[str, Any] = {"type": "init", "version": __version__, "model": self.model}
        registry = self.session.registry if self.session is not None else self.registry
        if registry is not None:
            init["skills"] = registry.names()
            init["skills_left_out"] = [
                {"name": e.name, "path": str(e.path), "reason": e.reason, "why": e.summary()}
                for e in registry.excluded
            ]
        if self.session is not None:
            chat = self.session.chat
            init["tools"] = chat.toolbox.names() if chat.tools_enabled else []
            hub = self.session.mcp.hub
            servers = hub.servers if hub is not None else {}
            init["mcp_servers"] = [
                {"name": name, "status": state.state, "error": state.error or None,
                 "tools": len(state.tools)}
                for name, state in servers.items()
            ]  # fmt: skip
        return init


class StreamConsent:
    """A run_command consent that says each question and answer as events; its
    package installs go as `inner`'s do (none are asked: `ask` never prompts)."""

    def __init__(self, inner: Consent, printer: StreamPrinter) -> None:
        self.inner = inner
        self.printer = printer
        self.install_progress = getattr(inner, "install_progress", None)

    def __call__(self, request: RunRequest) -> Verdict:
        asked = {"tool": "run_command", "command": request.command, "skill": request.skill_name,
                 "network": request.network, "writes": request.writes,
                 "reason": request.verdict.reason}  # fmt: skip
        return self.printer.told(asked, lambda: self.inner(request))


def _line(event: Event) -> dict[str, Any] | None:
    """The line of one of a chat's events, None for those a script has no use for
    (a request going out, a message saved: the deltas and results say it)."""
    match event:
        case TextDelta(text):
            return {"type": "text_delta", "text": text}
        case TextEnded(how):
            return {"type": "text_end", "how": how}
        case ToolStarted(name, arguments, call_id):
            return {"type": "tool_use", "tool_use_id": call_id, "name": name,
                    "input": decoded(arguments)}  # fmt: skip
        case ToolFinished(record):
            return _result(record)
        case UsageReported(usage):
            return {"type": "usage", **asdict(usage)}
        case Notice(message, done):
            return {"type": "notice", "message": message, "level": "done" if done else "warning"}
        case Compacted(_, kept, info):
            return {"type": "compaction", "kept": kept, **info}
    return None


def _result(record: ToolRecord) -> dict[str, Any]:
    content = record.result.content
    line = {"type": "tool_result", "tool_use_id": record.call_id, "name": record.name,
            "is_error": record.result.is_error, "error_code": record.result.error_code,
            "synthetic": record.synthetic, "content": content[:MAX_RESULT_CHARS]}  # fmt: skip
    if len(content) > MAX_RESULT_CHARS:
        line |= {"truncated": True, "content_chars": len(content)}
    return line
