"""The chat database's rows read back into records: the list of chats, one chat
found by its id or a prefix of it (with its skills, attached files and forks), and
its stored messages.

The store (chats/store.py) owns the connection and runs each of these inside its
error handling; they are apart from it as chats/writing.py is for a stored
message: the SQL of reading and the records it makes read in one place, and the
store's methods stay one line each.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3

from skillchat.chats.forks import load_forks
from skillchat.chats.messages import from_columns
from skillchat.chats.records import Chat, ChatSummary, StoredMessage
from skillchat.chats.writing import require
from skillchat.errors import UnknownChatError

_HEX = re.compile(r"^[0-9a-f]{1,8}$")


def summaries(conn: sqlite3.Connection, limit: int | None) -> list[ChatSummary]:
    """`ChatStore.list_chats`: the chats table's rows, newest first, each with
    whether it has a reply."""
    rows = conn.execute(
        "SELECT id, model, title, created_at, updated_at, message_count, api_base, backend,"
        " folder, workspace, gguf,"
        " EXISTS (SELECT 1 FROM messages m"  # the (chat_id, seq) index: one chat's rows
        " WHERE m.chat_id = chats.id AND m.role = 'assistant')"
        " FROM chats"
        " ORDER BY updated_at DESC, rowid DESC LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    return [dataclasses.replace(ChatSummary(*row[:-1]), answered=bool(row[-1])) for row in rows]


def find_chat(conn: sqlite3.Connection, id_or_prefix: str) -> Chat:
    """`ChatStore.get_chat`: the one chat `id_or_prefix` names, read from the id
    index, with its skills, attached files and forks."""
    from skillchat.chats.loaded import AttachedFile  # a chat read back: chats/loaded.py

    prefix = id_or_prefix.strip().lower()
    if not _HEX.match(prefix):
        raise UnknownChatError(f"no saved chat '{id_or_prefix}' (ids are 8 hex digits)")
    # Hex digits sort below 'g': this range is the prefix, read from the index.
    rows = conn.execute(
        "SELECT id, model, title, created_at, updated_at, message_count, api_base, backend,"
        " folder, workspace, gguf"
        " FROM chats"
        " WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
        (prefix, prefix + "g"),
    ).fetchall()
    if len(rows) > 1:
        raise UnknownChatError(
            f"chat id '{id_or_prefix}' is ambiguous ({rows[0][0]}, {rows[1][0]}, ...);"
            " type more of it"
        )
    if not rows:
        raise UnknownChatError(f"no saved chat '{id_or_prefix}'")
    skills = conn.execute(
        "SELECT name, digest FROM chat_skills WHERE chat_id = ? ORDER BY rowid",
        (rows[0][0],),
    ).fetchall()
    files = conn.execute(
        "SELECT path, sha256, size_bytes, workspace, attached_at FROM chat_attachments"
        " WHERE chat_id = ? ORDER BY rowid",
        (rows[0][0],),
    ).fetchall()
    forks = load_forks(conn.execute, rows[0][0])
    return dataclasses.replace(
        Chat(*rows[0]),
        activated_skills=tuple(r[0] for r in skills),
        served_skills={r[0]: r[1] for r in skills if r[1] is not None},
        attached_files=tuple(AttachedFile(*r) for r in files),
        forks=forks,
    )


def stored_messages(conn: sqlite3.Connection, chat_id: str) -> list[StoredMessage]:
    """`ChatStore.load_messages`: a chat's rows of messages, in order."""
    require(conn, chat_id)
    rows = conn.execute(
        "SELECT * FROM messages WHERE chat_id = ? ORDER BY seq", (chat_id,)
    ).fetchall()
    return [
        StoredMessage(
            row["seq"],
            from_columns(row),
            bool(row["interrupted"]),
            json.loads(row["usage"]) if row["usage"] else None,
            row["created_at"],
        )
        for row in rows
    ]
