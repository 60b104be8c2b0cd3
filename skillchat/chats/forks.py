"""Forked skills' conversations in the chat database: table `chat_forks` (schema 5).

A fork's messages are kept beside its chat, not among the chat's messages, so a
resumed chat sends its model what it was sent (the fork's answer, in the get_skill
result) and never the fork's reading. Its tool results pass through the same keep
policy as the chat's (SKILL.md bodies and file contents become stubs).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillchat.chats.messages import dumps
from skillchat.chats.records import now

if TYPE_CHECKING:
    from skillchat.chats.loaded import StoredFork
    from skillchat.chats.writing import KeepPolicy


def kept_messages(
    messages: Sequence[Mapping[str, Any]], keep: KeepPolicy | None
) -> list[dict[str, Any]]:
    """The messages as the database keeps them: each tool result through `keep`,
    by the call it answers (without a policy, results are dropped to a note)."""
    calls: dict[str, tuple[str, str]] = {}
    kept: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            calls[call.get("id")] = (function.get("name", ""), function.get("arguments") or "")
        if message.get("role") == "tool":
            name, arguments = calls.get(message.get("tool_call_id") or "", ("", ""))
            content = message.get("content")
            message["content"] = (
                keep(name, arguments, content).content if keep else "(result not stored)"
            )
        kept.append(message)
    return kept


def save_fork(
    conn: sqlite3.Connection,
    chat_id: str,
    seq: int,
    fork: Mapping[str, Any],
    keep: KeepPolicy | None,
) -> None:
    """One ended fork (`fork`: skill, model, task, outcome, summary, messages) into
    the open write transaction."""
    conn.execute(
        "INSERT INTO chat_forks (chat_id, seq, skill, model, task, outcome, summary,"
        " messages, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            chat_id,
            seq,
            fork["skill"],
            fork["model"],
            fork["task"],
            fork["outcome"],
            dumps(fork["summary"]),
            dumps(kept_messages(fork["messages"], keep)),
            now(),
        ),
    )


def load_forks(execute: Callable[..., sqlite3.Cursor], chat_id: str) -> tuple[StoredFork, ...]:
    """A chat's forks, in the order they ended."""
    from skillchat.chats.loaded import StoredFork  # a chat read back: chats/loaded.py

    rows = execute(
        "SELECT seq, skill, model, task, outcome, summary, messages, created_at"
        " FROM chat_forks WHERE chat_id = ? ORDER BY rowid",
        (chat_id,),
    ).fetchall()
    return tuple(
        StoredFork(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]), r[7])
        for r in rows
    )
