"""A whole chat copied from another chat database into this one, in the caller's
write transaction: its row (a new id, a given title), messages, activated skills,
attached files and forks, as they were stored.

Why copy rather than write the chat where it ends up: an outcome eval's trial
(evals/outcome_trial.py) records its chat in a database of its own, and only a
trial that finished is copied into the user's, whole, in one transaction. A trial
cut short (Ctrl-C) so leaves no half chat behind, and the copy happens once per
finished trial, so a resumed eval that runs only the rest saves nothing twice.
"""

from __future__ import annotations

import sqlite3

SOURCE = "source"  # the schema name the other database is attached under
# The tables holding one chat's rows besides `chats`, keyed by `chat_id`.
CHAT_TABLES = ("messages", "chat_skills", "chat_attachments", "chat_forks")


def copy_chat(conn: sqlite3.Connection, chat_id: str, new_id: str, title: str) -> None:
    """Copy chat `chat_id` of the attached SOURCE database to `new_id`, titled
    `title` and with no folder it was started in (`folder` NULL, as a chat from
    before folders were recorded): `-c` continues the user's own chats of a folder,
    never a copied one, which `--chat ID` and `/resume` reach. The columns are read
    from this database, whose schema the source's matches (the caller checked its
    version). IntegrityError: `new_id` is taken."""
    chats = [c for c in _columns(conn, "chats") if c not in ("id", "title", "folder")]
    listed = ", ".join(chats)
    conn.execute(
        f"INSERT INTO chats (id, title, {listed}) SELECT ?, ?, {listed}"
        f" FROM {SOURCE}.chats WHERE id = ?",
        (new_id, title, chat_id),
    )
    for table in CHAT_TABLES:
        # `messages.id` is the row's own number here: drawn anew.
        rest = [c for c in _columns(conn, table) if c not in ("chat_id", "id")]
        listed = ", ".join(rest)
        conn.execute(
            f"INSERT INTO {table} (chat_id, {listed}) SELECT ?, {listed}"
            f" FROM {SOURCE}.{table} WHERE chat_id = ?",
            (new_id, chat_id),
        )


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA main.table_info({table})")]
