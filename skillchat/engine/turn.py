"""One turn's state as it goes through the loop, the `Step` contract, and the
narrow view of its chat a step is given.

A step is one feature of a turn that is not the loop itself (`/name` activation,
attached files, fitting the request into the context, compaction, a skill's own
model). It lives in a module of its own under engine/steps/; `chat_steps` of
engine/loop.py makes a fresh set for every chat (a step may keep that chat's state
on itself), and a front end adds its own (session.py: the skill-model switch, the
hooks). The loop calls every step at these moments, in the order the steps are listed:

- `before_message`: the user's text is known, nothing is in the transcript yet
  (a step may change `turn.content`, the message as it will be sent);
- `after_message`: the user message was added (a step may add calls and results
  as if the model had made them, or `turn.injected` for the system prompt);
- `before_request`: before each request of the turn, `turn.system` built;
- `after_reply`: a reply arrived, its usage reported, before its calls run (a step
  may drop them: `reply.tool_calls`);
- `after_tool`: a call and its result were added and shown (the model's, or one a
  step made as if the model had), before the next request;
- `before_tool`: a call of the model's is about to run: a step may refuse it, the
  reason being the call's error result (steps/hooks.py: a `pre_tool_use` hook);
- `before_compact`: the older turns are about to be summarised.

A step reads and acts on its chat only through `StepContext`, so what a feature
may touch is written in one place, and a change to the loop's own members does
not reach the steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from skillchat.engine.emit import ToolRecord
from skillchat.engine.events import Reply, Usage
from skillchat.prompt import InjectedSkill
from skillchat.safe_io.read import FileText

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.engine.attachments import Attachments
    from skillchat.engine.compaction import Outcome
    from skillchat.engine.context_fit import ContextFit
    from skillchat.engine.emit import Emitter
    from skillchat.engine.invocation import Invocation
    from skillchat.engine.messages import Keep
    from skillchat.safe_io.images import Image
    from skillchat.skills.registry import Registry
    from skillchat.tools.base import ToolContext, ToolResult
    from skillchat.tools.toolbox import Toolbox


@dataclass
class TurnResult:
    """What one `send` produced."""

    answer: str
    tool_calls: list[ToolRecord] = field(default_factory=list)
    usage: Usage | None = None  # summed over the turn's requests; None if never sent
    requests: int = 0
    attached: list[FileText | Image] = field(default_factory=list)  # files sent with it


@dataclass
class Turn:
    """One user message on its way through the steps and the loop."""

    text: str  # as the user wrote it
    content: str | list[dict[str, Any]]  # the user message as it will be sent (parts:
    # an image attached with tools off)
    result: TurnResult
    invocation: Invocation | None = None  # `/name rest` of a usable skill
    injected: InjectedSkill | None = None  # a `/name` body for the system prompt
    system: str | None = None  # this turn's system prompt, once built
    may_compact: bool = True  # once a turn: a failed summary is not asked again


class StepContext(Protocol):
    """What of its chat a step may read and do (engine/loop.py's `Chat` is one): all
    read-only, so a step changes its chat only through what is here."""

    @property
    def emit(self) -> Emitter:
        """Events and notices, to the chat's listeners."""

    @property
    def context(self) -> ToolContext:
        """The tools' view: the workspace, vision, the activated skills."""

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def window(self) -> ContextFit:
        """What of the transcript fits the request."""

    @property
    def attachments(self) -> Attachments | None:
        """Files queued for the next message; None without a workspace."""

    @property
    def typed_by_user(self) -> bool:
        """Whether the messages are the user's (a fork's task is the model's)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The transcript: add to it through `keep` only."""

    @property
    def tools_enabled(self) -> bool: ...

    @property
    def unlisted(self) -> frozenset[str]:
        """The skills left out of the catalog (`list_skills`)."""

    @property
    def keep(self) -> Keep:
        """Add a complete message to the transcript, and emit it."""

    def took(self, call_id: str, result: ToolResult) -> None:
        """Note what a result put into context and which skill it activated."""

    def tool_finished(self, record: ToolRecord) -> None:
        """Show a call kept with its result, and tell every step (`after_tool`)."""

    def budget(self) -> int:
        """The request's character budget."""

    def compact(self, system: str | None = None, *, auto: bool = False) -> Outcome | None:
        """Replace the older turns by the model's summary."""

    def list_skills(self, unlisted: frozenset[str]) -> None:
        """The catalog without `unlisted`, from the next request on."""


class Step:
    """A named part of a turn; each moment is a no-op unless the step overrides it."""

    def before_message(self, chat: StepContext, turn: Turn) -> None:
        """The text is known; the user message is not added yet."""

    def after_message(self, chat: StepContext, turn: Turn) -> None:
        """The user message was added."""

    def before_request(self, chat: StepContext, turn: Turn) -> None:
        """A request is about to be made."""

    def after_reply(self, chat: StepContext, turn: Turn, reply: Reply) -> None:
        """A reply arrived; its tool calls have not run."""

    def after_tool(self, chat: StepContext, record: ToolRecord) -> None:
        """A tool call and its result were added to the transcript and shown."""

    def before_tool(self, chat: StepContext, name: str, arguments: str) -> str | None:
        """A call is about to run: why it must not (its error result), or None."""
        return None

    def before_compact(self, chat: StepContext, auto: bool) -> None:
        """The older turns are about to be summarised (`auto`: not by `/compact`)."""
