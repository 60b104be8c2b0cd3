"""What only a saved chat read back holds: its attached files, its forks, and the
transcript a resumed chat starts from (chats/reading.py, chats/forks.py and
ChatStore.load_transcript make them). Apart from chats/records.py, which `ask`
saves through at every start: these are imported when a chat is read, so their
dataclasses are not compiled at a start that reads none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillchat.chats.records import Chat


@dataclass(frozen=True, eq=False)
class AttachedFile:
    """A workspace file the user attached to a chat: which version, not its content."""

    path: str  # relative to the workspace
    sha256: str  # of the bytes sent
    size_bytes: int
    workspace: str  # the workspace's real path
    attached_at: str


@dataclass(frozen=True, eq=False)
class StoredFork:
    """A forked skill's conversation, kept with its chat but apart from its messages:
    shown and exported, never sent to the chat's model again (chats/forks.py)."""

    seq: int  # the chat's message count when it ended: it ran before message `seq`
    skill: str
    model: str
    task: str
    outcome: str  # answered, interrupted, round-limit, failed
    summary: dict[str, Any]  # requests, tool calls, tokens
    messages: list[dict[str, Any]]  # tool results kept as the chat's are (stubs)
    created_at: str


@dataclass(frozen=True, eq=False)
class Transcript:
    """A chat ready to resume: `messages` can be sent to a model as they are."""

    chat: Chat
    messages: list[dict[str, Any]]
