"""`-c` continues the last chat of this folder (Claude Code's -c) with the chat's own
workspace, said when it differs; `--chat ID` still reaches any chat; a database from
before folders were recorded migrates with every chat kept."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from helpers import ask_in, session_options, write_files
from openai_server import ScriptedServer, reply

from skillchat.chats.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "shop", {"src/cart.py": "x = 1\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def chat_id(done: subprocess.CompletedProcess) -> str:
    return done.stderr.rsplit("chat ", 1)[1].split()[0]


def test_c_continues_the_last_chat_of_this_folder(
    server: ScriptedServer, repo: Path, tmp_path: Path
) -> None:
    elsewhere = write_files(tmp_path / "elsewhere", {"a.txt": "a\n"})
    server.script(reply("in shop"), reply("elsewhere"), reply("back"), reply("new"))
    here = ask_in(server, "first in shop", cwd=repo)
    there = ask_in(server, "first elsewhere", cwd=elsewhere)  # the most recent chat
    assert here.returncode == 0 and there.returncode == 0, here.stderr + there.stderr
    again = ask_in(server, "-c", "more", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert chat_id(again) == chat_id(here)
    assert [m["content"] for m in server.completions[-1].body["messages"][1:]] == [
        "first in shop",
        "in shop",
        "more",
    ]
    fresh = ask_in(server, "-c", "hi", cwd=tmp_path)  # no chat started here
    assert "no saved chat of this folder to continue" in fresh.stderr
    assert chat_id(fresh) not in (chat_id(here), chat_id(there))


def test_c_keeps_the_chats_workspace_and_says_it_differs(
    server: ScriptedServer, repo: Path
) -> None:
    server.script(reply("one"), reply("two"), reply("three"))
    first = ask_in(server, "--no-workspace", "hi", cwd=repo)
    assert first.returncode == 0, first.stderr
    again = ask_in(server, "-c", "look at @src/cart.py", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert f"goes on with its workspace (none), not {repo}" in again.stderr
    assert "not attached: @src/cart.py: no workspace" in again.stderr
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.get_chat(chat_id(first))
        assert chat.folder == str(repo) and chat.workspace is None


def test_chat_id_reaches_a_chat_of_another_folder(
    server: ScriptedServer, repo: Path, tmp_path: Path
) -> None:
    server.script(reply("one"), reply("two"))
    first = ask_in(server, "hi", cwd=repo)
    other = ask_in(server, "--chat", chat_id(first), "again", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    assert chat_id(other) == chat_id(first)
    assert f"goes on with its workspace {repo}, not (none)" in other.stderr


def test_a_schema_3_database_migrates_and_keeps_its_chats(
    server: ScriptedServer, repo: Path
) -> None:
    path = user_data_dir() / "chats.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        for statements in MIGRATIONS[:3]:
            for sql in statements:
                conn.execute(sql)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 3")
        conn.execute(
            "INSERT INTO chats (id, model, title, created_at, updated_at, message_count)"
            " VALUES ('0badc0de', 'openai/test-model', 'old one', '2026-01-01T00:00:00Z',"
            " '2026-01-01T00:00:00Z', 2)"
        )
        conn.execute(
            "INSERT INTO messages (chat_id, seq, role, content, created_at) VALUES"
            " ('0badc0de', 0, 'user', 'kept words', '2026-01-01T00:00:00Z'),"
            " ('0badc0de', 1, 'assistant', 'old answer', '2026-01-01T00:00:00Z')"
        )
    server.script(reply("new chat"), reply("old chat"))
    done = ask_in(server, "-c", "hi", cwd=repo)  # the old chat has no folder: not this one
    assert done.returncode == 0 and "no saved chat of this folder" in done.stderr, done.stderr
    old = ask_in(server, "--chat", "0badc0de", "and?", cwd=repo)
    assert old.returncode == 0, old.stderr
    assert "goes on with its workspace" not in old.stderr  # unknown then: this start's
    contents = [m.get("content") for m in server.completions[-1].body["messages"][1:]]
    assert contents == ["kept words", "old answer", "and?"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
        assert conn.execute("SELECT title, folder FROM chats WHERE id = '0badc0de'").fetchone() == (
            "old one",
            None,
        )


def test_a_chats_workspace_that_is_gone_is_one_line(
    server: ScriptedServer, repo: Path, tmp_path: Path
) -> None:
    server.script(reply("one"), reply("two"))
    first = ask_in(server, "hi", cwd=repo)
    moved = tmp_path / "moved"
    repo.rename(moved)
    done = ask_in(server, "--chat", chat_id(first), "again", cwd=tmp_path)
    assert done.returncode == 2 and "this chat's workspace:" in done.stderr, done.stderr
    assert len(server.completions) == 1
    done = ask_in(server, "--chat", chat_id(first), "--no-workspace", "again", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_repl_continues_the_chat_of_its_folder(
    server: ScriptedServer, repo: Path, tmp_path: Path, pty_sessions
) -> None:
    empty = Path.home() / "no-skills"
    empty.mkdir(exist_ok=True)
    server.script(reply("from the shop"))
    first = ask_in(server, "in the shop", cwd=repo)
    assert first.returncode == 0, first.stderr
    session = pty_sessions(*session_options(server, empty), "-c", cwd=repo)
    assert f"resumed chat {chat_id(first)}" in session.prompt()
    assert session.quit() == 0
    other = pty_sessions(*session_options(server, empty), "-c", cwd=tmp_path)
    assert "no saved chat of this folder to continue" in other.prompt()
    assert other.quit() == 0
