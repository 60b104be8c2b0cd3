"""Saved chats: one SQLite database (WAL), one short transaction per message.

    store = ChatStore.open(settings.storage.database_path())
    chat = store.create_chat(model)
    store.append_message(chat.id, {"role": "user", "content": "hi"})
    store.append_message(chat.id, reply, interrupted=True, usage={...})
    transcript = store.load_transcript(chat.id)   # messages + activated skill names

Why it is shaped this way:

- Each `append_message` commits before returning, so a crash (even SIGKILL) loses at
  most the reply still being streamed. Write transactions start with BEGIN IMMEDIATE,
  so a second process waits on `busy_timeout` (and then a few retries) instead of
  failing on a lock upgrade.
- A commit also waits for the disk (WAL, `synchronous = FULL`: it survives a power
  cut), except a new chat's (`create_chat`) and the messages of a tool round
  (`mid_round`: the assistant message that calls tools, their results), which
  commit without (`NORMAL`): the next commit that waits (the first message, the
  answer, the next user message) syncs them with it, the WAL being one file. A
  power cut during a turn (or soon after one that failed) may so roll back that
  turn's tool rounds, never its user message, an answer or a chat; a crash of
  skillchat loses nothing committed either way. A sync takes 0.2 to 13 ms on the
  machine the benchmarks ran on, as other processes use the disk, and a round
  made one for each of its messages: more than the rest of the round
  (docs/performance.md).
- SKILL.md bodies and workspace files are never stored, and the store enforces it,
  not its callers: every tool message passes through the `keep` policy the store was
  opened with (the tools' `stored_result`: a `get_skill` result, a
  `read_file_in_skill` of SKILL.md, a workspace `read_file` become stubs) before it
  reaches the database. The store knows no tool: the policy is handed in, and a
  store opened without one (to read, list or delete chats) refuses tool messages
  rather than keep them whole. Attached files are kept as
  paths and content hashes (`record_attachment`). A successful
  `get_skill` result also records the skill as activated, so the two cannot diverge.
- A tool message must answer a call of the assistant message just before it, so the
  stored transcript is always one a provider accepts; `load_transcript` also gives
  calls cut off by a crash an error result instead of leaving them unanswered.
- Listing reads only the `chats` table (message count kept on the row, indexed by
  `updated_at`), so `chats list` stays fast with thousands of chats.

The rules one stored message obeys (keep policy, pending calls, title, activation)
are chats/writing.py; how rows are read back into records, chats/reading.py. This
module is the `ChatStore` class: each public method is one transaction on the
connection it owns, through its own `_write`, `_errors` and `_retry`, which is why
those stay here and are not handed around.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from skillchat.chats.copying import SOURCE, copy_chat
from skillchat.chats.forks import save_fork
from skillchat.chats.messages import (
    COMPACTION,
    check_message,
    live,
    ready_to_send,
)
from skillchat.chats.private import private_database, private_dir
from skillchat.chats.reading import find_chat, stored_messages, summaries
from skillchat.chats.records import (
    Chat,
    ChatSummary,
    StoredMessage,
    now,
)
from skillchat.chats.schema import (
    SCHEMA_VERSION,
    check_file,
    check_tables,
    check_version,
    corrupt,
    migrate,
)
from skillchat.chats.writing import KeepPolicy, insert, mid_round, require
from skillchat.errors import StorageError
from skillchat.sections import user_data_dir

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript

BUSY_TIMEOUT_MS = 5000
BUSY_RETRIES = 4
T = TypeVar("T")


def without_credentials(url: str | None) -> str | None:
    """`url` with any `user:password@` removed: a chat file never holds a secret."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host))


def _storage_error(path: Path, exc: sqlite3.Error) -> StorageError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StorageError(f"{path}: chat database is locked by another process; try again")
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return corrupt(path, text)
    return StorageError(f"{path}: chat database error: {text}")


