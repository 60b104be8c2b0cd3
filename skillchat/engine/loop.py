"""The agent loop: one user message in, streamed replies and tool rounds, an answer out.

    chat = Chat(settings, registry, backend, view)
    result = chat.send("/calculator what is 17% of 230?")

`Chat.send` is the whole loop:

1. `/name rest` invoking a known skill: strip it; with tools, add a `get_skill` call
   and its result to the transcript (no round trip spent); without tools, put the
   SKILL.md body in the system prompt for this message only. Workspace files the
   user attached (`@path`, `attach`) go in with the message (engine/attachments.py).
2. Stream a reply from the backend (retried while nothing of it was shown); its text
   goes to the view as it arrives, its tool calls are assembled from deltas. The
   request carries what fits in `context_max_chars` (old tool results elided, then
   older turns compacted into a summary, engine/compaction.py, then the oldest
   turns left out); the reply is bounded in time (`reply_timeout`, in the
   backend), silence (`timeout`) and size (MAX_REPLY_CHARS), and a failure mid-reply
   keeps the text shown, marked.
3. No tool calls: that is the answer. A reply cut at its output limit runs none of
   its calls. Otherwise run every call (parallel ones in order, at most
   `max_tool_calls`: the rest are answered with an error), send the results back and
   go to 2, at most `max_tool_rounds` times.

The `View` decides what the user sees (terminal, pipe, JSON); the loop only reports.
Every message, once complete, is added with `_keep`, which hands it to the `Recorder`
too (chats/recorder.py saves it), so a crash loses at most the reply in flight.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from skillchat.config import Settings
from skillchat.engine.assemble import Assembler
from skillchat.engine.attachments import Attachments, inline
from skillchat.engine.backends.base import Backend
from skillchat.engine.compaction import Compactor, Outcome
from skillchat.engine.context_fit import ContextFit
from skillchat.engine.context_window import context_budget
from skillchat.engine.events import Reply, ToolCall, Usage
from skillchat.engine.invocation import Invocation, parse_invocation
from skillchat.engine.messages import (
    add_usage,
    assistant_message,
    clean_arguments,
    clean_text,
    clean_value,
    cut_notice,
    new_call_id,
    too_deep,
)
from skillchat.engine.recorder import Recorder
from skillchat.engine.retry import stream_with_retries
from skillchat.errors import (
    FileAccessError,
    ProviderError,
    ToolRoundLimit,
    UsageError,
)
from skillchat.prompt import InjectedSkill, build_catalog, system_prompt
from skillchat.safe_io.read import FileText
from skillchat.skills.registry import Registry
from skillchat.tools.base import ToolContext, ToolResult
from skillchat.tools.context import ContextLedger
from skillchat.tools.run_command import RUN_COMMAND, CommandRunner
from skillchat.tools.skill_tools import GET_SKILL, GetSkill
from skillchat.tools.toolbox import Toolbox
from skillchat.tools.workspace_tools import READ_WORKSPACE_FILE, ReadWorkspaceFile
from skillchat.workspace.files import Workspace

TextEnd = Literal["answer", "narration", "interrupted", "failed"]
INTERRUPTED_MARK = "[interrupted]"
CUT_MARK = "[cut off]"
# Characters of text and arguments one reply may carry: above any model's output
# limit (128k tokens is ~500k characters), far below what would exhaust memory.
MAX_REPLY_CHARS = 1_000_000


@dataclass(frozen=True)
class ToolRecord:
    """One tool call and its result, for cards and `--json`."""

    name: str
    arguments: str  # the raw JSON text the model sent
    result: ToolResult
    synthetic: bool = False  # added by skillchat (`/name`, attachments), not the model


@dataclass
class TurnResult:
    """What one `send` produced."""

    answer: str
    tool_calls: list[ToolRecord] = field(default_factory=list)
    usage: Usage | None = None  # summed over the turn's requests; None if never sent
    requests: int = 0
    attached: list[FileText] = field(default_factory=list)  # workspace files sent with it


class View(Protocol):
    """Where the loop reports what happens; every method must return quickly."""

    def waiting(self, tools: bool) -> None:
        """A request is out and nothing of its reply has arrived yet; `tools` says
        whether the reply may call tools (so whether its text may turn out to be
        narration rather than the answer)."""

    def text(self, chunk: str) -> None:
        """A piece of the reply's text, as it arrives."""

    def end_text(self, how: TextEnd) -> None:
        """The reply's text is complete: the answer, narration before tool calls, or cut."""

    def tool(self, record: ToolRecord) -> None:
        """A tool call ran (or was added for `/name`)."""

    def notice(self, message: str) -> None:
        """A warning or progress line for the user (retries, a cut catalog)."""


