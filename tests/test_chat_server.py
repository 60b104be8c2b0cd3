"""A chat remembers its server: `-c` goes back to the api_base and backend it was
made with (the command line still wins), `/model` switches are saved, no
credentials are stored, and a chat saved before this (schema 2) keeps working."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import session_options, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.chats.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.config import user_data_dir


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def ask(*args: str):
    return skillchat("ask", "--no-tools", *args)


def test_continue_goes_back_to_the_chats_server(
    server: ScriptedServer, other: ScriptedServer
) -> None:
    server.script(reply("one"), reply("two"))
    other.script(reply("three"))
    assert ask("--model", "openai/local-m", "--api-base", server.base_url, "first").returncode == 0
    done = ask("-c", "second")  # no --api-base: the chat's own server
    assert done.returncode == 0 and done.stdout.strip() == "two", done.stderr
    assert [c.body["model"] for c in server.completions] == ["local-m", "local-m"]
    done = ask("-c", "--api-base", other.base_url, "third")  # the command line wins
    assert done.returncode == 0 and done.stdout.strip() == "three", done.stderr


def test_no_credentials_are_stored(server: ScriptedServer) -> None:
    server.script(reply("ok"))
    base = server.base_url.replace("http://", "http://user:hunter2@")
    assert ask("--model", "openai/m", "--api-base", base, "hi").returncode == 0
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
    assert chat is not None and chat.api_base == server.base_url and chat.backend == "auto"
    assert b"hunter2" not in (user_data_dir() / "chats.db").read_bytes()


def test_a_model_switch_is_saved_with_the_chat(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    (tmp_path / "none").mkdir()
    server.script(reply("first"), reply("second"), reply("resumed"))
    session = pty_sessions(*session_options(server, tmp_path / "none"))
    session.prompt()
    assert "first" in session.run("hello")
    assert "model: openai/switched" in session.run("/model openai/switched")
    assert "second" in session.run("again")
    assert session.quit() == 0
    done = ask("-c", "once more")
    assert done.returncode == 0 and done.stdout.strip() == "resumed", done.stderr
    assert server.completions[-1].body["model"] == "switched"


def test_a_chat_saved_by_schema_2_migrates_and_keeps_its_model(server: ScriptedServer) -> None:
    path = user_data_dir() / "chats.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        for statements in MIGRATIONS[:2]:
            for sql in statements:
                conn.execute(sql)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 2")
        conn.execute(
            "INSERT INTO chats (id, model, created_at, updated_at) VALUES "
            "('0badc0de', 'openai/old-m', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
        )
    server.script(reply("still here"))
    done = ask("--chat", "0badc0de", "--api-base", server.base_url, "hi")
    assert done.returncode == 0 and done.stdout.strip() == "still here", done.stderr
    assert server.completions[0].body["model"] == "old-m"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
