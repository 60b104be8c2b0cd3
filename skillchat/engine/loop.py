"""The agent loop: one user message in, streamed replies and tool rounds, an answer out.

    chat = Chat(settings, registry, backend, view, recorder)   # listeners of its events
    result = chat.send("/calculator what is 17% of 230?")

`Chat.send` is request → assemble → run tools → repeat:

1. The chat's steps (engine/turn.py; `chat_steps`, made afresh for each chat)
   see the message first: `/name` activation (steps/activation.py) and attached
   files (steps/attach.py) shape it and add what goes in with it; then the user
   message is added, and the `paths` gate (steps/paths.py) settles the catalog.
2. Before each request, fitting (steps/fitting.py) and automatic compaction
   (steps/compaction.py) make the transcript fit the context budget; then one reply
   is streamed and assembled (engine/request.py), and the steps see it: a reply cut
   at its output limit runs none of its calls (steps/cut.py).
3. No tool calls: that is the answer. Otherwise every call runs
   (engine/run_tools.py) and the steps see each as it is added (a skill's own
   model: steps/skill_model.py, given by the session); the results go back and the
   loop goes to 2, at most `max_tool_rounds` times.

The loop only emits events (engine/emit.py): the terminal views show them, the
chat recorder saves every complete message as it is added (`keep`), so a crash
loses at most the reply in flight. The chat's settings and registry live in its
`ToolContext`, the one copy the tools read too: `/model` and `/reload` replace
them there (`use_settings`, `use_registry`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillchat.config import Settings
from skillchat.engine.activated import with_activated_note
from skillchat.engine.attachments import Attachments
from skillchat.engine.backends.base import Backend
from skillchat.engine.context_fit import ContextFit
from skillchat.engine.context_window import context_budget
from skillchat.engine.emit import (
    Emitter,
    Listener,
    MessageAdded,
    ToolFinished,
    ToolRecord,
    TurnFailed,
    UsageReported,
)
from skillchat.engine.events import Usage
from skillchat.engine.images import takes_images
from skillchat.engine.messages import add_usage, assistant_message, clean_value
from skillchat.engine.request import stream_reply
from skillchat.engine.run_tools import run_tools
from skillchat.engine.steps.activation import Activation
from skillchat.engine.steps.attach import AttachFiles
from skillchat.engine.steps.compaction import AutoCompaction
from skillchat.engine.steps.cut import CutReply
from skillchat.engine.steps.fitting import Fitting
from skillchat.engine.steps.paths import PathsGate
from skillchat.engine.turn import Step, Turn, TurnResult
from skillchat.errors import ProviderError, SkillchatError, ToolRoundLimit, UsageError
from skillchat.prompt import InjectedSkill, build_catalog, system_prompt
from skillchat.safe_io.read import FileText
from skillchat.skills.left_out_seen import first_time
from skillchat.skills.registry import Registry
from skillchat.tools.base import Tool, ToolContext, ToolResult
from skillchat.tools.context import ContextLedger
from skillchat.tools.run_command import RUN_COMMAND
from skillchat.tools.skill_tools import GET_SKILL
from skillchat.tools.toolbox import Toolbox, ToolSource

if TYPE_CHECKING:  # a summary is asked for rarely: its module loads when one is
    from skillchat.engine.compaction import Outcome
    from skillchat.safe_io.images import Image
    from skillchat.workspace.files import Workspace


def chat_steps() -> list[Step]:
    """The steps of every chat's turns, in the order they are called at each moment:
    made for each chat, so a step keeps that chat's state (steps/paths.py)."""
    return [Activation(), AttachFiles(), PathsGate(), Fitting(), AutoCompaction(), CutReply()]


