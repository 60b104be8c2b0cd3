"""One turn's state as it goes through the loop, and the `Step` contract.

A step is one feature of a turn that is not the loop itself (`/name` activation,
attached files, fitting the request into the context, compaction). It lives in a
module of its own under engine/steps/ and is registered once, in `STEPS` of
engine/loop.py; the loop calls every step at three moments, in that order:

- `before_message`: the user's text is known, nothing is in the transcript yet
  (a step may change `turn.content`, the message as it will be sent);
- `after_message`: the user message was added (a step may add calls and results
  as if the model had made them, or `turn.injected` for the system prompt);
- `before_request`: before each request of the turn, `turn.system` built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.engine.emit import ToolRecord
from skillchat.engine.events import Usage
from skillchat.engine.invocation import Invocation
from skillchat.prompt import InjectedSkill
from skillchat.safe_io.read import FileText

if TYPE_CHECKING:
    from skillchat.engine.loop import Chat
    from skillchat.safe_io.images import Image


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


class Step:
    """A named part of a turn; each moment is a no-op unless the step overrides it."""

    def before_message(self, chat: Chat, turn: Turn) -> None:
        """The text is known; the user message is not added yet."""

    def after_message(self, chat: Chat, turn: Turn) -> None:
        """The user message was added."""

    def before_request(self, chat: Chat, turn: Turn) -> None:
        """A request is about to be made."""
