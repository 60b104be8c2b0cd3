"""One message into an open write transaction: the rules every stored message obeys.

The store (chats/store.py) owns the connection and its transactions; this module is
what happens inside one: a tool message must answer a pending call and passes
through the keep policy (so SKILL.md bodies and file contents become stubs), a
user message loses its images, the first user text becomes the title, and a
successful `get_skill` records its skill as activated. It is apart from the store
so the policy and its rules read in one place, and chats/forks.py names the policy
without the store.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from skillchat.chats.messages import dumps, make_title, to_columns, without_images
from skillchat.chats.records import StoredMessage, now
from skillchat.errors import UnknownChatError


class KeptResult(Protocol):
    """What a keep policy decides for one tool result: the content to store, and the
    skill the call activated (if any), and a served skill's digest."""

    @property
    def content(self) -> Any: ...

    @property
    def activated(self) -> str | None: ...

    @property
    def digest(self) -> str | None: ...


# (tool name, the call's raw arguments, the result's content) -> what to store.
KeepPolicy = Callable[[str, str, Any], KeptResult]


def mid_round(message: Mapping[str, Any]) -> bool:
    """A message of a tool round: an assistant message calling tools, or a result.
    The store commits these without waiting for the disk (chats/store.py)."""
    role = message.get("role")
    return role == "tool" or (role == "assistant" and bool(message.get("tool_calls")))


def require(conn: sqlite3.Connection, chat_id: str) -> int:
    """The chat's message count; UnknownChatError if there is no such chat."""
    row = conn.execute("SELECT message_count FROM chats WHERE id = ?", (chat_id,)).fetchone()
    if row is None:
        raise UnknownChatError(f"no saved chat '{chat_id}'")
    return int(row[0])


def insert(
    conn: sqlite3.Connection,
    chat_id: str,
    message: Mapping[str, Any],
    interrupted: bool,
    usage: Mapping[str, Any] | Any | None,
    keep: KeepPolicy | None,
) -> StoredMessage:
    """One message into the open write transaction (see `ChatStore.append_message`)."""
    message = dict(message)
    usage_dict: dict[str, Any] | None = None
    if dataclasses.is_dataclass(usage) and not isinstance(usage, type):
        usage_dict = dataclasses.asdict(usage)
    elif isinstance(usage, Mapping):
        usage_dict = dict(usage)
    usage_json = dumps(usage_dict) if usage_dict is not None else None
    stamp = now()
    seq = require(conn, chat_id)
    activated, digest = None, None
    if message["role"] == "tool":
        tool, arguments = answered_call(conn, chat_id, message["tool_call_id"])
        if keep is None:
            raise RuntimeError("a tool message for a store opened without `keep` (a bug)")
        stored = keep(tool, arguments, message.get("content"))
        message["content"], activated, digest = stored.content, stored.activated, stored.digest
    elif message["role"] == "user":
        message["content"] = without_images(message.get("content"))
    conn.execute(
        "INSERT INTO messages (chat_id, seq, role, content, tool_calls, tool_call_id,"
        " name, extra, interrupted, usage, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (chat_id, seq, *to_columns(message), int(interrupted), usage_json, stamp),
    )
    content = message.get("content")
    title = None
    if message["role"] == "user" and isinstance(content, str) and content.strip():
        title = make_title(content)
    conn.execute(
        "UPDATE chats SET message_count = message_count + 1, updated_at = ?,"
        " title = coalesce(title, ?) WHERE id = ?",
        (stamp, title, chat_id),
    )
    if activated:
        activate(conn, chat_id, activated, stamp, digest)
    return StoredMessage(seq, message, interrupted, usage_dict, stamp)


def answered_call(conn: sqlite3.Connection, chat_id: str, call_id: str) -> tuple[str, str]:
    """(tool name, arguments) of the pending call a tool message answers.

    The call is looked for in the latest assistant messages, not only the last
    one: two sessions continuing one chat interleave their messages, and the
    other session's may land between a call and its results (`ready_to_send`
    mends that order when the chat is loaded).
    """
    rows = conn.execute(
        "SELECT seq, tool_calls FROM messages WHERE chat_id = ? AND role = 'assistant'"
        " AND tool_calls IS NOT NULL ORDER BY seq DESC LIMIT 20",
        (chat_id,),
    ).fetchall()
    last, call = None, None
    for row in rows:
        call = next((c for c in json.loads(row["tool_calls"]) if c["id"] == call_id), None)
        if call is not None:
            last = row
            break
    answered = (
        last
        and conn.execute(
            "SELECT 1 FROM messages WHERE chat_id = ? AND seq > ? AND tool_call_id = ?",
            (chat_id, last["seq"], call_id),
        ).fetchone()
    )
    if call is None or answered:
        raise ValueError(
            f"tool message answers no pending call of the last assistant message: {call_id!r}"
        )
    return call["function"]["name"], call["function"].get("arguments") or ""


def activate(
    conn: sqlite3.Connection, chat_id: str, name: str, stamp: str, digest: str | None = None
) -> None:
    """Record `name` as active in the chat (first activation's time kept), with the
    digest of the served content last read (None: a local skill)."""
    conn.execute(
        "INSERT INTO chat_skills (chat_id, name, activated_at, digest) VALUES (?,?,?,?)"
        " ON CONFLICT (chat_id, name) DO UPDATE SET digest = excluded.digest",
        (chat_id, name, stamp, digest),
    )