class Chat:
    """One conversation: the transcript, the activated skills, the loop."""

    # Its messages are the user's: a `/name` starting one starts that skill (a fork's
    # one message is a task the model wrote, engine/fork.py).
    typed_by_user = True

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        backend: Backend,
        *listeners: Listener,
        workspace: Workspace | None = None,
        tools: Sequence[Tool] | None = None,
        source: ToolSource | None = None,
        steps: Sequence[Step] = (),
    ) -> None:
        self.backend = backend
        self.steps = [*chat_steps(), *steps]  # `steps`: a front end's own, called last
        self.emit = Emitter(listeners)
        self.messages: list[dict[str, Any]] = []
        self.context = ToolContext(settings, registry, workspace, takes_images=takes_images)
        self.toolbox = Toolbox(self.context, tools, source)
        self.window = ContextFit(self.context.ledger, self.emit.notice)
        self.attachments = (
            Attachments(self.context, self.emit.notice) if workspace is not None else None
        )
        self.unlisted: frozenset[str] = frozenset()
        self.reread: list[str] = []  # activated skills whose SKILL.md changed since
        self.use_registry(registry)

    @property
    def settings(self) -> Settings:
        return self.context.settings

    @property
    def registry(self) -> Registry:
        return self.context.registry

    @property
    def activated(self) -> list[str]:
        """The skills loaded in this chat, in order (the tools' context holds them)."""
        return self.context.activated

    @property
    def ledger(self) -> ContextLedger:
        return self.context.ledger

    def use_registry(self, registry: Registry, edited: Sequence[str] = ()) -> None:
        """Serve `registry`'s skills from the next message on (`/reload`, live
        reload); the transcript and what the ledger knows is in context stay. The
        activated skills among `edited` (their SKILL.md changed) are named to the
        model until it loads them again."""
        self.context.registry = registry
        self.reread += [n for n in edited if n in self.activated and n not in self.reread]
        self.list_skills(self.unlisted)
        if self.catalog is not None and (warning := self.catalog.warning()):
            self.emit.notice(warning)
        # Said once per state of the skills folders, with each reason (left_out_seen.py).
        if (left := registry.left_out()) and first_time(registry):
            many = f"{len(left)} skills" if len(left) > 1 else "1 skill"
            self.emit.notice(f"{many} left out: `skillchat skills list` says why")
            for excluded in left:
                self.emit.notice(f"  {excluded.name or excluded.path.name}: {excluded.summary()}")

    def list_skills(self, unlisted: frozenset[str]) -> None:
        """The catalog of the registry's skills but `unlisted` (those whose `paths`
        match no file now: steps/paths.py), and the tools offered with it."""
        self.unlisted = self.context.unlisted = unlisted
        self.catalog = build_catalog(self.registry, self.settings.limits.catalog_budget, unlisted)
        self.context.catalog_incomplete = self.catalog is not None and self.catalog.incomplete
        self.offer_tools()

    def offer_tools(self) -> None:
        """What the next request offers: only what this chat has (no skills, no skill
        tools), with a tool source's as they are now (an MCP server that came up)."""
        self.schemas = self.toolbox.schemas()
        self.tools_enabled = self.settings.tools and bool(self.schemas)
        self.context.commands = self.tools_enabled and RUN_COMMAND in self.toolbox.names()

    def use_settings(self, settings: Settings, backend: Backend | None = None) -> None:
        """Go on under `settings` (and `backend`: `/model`) from the next request on;
        the tools read them from the same context."""
        self.context.settings = settings
        if backend is not None:
            self.backend = backend

    def restore(
        self,
        messages: list[dict[str, Any]],
        activated: Sequence[str],
        served: Mapping[str, str],
    ) -> None:
        """Go on with a saved chat: its transcript and activated skills, and the
        digests of the served ones as it read them (a served skill that changed
        since is not trusted here: skills/trust.py `trusted_as_activated`). The
        ledger stays empty: stored get_skill results are stubs, their content is
        not here."""
        self.messages = list(messages)
        self.context.activated[:] = activated
        self.context.served.clear()
        self.context.served.update(served)

    # ------------------------------------------------------------------ the loop

    def send(self, text: str) -> TurnResult:
        """Answer one user message, running tool rounds until the model answers."""
        try:
            return self._turn(Turn(text, text, TurnResult(answer="")))
        except SkillchatError as exc:
            self.emit(TurnFailed(exc))
            raise

    def _turn(self, turn: Turn) -> TurnResult:
        result = turn.result
        if self.toolbox.source is not None and self.settings.tools:
            for notice in self.toolbox.source.wait(self.context):  # the first turn waits for them
                self.emit.notice(notice)
            self.offer_tools()
        for step in self.steps:
            step.before_message(self, turn)
        self.keep({"role": "user", "content": turn.content})
        for step in self.steps:
            step.after_message(self, turn)
        turn.system = self.system_prompt(turn.injected)
        limit = self.settings.limits.max_tool_rounds
        for round_no in range(limit + 1):
            if round_no and self.toolbox.source is not None:
                # A schema fetched last round, a server that came up: offered now.
                self.toolbox.source.renew(self.context)
                self.offer_tools()
            tools = self.schemas if self.tools_enabled else None
            for step in self.steps:
                step.before_request(self, turn)
            outgoing = self.window.outgoing(turn.system, self.messages, self.budget())
            try:
                reply = stream_reply(
                    self.backend,
                    with_activated_note(outgoing, self.activated),
                    tools,
                    emit=self.emit,
                    keep=self.keep,
                    max_retries=self.settings.model.max_retries,
                )
            except ProviderError as exc:
                raise self._catalog_said(exc, turn.system) from None
            result.requests += 1
            result.usage = add_usage(result.usage, reply.usage)
            if reply.usage is not None:
                self.emit(UsageReported(reply.usage))
            for step in self.steps:
                step.after_reply(self, turn, reply)
            if not reply.tool_calls:
                self.keep(assistant_message(reply.text, []), usage=reply.usage)
                result.answer = reply.text
                return result
            if round_no == limit:
                if reply.text:
                    self.keep(assistant_message(reply.text, []), usage=reply.usage)
                raise ToolRoundLimit(
                    f"the model still wanted tools after {limit} tool rounds "
                    "(max_tool_rounds): raise it in the config, or ask a narrower question"
                )
            result.tool_calls += run_tools(self, reply, self.settings.limits.max_tool_calls)
        raise AssertionError("unreachable: the loop returns or raises")

    def _catalog_said(self, exc: ProviderError, system: str | None) -> ProviderError:
        """A request refused as too long (HTTP 400) whose skills catalog is most of
        it says so, and what to change: a small model's window is often smaller than
        the catalog of a large skills library."""
        if "(400)" not in str(exc) or self.catalog is None:
            return exc
        catalog = len(self.catalog.block)
        sent = len(system or "") + sum(len(json.dumps(m)) for m in self.messages)
        if catalog * 2 <= sent:
            return exc
        return ProviderError(
            f"{exc} (the skills catalog is {catalog:,} of the {sent:,} characters sent: "
            "lower [skills] catalog_max_chars, or set context_window to the model's window "
            "so skillchat fits it)"
        )

    def system_prompt(self, injected: InjectedSkill | None = None) -> str | None:
        """This message's system prompt (`injected`: a `/name` body with tools off)."""
        workspace = self.context.workspace.name if self.context.workspace else None
        return system_prompt(
            self.catalog,
            tools=self.tools_enabled,
            reread=self.reread if self.tools_enabled else (),
            injected=injected,
            workspace=workspace,
            tool_rules=self.toolbox.prompt_rules() if self.tools_enabled else (),
            commands=self.context.commands,
        )

    def compact(self, system: str | None = None, *, auto: bool = False) -> Outcome | None:
        """Replace the older turns by the model's summary and re-attach the activated
        skills (engine/compaction.py); None, said as a notice, when nothing changed.
        Ctrl-C during the summary request leaves the chat as it was."""
        from skillchat.engine.compaction import Compactor

        for step in self.steps:
            step.before_compact(self, auto)
        compactor = Compactor(
            self.settings, self.backend, self.context, self.emit, self.toolbox.get(GET_SKILL)
        )
        outcome = compactor.compact(
            self.messages,
            system if auto else self.system_prompt(),
            self.budget(),
            tools=self.tools_enabled,
            auto=auto,
        )
        if outcome is not None:
            self.window.left_out = 0
        return outcome

    def budget(self) -> int:
        """The request's character budget: `context_max_chars`, or the model's window
        when the user did not set it (engine/context_window.py)."""
        budget = context_budget(
            self.settings, self.backend.context_window, self.messages, self.window.sizes
        )
        return max(1, budget - self.toolbox.source_chars())

    def keep(
        self, message: dict[str, Any], *, interrupted: bool = False, usage: Usage | None = None
    ) -> None:
        """Add a complete message to the transcript, and emit it (the recorder saves it)."""
        message = clean_value(message)
        self.messages.append(message)
        self.emit(MessageAdded(message, interrupted, usage))

    def took(self, call_id: str, result: ToolResult) -> None:
        """Note what a result put into context and which skill it activated."""
        if result.context_key is not None:
            self.ledger.add(call_id, result.context_key)
        if result.activated and result.activated not in self.activated:
            self.activated.append(result.activated)
        skill = self.registry.skills.get(result.activated) if result.activated else None
        if skill is not None and skill.remote is not None:  # the content the model read
            self.context.served[skill.name] = skill.remote.digest
        if result.activated in self.reread:
            self.reread.remove(result.activated)

    def tool_finished(self, record: ToolRecord) -> None:
        """Show a call that was kept with its result, and let every step act on it."""
        self.emit(ToolFinished(record))
        for step in self.steps:
            step.after_tool(self, record)

    def refusal(self, name: str, arguments: str) -> str | None:
        """Why a step will not let a call run (the first that says), or None."""
        for step in self.steps:
            if (why := step.before_tool(self, name, arguments)) is not None:
                return why
        return None

    def attach(self, path: str) -> FileText | Image:
        """Queue a workspace file for the next message (`/attach`, `--attach`).

        Raises FileAccessError when it cannot be read, UsageError without a workspace.
        """
        if self.attachments is None:
            raise UsageError(
                "attaching files needs a workspace: --workspace DIR, or `workspace` in the config"
            )
        return self.attachments.add(path)
