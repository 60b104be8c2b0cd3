"""The chat store when things go wrong: SIGKILL mid-turn and mid-round, two writers at once, a lock
held too long, and files it must refuse without changing a byte."""

from __future__ import annotations

import hashlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from skillchat.chats import store as store_mod
from skillchat.chats.schema import SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.errors import StorageError

pytestmark = pytest.mark.usefixtures("home_in_tmp_path")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- crashes and concurrency ----------------------------------------------------------------

# Appends `count` messages to a chat, printing each index once it is committed. With a
# pause (seconds) it first says "ready", waits for a line on stdin (a starting gun), and
# pauses between messages as a chat does, so two writers take turns at the lock.
CHILD_APPEND = """
import sys, time
from skillchat.chats.store import ChatStore
path, chat_id, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pause = float(sys.argv[5]) if len(sys.argv) > 5 else None
store = ChatStore.open(path)
if pause is not None:
    print("ready", flush=True)
    sys.stdin.readline()
for i in range(count):
    store.append_message(chat_id, {"role": "user", "content": f"{tag}-{i}-" + "x" * 3000})
    print(i, flush=True)
    if pause:
        time.sleep(pause)
store.close()
"""


def test_sigkill_mid_turn_keeps_every_committed_message(db: Path) -> None:
    with ChatStore.open(db) as s:
        chat = s.create_chat("m")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_APPEND, str(db), chat.id, "k", "100000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    reported = [int(child.stdout.readline()) for _ in range(300)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    reported += [int(line) for line in child.stdout.read().split()]
    assert child.returncode == -signal.SIGKILL

    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    raw.close()
    with ChatStore.open(db) as s:
        stored = [m.message["content"].split("-")[1] for m in s.load_messages(chat.id)]
        assert s.get_chat(chat.id).message_count == len(stored)
    assert stored[: len(reported)] == [str(i) for i in reported]
    assert len(stored) <= len(reported) + 1  # at most the one in flight when killed


# Tool rounds as a chat saves them, each index printed once its result is committed:
# these commits do not wait for the disk (chats/store.py), and a crash keeps them all.
CHILD_ROUNDS = """
import sys
from skillchat.chats.store import ChatStore
from skillchat.tools.toolbox import stored_result
store = ChatStore.open(sys.argv[1], keep=stored_result)
for i in range(100000):
    function = {"name": "list_skills", "arguments": "{}"}
    call = {"id": f"c{i}", "type": "function", "function": function}
    store.append_message(sys.argv[2], {"role": "assistant", "content": None, "tool_calls": [call]})
    result = {"role": "tool", "tool_call_id": f"c{i}", "content": f"{i}-" + "x" * 3000}
    store.append_message(sys.argv[2], result)
    print(i, flush=True)
"""


def test_sigkill_mid_round_keeps_every_committed_tool_round(db: Path) -> None:
    with ChatStore.open(db) as s:
        chat = s.create_chat("m")
        s.append_message(chat.id, {"role": "user", "content": "go"})
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_ROUNDS, str(db), chat.id], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    reported = [int(child.stdout.readline()) for _ in range(200)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    reported += [int(line) for line in child.stdout.read().split()]

    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    raw.close()
    with ChatStore.open(db) as s:
        messages = [m.message for m in s.load_messages(chat.id)]
    results = [m["content"].split("-")[0] for m in messages if m["role"] == "tool"]
    assert results[: len(reported)] == [str(i) for i in reported]
    assert len(results) <= len(reported) + 1


def test_two_writers_at_once_both_succeed(db: Path) -> None:
    with ChatStore.open(db) as s:
        chat = s.create_chat("m")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_APPEND, str(db), chat.id, tag, "200", "0.001"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for child in children:  # both have opened the database before either writes
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    with ChatStore.open(db) as s:
        contents = [m.message["content"] for m in s.load_messages(chat.id)]
        assert s.get_chat(chat.id).message_count == 400
    for tag in ("a", "b"):
        mine = [c.split("-")[1] for c in contents if c.startswith(f"{tag}-")]
        assert mine == [str(i) for i in range(200)]
    turns = sum(a[0] != b[0] for a, b in itertools.pairwise(contents))
    assert turns >= 3  # they took turns at the lock: written at once, not one after the other


def test_processes_creating_the_database_at_once_all_succeed(db: Path) -> None:
    code = "import sys\nfrom skillchat.chats.store import ChatStore\n"
    code += "with ChatStore.open(sys.argv[1]) as s:\n    s.create_chat('m')\n"
    children = [
        subprocess.Popen([sys.executable, "-c", code, str(db)], stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    for child in children:
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    with ChatStore.open(db) as s:
        assert len(s.list_chats()) == 6


def test_a_writer_waits_for_another_process_lock(store: ChatStore, db: Path) -> None:
    chat = store.create_chat("m")
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    started = time.monotonic()
    store.append_message(chat.id, {"role": "user", "content": "waited"})
    assert time.monotonic() - started >= 0.4
    assert store.get_chat(chat.id).message_count == 1
    other.close()


def test_a_lock_held_too_long_is_a_storage_error(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(store_mod, "BUSY_RETRIES", 1)
    with ChatStore.open(db) as s:
        chat = s.create_chat("m")
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StorageError, match=r"chats\.db: chat database is locked"):
            s.append_message(chat.id, {"role": "user", "content": "x"})
        other.execute("ROLLBACK")
        other.close()


# -- files it must refuse, untouched ------------------------------------------------------------


def _refuses_untouched(path: Path, match: str) -> StorageError:
    before = sha(path)
    with pytest.raises(StorageError, match=match) as info:
        ChatStore.open(path)
    assert sha(path) == before
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    return info.value


def test_garbage_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    path.write_bytes(os.urandom(8192))
    _refuses_untouched(path, "unreadable .*not an SQLite database.*move it aside")


def _real_db(path: Path, chats: int) -> None:
    with ChatStore.open(path) as s:
        for i in range(chats):
            chat = s.create_chat("m")
            s.append_message(chat.id, {"role": "user", "content": f"message {i} " + "y" * 500})


def test_truncated_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    _real_db(path, 200)
    size = path.stat().st_size
    assert size > 64 * 1024
    with path.open("r+b") as f:
        f.truncate(size // 2)
    _refuses_untouched(path, "unreadable .*truncated")


def test_short_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    _real_db(path, 1)
    path.write_bytes(path.read_bytes()[:60])
    _refuses_untouched(path, "unreadable")


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    _real_db(path, 3)
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    _refuses_untouched(path, f"schema version {SCHEMA_VERSION + 1}, newer.*upgrade skillchat")


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE notes (body TEXT)")
    raw.commit()
    raw.close()
    _refuses_untouched(path, "not a skillchat chat database")


def test_a_directory_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "chats.db").mkdir()
    with pytest.raises(StorageError, match="is a directory"):
        ChatStore.open(tmp_path / "chats.db")


def test_open_creates_migrates_and_reopens(db: Path, tmp_path: Path) -> None:
    with ChatStore.open(db) as s:
        s.create_chat("m")
    with ChatStore.open(db) as s:
        assert len(s.list_chats()) == 1
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    raw.close()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")  # SQLite's own idea of a new database
    with ChatStore.open(empty) as s:
        assert s.list_chats() == []
