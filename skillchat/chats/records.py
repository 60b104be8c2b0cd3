"""What the chat store hands out: frozen records of chats, their messages and the
files attached to them (kept apart from the SQL in store.py, which reads and writes
them; `from skillchat.chats.store import Chat` still works). Records are read by
their fields, never compared whole: `eq=False` spares compiling `__eq__` and
`__hash__` for each class at every start (`ask` saves through them). What only a
chat read back holds is in chats/loaded.py, imported when one is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillchat.chats.loaded import AttachedFile, StoredFork


@dataclass(frozen=True, eq=False)
class ChatSummary:
    """What `chats list` shows: one row of the `chats` table, no messages read."""

    id: str
    model: str
    title: str | None
    created_at: str  # ISO 8601 UTC
    updated_at: str
    message_count: int
    api_base: str | None = None  # the server, credentials removed; None: the provider's
    backend: str | None = None  # None: a chat saved before servers were recorded
    folder: str | None = None  # where it was started; None: saved before that was recorded
    workspace: str | None = None  # its workspace's real path; None: none
    gguf: str | None = None  # its local model file's real path; None: a server's model
    answered: bool = True  # some reply was saved (False: every turn failed); list_chats


@dataclass(frozen=True, eq=False)
class Chat(ChatSummary):
    """A chat with the names of the skills it activated, in activation order, the
    files attached to it, in attachment order, and its forks, in the order they ended."""

    activated_skills: tuple[str, ...] = ()
    # The served ones among them: the digest of the content the chat read (name -> digest).
    served_skills: Mapping[str, str] = field(default_factory=dict)
    attached_files: tuple[AttachedFile, ...] = ()
    forks: tuple[StoredFork, ...] = ()


@dataclass(frozen=True, eq=False)
class StoredMessage:
    """A message as stored: the OpenAI-format dict plus what only the store knows."""

    seq: int
    message: dict[str, Any]
    interrupted: bool
    usage: dict[str, Any] | None
    created_at: str


def now() -> str:
    """The current UTC time, fixed width, so timestamps sort as text."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
