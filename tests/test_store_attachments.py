"""Schema version 2: attached files kept as paths and hashes, never content. A version 1
database (built from the version 1 migration itself) upgrades and keeps its chats;
workspace `read_file` results are stored as stubs; `chats show`/`export` name the
attached files."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from helpers import skillchat

from skillchat.chats.loaded import AttachedFile
from skillchat.chats.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.tools.toolbox import stored_result
from skillchat.tools.workspace_tools import FILE_STUB_NOTE

SHA = "a" * 64


def v1_database(path: Path) -> None:
    """A database exactly as skillchat with schema version 1 left it, with one chat."""
    raw = sqlite3.connect(path)
    for sql in MIGRATIONS[0]:
        raw.execute(sql)
    raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    raw.execute("PRAGMA user_version = 1")
    stamp = "2026-01-02T03:04:05.000000Z"
    raw.execute(
        "INSERT INTO chats VALUES ('0123abcd', 'gpt-old', 'hello', ?, ?, 1)", (stamp, stamp)
    )
    raw.execute(
        "INSERT INTO messages (chat_id, seq, role, content, created_at)"
        " VALUES ('0123abcd', 0, 'user', 'hello', ?)",
        (stamp,),
    )
    raw.execute("INSERT INTO chat_skills VALUES ('0123abcd', 'pdf', ?)", (stamp,))
    raw.commit()
    raw.close()


def test_a_v1_database_upgrades_to_the_current_schema_and_keeps_its_chats(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chats.db"
    v1_database(db)
    assert SCHEMA_VERSION == 7
    with ChatStore.open(db) as store:
        chat = store.get_chat("0123")
        assert (chat.id, chat.model, chat.title, chat.message_count) == (
            "0123abcd",
            "gpt-old",
            "hello",
            1,
        )
        assert chat.activated_skills == ("pdf",) and chat.attached_files == ()
        assert (chat.api_base, chat.backend) == (None, None)  # its server was not recorded
        assert (chat.folder, chat.workspace, chat.gguf) == (None, None, None)  # nor its folder
        assert [m.message for m in store.load_messages(chat.id)] == [
            {"role": "user", "content": "hello"}
        ]
        store.record_attachment(chat.id, "/ws", "src/app.py", SHA, 12)
        assert [f.path for f in store.get_chat(chat.id).attached_files] == ["src/app.py"]
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    raw.close()


def test_attachments_are_kept_in_order_once_per_version(tmp_path: Path) -> None:
    with ChatStore.open(tmp_path / "chats.db") as store:
        chat = store.create_chat("m")
        store.record_attachment(chat.id, "/ws", "b.md", SHA, 3)
        store.record_attachment(chat.id, "/ws", "a.md", SHA, 5)
        store.record_attachment(chat.id, "/ws", "b.md", SHA, 3)  # the same version again
        store.record_attachment(chat.id, "/ws", "b.md", "b" * 64, 4)  # changed on disk
        files = store.get_chat(chat.id).attached_files
        assert [(f.path, f.sha256[0], f.size_bytes) for f in files] == [
            ("b.md", "a", 3),
            ("a.md", "a", 5),
            ("b.md", "b", 4),
        ]
        assert all(isinstance(f, AttachedFile) and f.workspace == "/ws" for f in files)
        store.delete_chat(chat.id)
        count = store._conn.execute("SELECT count(*) FROM chat_attachments").fetchone()[0]
        assert count == 0  # deleted with its chat


def test_record_attachment_of_an_unknown_chat_fails(tmp_path: Path) -> None:
    from skillchat.errors import UnknownChatError

    with ChatStore.open(tmp_path / "chats.db") as store, pytest.raises(UnknownChatError):
        store.record_attachment("deadbeef", "/ws", "a.md", SHA, 1)


def test_workspace_file_content_is_stored_as_a_stub(tmp_path: Path) -> None:
    ok = {
        "success": True,
        "file": {"path": "a.md", "sizeBytes": 9, "content": "SECRET", "isTruncated": False},
    }
    refused = {"success": False, "errorCode": "NOT_FOUND", "errors": ["File 'b.md' ..."]}
    with ChatStore.open(tmp_path / "chats.db", keep=stored_result) as store:
        chat = store.create_chat("m")
        store.append_message(chat.id, {"role": "user", "content": "look at @a.md"})
        calls = [
            {"id": c, "type": "function", "function": {"name": "read_file", "arguments": a}}
            for c, a in (("c1", '{"path": "a.md"}'), ("c2", '{"path": "b.md"}'))
        ]
        store.append_message(chat.id, {"role": "assistant", "content": None, "tool_calls": calls})
        store.append_message(
            chat.id, {"role": "tool", "tool_call_id": "c1", "content": json.dumps(ok)}
        )
        store.append_message(
            chat.id, {"role": "tool", "tool_call_id": "c2", "content": json.dumps(refused)}
        )
        stored = [m.message["content"] for m in store.load_messages(chat.id)][2:]
    assert json.loads(stored[0]) == {
        "success": True,
        "file": {"path": "a.md", "sizeBytes": 9, "isTruncated": False},
        "stub": FILE_STUB_NOTE,
    }
    assert json.loads(stored[1]) == refused  # errors hold no content: kept as they were
    assert "SECRET" not in (tmp_path / "chats.db").read_bytes().decode("latin-1")


def test_chats_show_and_export_name_the_attached_files(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    with ChatStore.open(tmp_path / "data" / "skillchat" / "chats.db") as store:
        chat = store.create_chat("m")
        store.append_message(chat.id, {"role": "user", "content": "hi"})
        store.record_attachment(chat.id, "/ws", "src/app.py", SHA, 1234)

    def run(*args: str) -> str:
        done = skillchat("chats", *args, chat.id, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    line = "src/app.py (1,234 bytes, sha256 aaaaaaaaaaaa)"
    assert f"attached: {line}" in run("show")
    assert f"  - `{line}`" in run("export")
    exported = json.loads(run("export", "--format", "json"))
    [attached] = exported["chat"]["attached_files"]
    assert attached["path"] == "src/app.py" and attached["sha256"] == SHA