class ChatStore:
    """The chat database. Open with `ChatStore.open`; one store per thread."""

    def __init__(
        self, path: Path, conn: sqlite3.Connection, keep: KeepPolicy | None = None
    ) -> None:
        self.path = path
        self._conn = conn
        self._keep = keep
        self._synced = True  # the connection's `synchronous`: FULL, or NORMAL

    @classmethod
    def open(cls, path: Path, *, keep: KeepPolicy | None = None) -> ChatStore:
        """Open (creating it and its directory if needed) and migrate the database.

        `keep` decides what of each tool result is stored (see the module's
        docstring); without it the store reads, lists and deletes, and refuses to
        append a tool message.

        An existing file is checked before anything can write to it: a corrupt file,
        another application's database or a newer schema is a `StorageError`, and the
        file is left exactly as it was. The database, its `-wal` and `-shm` and the
        folders created for it are private to the user (chats/private.py): created
        0600/0700, and tightened when they exist with wider modes, as is skillchat's
        own data folder; a folder the user chose for the database is left as it is.
        """
        path = Path(path)
        check_file(path)
        try:
            private_dir(path.parent, tighten=path.parent == user_data_dir())
        except OSError as exc:
            raise StorageError(f"{path.parent}: cannot create: {exc.strerror or exc}") from None
        try:
            private_database(path)
        except OSError as exc:
            raise StorageError(f"{path}: cannot create: {exc.strerror or exc}") from None
        try:
            conn = sqlite3.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise _storage_error(path, exc) from None
        conn.row_factory = sqlite3.Row
        store = cls(path, conn, keep)
        try:
            with store._errors():
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                conn.execute("PRAGMA query_only = ON")  # nothing writes before the checks
                version = check_version(conn, path)
                conn.execute("PRAGMA query_only = OFF")
                store._retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
                # FULL: a committed message survives a power cut, not only a crash;
                # a tool round's messages wait for the next one (`_write`).
                conn.execute("PRAGMA synchronous = FULL")
                conn.execute("PRAGMA foreign_keys = ON")
                if version < SCHEMA_VERSION:  # no write lock just to read chats
                    store._retry(lambda: migrate(conn, path))
                check_tables(conn, path)
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ChatStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite failures as one-line StorageErrors naming the file."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise _storage_error(self.path, exc) from None

    def _retry(self, action: Callable[[], T]) -> T:
        """Run `action`, retrying while another process holds the write lock.

        `busy_timeout` already waits inside SQLite; the retries cover the cases where
        SQLite reports busy at once (WAL recovery, journal-mode change).
        """
        for attempt in range(BUSY_RETRIES):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                time.sleep(0.05 * 2**attempt)
        return action()

    @contextmanager
    def _write(self, *, synced: bool = True) -> Iterator[sqlite3.Connection]:
        """One short write transaction: committed on exit, rolled back on error; the
        commit waits for the disk unless not `synced` (see the module's docstring)."""
        with self._errors():
            if synced != self._synced:
                self._conn.execute(f"PRAGMA synchronous = {'FULL' if synced else 'NORMAL'}")
                self._synced = synced
            self._retry(lambda: self._conn.execute("BEGIN IMMEDIATE"))
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- writing ----------------------------------------------------------------------

    def create_chat(
        self,
        model: str,
        api_base: str | None = None,
        backend: str | None = None,
        *,
        folder: str | None = None,
        workspace: str | None = None,
        gguf: str | None = None,
    ) -> Chat:
        """A new, empty chat with a fresh 8-hex-digit id, talking to `api_base` (or
        the local model file `gguf`), started in `folder` with `workspace` (real paths).
        Its commit does not wait for the disk: the recorder creates a chat with its
        first message, whose commit does, for both."""
        stamp = now()
        server = without_credentials(api_base)

        def insert(conn: sqlite3.Connection, chat_id: str) -> None:
            conn.execute(
                "INSERT INTO chats (id, model, created_at, updated_at, api_base, backend,"
                " folder, workspace, gguf) VALUES (?,?,?,?,?,?,?,?,?)",
                (chat_id, model, stamp, stamp, server, backend, folder, workspace, gguf),
            )

        chat_id = self._with_new_id(insert, synced=False)
        return Chat(chat_id, model, None, stamp, stamp, 0, server, backend, folder, workspace, gguf)

    def _with_new_id(
        self, insert: Callable[[sqlite3.Connection, str], None], *, synced: bool = True
    ) -> str:
        """Run `insert` with a fresh 8-hex-digit chat id in one write, drawing another
        while the id is taken (1 in 4 billion per chat); the id it used."""
        while True:
            chat_id = os.urandom(4).hex()  # as secrets.token_hex, without its import
            try:
                with self._write(synced=synced) as conn:
                    insert(conn, chat_id)
            except sqlite3.IntegrityError:
                continue
            return chat_id

    def set_model(
        self,
        chat_id: str,
        model: str,
        api_base: str | None,
        backend: str | None,
        gguf: str | None = None,
    ) -> None:
        """The chat goes on with another model (`/model`): resuming it uses that one."""
        with self._write() as conn:
            require(conn, chat_id)
            conn.execute(
                "UPDATE chats SET model = ?, api_base = ?, backend = ?, gguf = ? WHERE id = ?",
                (model, without_credentials(api_base), backend, gguf, chat_id),
            )

    def append_message(
        self,
        chat_id: str,
        message: Mapping[str, Any],
        *,
        interrupted: bool = False,
        usage: Mapping[str, Any] | Any | None = None,
    ) -> StoredMessage:
        """Store one complete message (OpenAI format) and commit it.

        `interrupted` marks a reply cut short (Ctrl-C). `usage` is a mapping or a
        dataclass (engine `Usage`). A tool message must answer a call of the latest
        assistant message; a `get_skill` result is stored as a stub (see module doc).
        The first user message with text becomes the title. Raises ValueError for a
        message that breaks these rules, UnknownChatError for an unknown chat.
        """
        check_message(message)
        with self._write(synced=not mid_round(message)) as conn:
            return insert(conn, chat_id, message, interrupted, usage, self._keep)

    def append_compaction(
        self, chat_id: str, messages: list[Mapping[str, Any]], kept: int, info: Mapping[str, Any]
    ) -> None:
        """Store a compaction in one transaction: `messages` (the summary exchange and
        the re-attached skills) replace all but the last `kept` messages before them.

        Nothing stored is changed or dropped: each message is flagged in its `extra`
        JSON (`COMPACTION`; the first carries `kept` and `info`), and `load_transcript`
        rebuilds the compacted chat from the flags (`messages.live`), while `chats
        show` and the exports still have the whole history.
        """
        flagged = [{**messages[0], COMPACTION: {**info, "kept": kept}}]
        flagged += [{**m, COMPACTION: m["role"]} for m in messages[1:]]
        for message in flagged:
            check_message(message)
        with self._write() as conn:
            for message in flagged:
                insert(conn, chat_id, message, False, None, self._keep)

    def record_attachment(
        self, chat_id: str, workspace: str, path: str, sha256: str, size_bytes: int
    ) -> None:
        """Record that `path` (this version of it) was attached; no-op if it already was.

        Only the path and hash are kept: the content stays in the user's workspace,
        and the stored `read_file` result that carried it is a stub.
        """
        with self._write() as conn:
            require(conn, chat_id)
            conn.execute(
                "INSERT OR IGNORE INTO chat_attachments (chat_id, path, sha256, size_bytes,"
                " workspace, attached_at) VALUES (?,?,?,?,?,?)",
                (chat_id, path, sha256, size_bytes, workspace, now()),
            )

    def add_fork(self, chat_id: str, fork: Mapping[str, Any]) -> None:
        """Keep an ended fork's conversation with its chat (chats/forks.py)."""
        with self._write() as conn:
            save_fork(conn, chat_id, require(conn, chat_id), fork, self._keep)

    def adopt_chat(self, source: Path, chat_id: str, title: str) -> str:
        """Copy chat `chat_id` of the skillchat database `source` (this version's,
        closed) into this one, whole, in one transaction, titled `title`; its new id
        (chats/copying.py says why)."""
        with self._errors():
            self._conn.execute(f"ATTACH DATABASE ? AS {SOURCE}", (str(source),))
        try:
            with self._errors():
                found = self._conn.execute(f"PRAGMA {SOURCE}.user_version").fetchone()[0]
            if found != SCHEMA_VERSION:
                raise StorageError(f"{source}: not a chat database of this version")
            return self._with_new_id(lambda conn, new_id: copy_chat(conn, chat_id, new_id, title))
        finally:
            self._conn.execute(f"DETACH DATABASE {SOURCE}")

    def delete_chat(self, chat_id: str) -> None:
        """Delete a chat, its messages and its activated skills."""
        with self._write() as conn:
            require(conn, chat_id)
            conn.execute("DELETE FROM chats WHERE id = ?", (chat_id,))

    # -- reading ----------------------------------------------------------------------

    def list_chats(self, limit: int | None = None) -> list[ChatSummary]:
        """Chats, most recently updated first, read from the chats table (and whether
        each has a reply, from its own messages)."""
        with self._errors():
            return summaries(self._conn, limit)

    def last_chat(self, folder: str | None = None) -> Chat | None:
        """The most recently updated chat (of those started in `folder`, when given),
        for `--continue`."""
        if folder is None:
            latest = self.list_chats(limit=1)
            return self.get_chat(latest[0].id) if latest else None
        with self._errors():
            row = self._conn.execute(
                "SELECT id FROM chats WHERE folder = ? ORDER BY updated_at DESC, rowid DESC"
                " LIMIT 1",
                (folder,),
            ).fetchone()
        return self.get_chat(row[0]) if row else None

    def get_chat(self, id_or_prefix: str) -> Chat:
        """The chat whose id is, or starts with, `id_or_prefix` (case-insensitive).

        UnknownChatError when no chat matches or the prefix matches several.
        """
        with self._errors():
            return find_chat(self._conn, id_or_prefix)

    def load_messages(self, chat_id: str) -> list[StoredMessage]:
        """Every stored message of a chat in order, with its flags (for show/export)."""
        with self._errors():
            return stored_messages(self._conn, chat_id)

    def load_transcript(self, chat_id: str) -> Transcript:
        """The chat (with its activated skills) and its messages, ready to send back to
        a model: the compacted chat when it was compacted (`messages.live`), and see
        `messages.ready_to_send` for what a crash may have left to mend."""
        from skillchat.chats.loaded import Transcript  # a chat read back: chats/loaded.py

        chat = self.get_chat(chat_id)
        stored = [stored.message for stored in self.load_messages(chat.id)]
        messages = ready_to_send(live(stored))
        return Transcript(chat, messages)