class QuietView:
    """A view that shows nothing (tests, `--json` without cards)."""

    def waiting(self, tools: bool) -> None:
        pass

    def text(self, chunk: str) -> None:
        pass

    def end_text(self, how: TextEnd) -> None:
        pass

    def tool(self, record: ToolRecord) -> None:
        pass

    def notice(self, message: str) -> None:
        pass


def _cleaned(result: ToolResult) -> ToolResult:
    """`result` with lone surrogates (a name the model sent, echoed) made printable."""
    return replace(result, content=clean_text(result.content), preview=clean_text(result.preview))


class Chat:
    """One conversation: the transcript, the activated skills, the loop."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        backend: Backend,
        view: View | None = None,
        *,
        workspace: Workspace | None = None,
        recorder: Recorder | None = None,
        commands: CommandRunner | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.backend = backend
        self.view: View = view or QuietView()
        self.recorder = recorder
        self.messages: list[dict[str, Any]] = []
        self.context = ToolContext(settings, registry, workspace, commands=commands)
        self.toolbox = Toolbox(self.context)
        self.window = ContextFit(self.context.ledger, lambda message: self.view.notice(message))
        self.attachments = (
            Attachments(self.context, self.view.notice) if workspace is not None else None
        )
        self.use_registry(registry)

    @property
    def activated(self) -> list[str]:
        """The skills loaded in this chat, in order (the tools' context holds them)."""
        return self.context.activated

    @property
    def ledger(self) -> ContextLedger:
        return self.context.ledger

    def use_registry(self, registry: Registry) -> None:
        """Serve `registry`'s skills from the next message on (`/reload`); the
        transcript and what the ledger knows is in context stay."""
        self.registry = registry
        self.context.registry = registry
        self.catalog = build_catalog(registry, self.settings.catalog_max_chars)
        self.context.catalog_incomplete = self.catalog is not None and self.catalog.incomplete
        # The toolbox offers only what this chat has (no skills, no skill tools).
        self.schemas = self.toolbox.schemas()
        self.tools_enabled = self.settings.tools and bool(self.schemas)
        if self.catalog is not None and (warning := self.catalog.warning()):
            self.view.notice(warning)
        if left := registry.left_out():
            many = f"{len(left)} skills" if len(left) > 1 else "1 skill"
            self.view.notice(f"{many} left out: `skillchat skills list` says why")

    def restore(self, messages: list[dict[str, Any]], activated: Sequence[str]) -> None:
        """Go on with a saved chat: its transcript and activated skills. The ledger
        stays empty: stored get_skill results are stubs, their content is not here."""
        self.messages = list(messages)
        self.context.activated[:] = activated

    # ------------------------------------------------------------------ the loop

    def send(self, text: str) -> TurnResult:
        """Answer one user message, running tool rounds until the model answers."""
        result = TurnResult(answer="")
        invocation = parse_invocation(text, self.registry.skills)
        if invocation and not self.registry.skills[invocation.skill].user_invocable:
            self.view.notice(
                f"/{invocation.skill} is not for direct use (user-invocable: false in its "
                "SKILL.md): the message is sent as written"
            )
            invocation = None
        result.attached = self.attachments.take(text) if self.attachments else []
        content = invocation.message if invocation else text
        if result.attached and not self.tools_enabled:
            content = inline(result.attached, content)
        self._keep({"role": "user", "content": content})
        injected = None
        if invocation and self.tools_enabled:
            result.tool_calls.append(self._activate(invocation))
        elif invocation:
            injected = self._inject(invocation)
        if result.attached:
            result.tool_calls += self._attached(result.attached)
        system = self._system(injected)
        tools = self.schemas if self.tools_enabled else None
        limit = self.settings.max_tool_rounds
        may_compact = self.settings.auto_compact
        for round_no in range(limit + 1):
            self.window.fit(system, self.messages, self._budget())
            if may_compact and not self.window.fits(system, self.messages, self._budget()):
                may_compact = False  # once a turn: a failed summary is not asked again
                self.compact(system, auto=True)
            reply = self._request(system, tools)
            result.requests += 1
            result.usage = add_usage(result.usage, reply.usage)
            if reply.finish_reason == "length":
                self.view.notice(cut_notice(reply, self.settings.max_tokens))
                reply.tool_calls = []  # possibly cut mid-JSON: never run as if complete
            if not reply.tool_calls:
                self._keep(assistant_message(reply.text, []), usage=reply.usage)
                result.answer = reply.text
                return result
            if round_no == limit:
                if reply.text:
                    self._keep(assistant_message(reply.text, []), usage=reply.usage)
                raise ToolRoundLimit(
                    f"the model still wanted tools after {limit} tool rounds "
                    "(max_tool_rounds): raise it in the config, or ask a narrower question"
                )
            result.tool_calls += self._run_tools(reply)
        raise AssertionError("unreachable: the loop returns or raises")

    def _system(self, injected: InjectedSkill | None = None) -> str | None:
        """This message's system prompt (`injected`: a `/name` body with tools off)."""
        workspace = self.context.workspace.name if self.context.workspace else None
        return system_prompt(
            self.catalog,
            tools=self.tools_enabled,
            activated=self.activated,
            injected=injected,
            workspace=workspace,
            tool_rules=self.toolbox.prompt_rules() if self.tools_enabled else (),
            commands=self.tools_enabled and RUN_COMMAND in self.toolbox.names(),
        )

    def compact(self, system: str | None = None, *, auto: bool = False) -> Outcome | None:
        """Replace the older turns by the model's summary and re-attach the activated
        skills (engine/compaction.py); None, said to the view, when nothing changed.
        Ctrl-C during the summary request leaves the chat as it was."""
        compactor = Compactor(self.settings, self.backend, self.context, self.view.notice)
        outcome = compactor.compact(
            self.messages,
            system if auto else self._system(),
            self._budget(),
            tools=self.tools_enabled,
            saver=self.recorder,
            auto=auto,
        )
        if outcome is not None:
            self.window.left_out = 0
        return outcome

    def _budget(self) -> int:
        """The request's character budget: `context_max_chars`, or the model's window
        when the user did not set it (engine/context_window.py)."""
        return context_budget(self.settings, self.backend.context_window, self.messages)

    def _request(self, system: str | None, tools: list[dict[str, Any]] | None) -> Reply:
        """Stream one reply into the view. On Ctrl-C or a failure mid-reply (deadline,
        idle timeout, size limit, a cut stream) the text shown is kept, marked."""
        messages = self.window.outgoing(system, self.messages, self._budget())
        assembler = Assembler()
        how: TextEnd = "failed"
        try:
            self.view.waiting(tools is not None)
            deltas = stream_with_retries(
                lambda: self.backend.stream(messages, tools),
                max_retries=self.settings.max_retries,
                on_retry=self._on_retry,
            )
            for delta in deltas:
                piece = assembler.add(delta)
                if piece:
                    self.view.text(piece)
                if assembler.size > MAX_REPLY_CHARS:
                    deltas.close()
                    raise ProviderError(
                        f"the reply passed {MAX_REPLY_CHARS:,} characters: stopped, "
                        "keeping what arrived"
                    )
            reply = assembler.reply()
            how = "narration" if reply.tool_calls else "answer"
            return reply
        except KeyboardInterrupt:
            how = "interrupted"
            raise
        finally:
            if how in ("failed", "interrupted") and (shown := assembler.reply().text):
                mark = INTERRUPTED_MARK if how == "interrupted" else CUT_MARK
                message = assistant_message(f"{shown}\n\n{mark}", [])
                self._keep(message, interrupted=True)
            self.view.end_text(how)

    def _keep(
        self, message: dict[str, Any], *, interrupted: bool = False, usage: Usage | None = None
    ) -> None:
        """Add a complete message to the transcript, and to the recorder."""
        message = clean_value(message)
        self.messages.append(message)
        if self.recorder is not None:
            self.recorder.message(message, interrupted=interrupted, usage=usage)

    def _on_retry(self, attempt: int, delay: float, error: ProviderError) -> None:
        of = self.settings.max_retries
        self.view.notice(f"{error}; retrying in {delay:.1f}s ({attempt}/{of})")

    def _run_tools(self, reply: Reply) -> list[ToolRecord]:
        """Run every call of `reply` and add it with its results to the transcript.

        All or nothing: a Ctrl-C midway leaves the transcript (and what the ledger
        believes is in context) as it was, so the chat stays valid.
        """
        records: list[ToolRecord] = []
        reply.tool_calls = [
            replace(c, arguments=clean_arguments(c.arguments)) for c in reply.tool_calls
        ]
        limit = self.settings.max_tool_calls
        if len(reply.tool_calls) > limit:
            self.view.notice(
                f"the model made {len(reply.tool_calls)} tool calls in one reply: the first "
                f"{limit} ran, the rest were answered with an error (max_tool_calls)"
            )
        try:
            for n, call in enumerate(reply.tool_calls):
                arguments = call.arguments
                if n >= limit:
                    result = self._refused(
                        call.name,
                        "TOO_MANY_CALLS",
                        f"not run: at most {limit} tool calls per reply; make this call "
                        "again in a later round",
                    )
                elif too_deep(arguments):
                    arguments = "(arguments nested too deeply)"
                    result = self._refused(
                        call.name, "INVALID_ARGUMENT", "arguments are nested too deeply"
                    )
                else:
                    result = _cleaned(self.toolbox.run(call.name, arguments))
                self._took(call.id, result)
                records.append(ToolRecord(call.name, arguments, result))
        except BaseException:
            for call in reply.tool_calls:
                self.ledger.forget(call.id)
            raise
        self._keep(assistant_message(reply.text, reply.tool_calls), usage=reply.usage)
        for call, record in zip(reply.tool_calls, records, strict=True):
            self._keep({"role": "tool", "tool_call_id": call.id, "content": record.result.content})
            self.view.tool(record)
        return records

    def _refused(self, name: str, code: str, message: str) -> ToolResult:
        """The error result of a call skillchat would not run, in that tool's own shape
        (an unknown tool's the same way: it is answered as unknown when it runs)."""
        tool = self.toolbox.get(name)
        if tool is None:
            content = json.dumps({"error": message, "error_code": code})
            return ToolResult(content, is_error=True, error_code=code, preview=message)
        return tool.error(code, message)

    def _took(self, call_id: str, result: ToolResult) -> None:
        """Note what a result put into context and which skill it activated."""
        if result.context_key is not None:
            self.ledger.add(call_id, result.context_key)
        if result.activated and result.activated not in self.activated:
            self.activated.append(result.activated)

    # ------------------------------------------------------------- invocation

    def _activate(self, invocation: Invocation) -> ToolRecord:
        """`/name`: a get_skill call and its result, as if the model had made it."""
        call = ToolCall(new_call_id(), GET_SKILL, json.dumps({"skill_name": invocation.skill}))
        result = GetSkill().load(self.context, invocation.skill, arguments=invocation.rest)
        self._took(call.id, result)
        self._keep(assistant_message("", [call]))
        self._keep({"role": "tool", "tool_call_id": call.id, "content": result.content})
        record = ToolRecord(call.name, call.arguments, result, synthetic=True)
        self.view.tool(record)
        return record

    def attach(self, path: str) -> FileText:
        """Queue a workspace file for the next message (`/attach`, `--attach`).

        Raises FileAccessError when it cannot be read, UsageError without a workspace.
        """
        if self.attachments is None:
            raise UsageError(
                "attaching files needs a workspace: --workspace DIR, or `workspace` in the config"
            )
        return self.attachments.add(path)

    def _attached(self, files: list[FileText]) -> list[ToolRecord]:
        """Attached files as `read_file` calls and results (with tools), or as records
        of the blocks already inlined in the user message (without): either way in
        the ledger, and shown as cards."""
        calls = [
            ToolCall(new_call_id(), READ_WORKSPACE_FILE, json.dumps({"path": f.path}))
            for f in files
        ]
        results = [ReadWorkspaceFile.result(f) for f in files]
        if self.tools_enabled:
            self._keep(assistant_message("", calls))
        records = []
        for call, result in zip(calls, results, strict=True):
            self._took(call.id, result)
            if self.tools_enabled:
                self._keep({"role": "tool", "tool_call_id": call.id, "content": result.content})
            records.append(ToolRecord(call.name, call.arguments, result, synthetic=True))
            self.view.tool(records[-1])
        if self.recorder is not None and self.context.workspace is not None:
            self.recorder.attached(str(self.context.workspace.root), files)
        return records

    def _inject(self, invocation: Invocation) -> InjectedSkill | None:
        """`/name` without tools: the body goes into this request's system prompt."""
        try:
            body = GetSkill.read(self.context, invocation.skill, invocation.rest)[3]
        except FileAccessError as exc:
            self.view.notice(f"cannot load skill '{invocation.skill}': {exc.message}")
            return None
        return InjectedSkill(invocation.skill, body)

    # ---------------------------------------------------------- context edits

    def elide_tool_result(self, call_id: str) -> bool:
        """Take a tool result's content out of the context: it will be served again
        if asked for. False when there is no such result."""
        for message in self.messages:
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                self.window.elide(message)
                return True
        return False
