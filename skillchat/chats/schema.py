"""The chat database's schema, its migrations, and the checks run before any write.

The schema version lives in `PRAGMA user_version`; `MIGRATIONS[i]` takes a database
from version `i` to `i + 1`, so a schema change is one more entry at the end (version 2
added attached files this way). `PRAGMA application_id` marks the file as ours, so a
`[storage] path` pointing at some other SQLite database is refused, not "migrated".

A database we cannot understand is never written to: `check_header` looks at the raw
bytes before SQLite opens the file, and `check_version` runs on a `query_only`
connection before the journal mode is set or a migration runs. Both raise
`StorageError` with a one-line message naming the file and what the user can do.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

from skillchat.errors import NotRegularFile, StorageError
from skillchat.localfile import open_regular

# "skch" as a big-endian int: what `PRAGMA application_id` says in a skillchat database.
APPLICATION_ID = 0x736B6368

SQLITE_MAGIC = b"SQLite format 3\x00"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 -> 1: chats, their messages (OpenAI format + flags) and activated skill names.
    (
        """CREATE TABLE chats (
            id            TEXT PRIMARY KEY,   -- 8 lowercase hex digits
            model         TEXT NOT NULL,
            title         TEXT,               -- first user message, trimmed; NULL until then
            created_at    TEXT NOT NULL,      -- ISO 8601 UTC, fixed width: sorts as text
            updated_at    TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0  -- kept here so listing reads no messages
        )""",
        "CREATE INDEX chats_by_updated ON chats (updated_at)",
        """CREATE TABLE messages (
            id           INTEGER PRIMARY KEY,
            chat_id      TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
            seq          INTEGER NOT NULL,    -- 0, 1, 2... within the chat
            role         TEXT NOT NULL,       -- user | assistant | tool
            content      TEXT,
            tool_calls   TEXT,                -- JSON array, as the model sent it
            tool_call_id TEXT,
            name         TEXT,
            extra        TEXT,                -- JSON object: any other message keys
            interrupted  INTEGER NOT NULL DEFAULT 0,
            usage        TEXT,                -- JSON object, assistant messages only
            created_at   TEXT NOT NULL,
            UNIQUE (chat_id, seq)
        )""",
        """CREATE TABLE chat_skills (
            chat_id      TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
            name         TEXT NOT NULL,
            activated_at TEXT NOT NULL,
            PRIMARY KEY (chat_id, name)
        )""",
    ),
    # 1 -> 2: workspace files the user attached: which version, never the content.
    (
        """CREATE TABLE chat_attachments (
            chat_id     TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
            path        TEXT NOT NULL,      -- relative to the workspace, '/' separators
            sha256      TEXT NOT NULL,      -- of the bytes sent: which version it was
            size_bytes  INTEGER NOT NULL,   -- of the file on disk then
            workspace   TEXT NOT NULL,      -- the workspace's real path
            attached_at TEXT NOT NULL,
            UNIQUE (chat_id, path, sha256)
        )""",
    ),
    # 2 -> 3: the server a chat talks to, so `-c` goes back to it: the api_base with
    # any user:password@ removed (NULL: the provider's own), and the backend. NULL
    # backend: a chat from before, whose server was not recorded.
    (
        "ALTER TABLE chats ADD COLUMN api_base TEXT",
        "ALTER TABLE chats ADD COLUMN backend TEXT",
    ),
    # 3 -> 4: where a chat was started, so `-c` continues the last chat of this folder,
    # and its workspace, so it goes on with it: real paths; NULL folder: a chat from
    # before (reached with --chat ID), NULL workspace: none.
    (
        "ALTER TABLE chats ADD COLUMN folder TEXT",
        "ALTER TABLE chats ADD COLUMN workspace TEXT",
        "CREATE INDEX chats_by_folder ON chats (folder, updated_at)",
    ),
    # 4 -> 5: forked skills' conversations (engine/fork.py), apart from the messages so
    # a resumed chat never sends them to its model: one row each, its messages as JSON.
    (
        """CREATE TABLE chat_forks (
            chat_id    TEXT NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
            seq        INTEGER NOT NULL,   -- the chat's message count when it ended
            skill      TEXT NOT NULL,
            model      TEXT NOT NULL,
            task       TEXT NOT NULL,
            outcome    TEXT NOT NULL,      -- answered | interrupted | round-limit | failed
            summary    TEXT NOT NULL,      -- JSON object: requests, tool_calls, tokens
            messages   TEXT NOT NULL,      -- JSON array, tool results kept as the chat's
            created_at TEXT NOT NULL
        )""",
    ),
    # 5 -> 6: the local model file a chat was made with (`--gguf`, `--local`), its real
    # path, so `-c` starts it again as it goes back to a server; NULL: none.
    ("ALTER TABLE chats ADD COLUMN gguf TEXT",),
    # 6 -> 7: the digest of a skill served over MCP as the chat read it (skills/remote.py),
    # so a resumed chat trusts it only unchanged; NULL: a local skill, or from before.
    ("ALTER TABLE chat_skills ADD COLUMN digest TEXT",),
)
SCHEMA_VERSION = len(MIGRATIONS)

_MOVE_ASIDE = "move it aside (a new one is created) or set [storage] path"


def corrupt(path: Path, why: str) -> StorageError:
    return StorageError(f"{path}: chat database is unreadable ({why}); {_MOVE_ASIDE}")


def check_file(path: Path) -> None:
    """Refuse a chat database path that is not a regular file holding a whole SQLite
    database (a missing one is fine: it is created). A symlink whose target is missing
    is refused too: SQLite would follow it and create the target, wherever it points."""
    if path.is_symlink() and not path.exists():
        raise StorageError(
            f"{path}: is a symlink to a file that does not exist ({os.readlink(path)}); "
            "skillchat does not create a chat database through a link"
        )
    if path.exists():
        check_header(path)


def check_header(path: Path) -> None:
    """Refuse a file that is not a whole SQLite database, from its first 100 bytes.

    SQLite itself would accept a truncated file and only fail on the first query that
    touches a missing page (or never, for a listing); the header's page count finds it
    at once. An empty file is a new database to SQLite and to us. A FIFO, device or
    folder is refused before anything reads it (localfile.py): a FIFO would block.
    """
    try:
        fd = open_regular(path)
        try:
            header = os.pread(fd, 100, 0)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
    except NotRegularFile as exc:
        raise StorageError(f"{path}: not a chat database: {exc}") from None
    except OSError as exc:
        raise StorageError(f"{path}: cannot read chat database: {exc.strerror or exc}") from None
    if size == 0:
        return
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise corrupt(path, "not an SQLite database")
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = struct.unpack(">II", header[24:32])
    valid_for = struct.unpack(">I", header[92:96])[0]
    if page_size < 512 or page_size & (page_size - 1):
        raise corrupt(path, "bad page size in header")
    # The in-header page count is trustworthy only when it was written with the counter.
    if valid_for == change_counter and size < page_count * page_size:
        raise corrupt(path, f"truncated: {size} bytes of {page_count * page_size}")


def check_version(conn: sqlite3.Connection, path: Path) -> int:
    """The database's schema version, after making sure we may write to it.

    Runs before anything that writes (journal mode, migrations); the caller keeps the
    connection `query_only` until this returns.
    """
    try:
        # One statement, so one snapshot: read one by one, another process's first
        # migration could commit in between (tables seen, application_id not yet),
        # and a new database being created by two sessions at once looked foreign.
        version, app_id, tables = conn.execute(
            "SELECT (SELECT user_version FROM pragma_user_version),"
            " (SELECT application_id FROM pragma_application_id),"
            " (SELECT count(*) FROM sqlite_master)"
        ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise corrupt(path, str(exc)) from None
    if app_id != APPLICATION_ID and (app_id or tables):
        raise StorageError(
            f"{path}: not a skillchat chat database; set [storage] path to another file"
        )
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{path}: chat database has schema version {version}, newer than this "
            f"skillchat knows ({SCHEMA_VERSION}); upgrade skillchat or set [storage] path"
        )
    return int(version)


# The tables a chat's first write goes to (one row per chat, so they are small and
# checked whole); `messages`, which grows with every chat, is read only where writes land.
CHECKED_TABLES = ("chats", "chat_skills", "chat_attachments")


def check_tables(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a database whose tables are missing or damaged when it is opened.

    A write that fails mid-chat does not end the chat (recorder.py), so without
    this a damaged `chats` table was found only after the question had gone to the
    model: an answer paid for that could not be saved. Now nothing is sent."""
    try:
        for table in CHECKED_TABLES:
            verdict = conn.execute(f"PRAGMA quick_check({table})").fetchone()[0]
            if verdict != "ok":
                raise corrupt(path, f"table {table}: {verdict}")
        conn.execute("SELECT max(rowid) FROM messages").fetchone()
    except sqlite3.DatabaseError as exc:
        raise corrupt(path, str(exc)) from None


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema up to `SCHEMA_VERSION`, all steps in one transaction.

    The version is read again under the write lock: another process may have migrated
    (or a newer skillchat may have) since `check_version` looked.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = check_version(conn, path)
        for statements in MIGRATIONS[version:]:
            for sql in statements:
                conn.execute(sql)
        if version < SCHEMA_VERSION:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
