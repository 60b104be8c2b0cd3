"""A chat remembers its server: `-c` goes back to the api_base and backend it was
made with (the command line still wins), or to the local model file a `--gguf` chat
was made with; `/model` switches are saved, no credentials are stored, and a chat
saved before this (schema 2) keeps working."""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession, plain

from skillchat.chats.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir


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
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7


# A chat made with --gguf remembers its model file, as a server chat its api_base. The
# chat is saved through the real store as the recorder saves one (a --gguf run needs the
# real model: tests/test_local_model.py continues one end to end); the file here is a
# real but broken GGUF, so what is proven is that -c, --chat ID and /resume load the
# chat's file (its one-line error) instead of asking for an API key, and that the
# command line still wins.
BROKEN_GGUF = b"GGUF\x03\x00\x00\x00"


def gguf_chat(tmp_path: Path) -> tuple[str, Path]:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(BROKEN_GGUF)
    path = user_data_dir() / "chats.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with ChatStore.open(path) as store:
        chat = store.create_chat(
            "tiny", None, "openai", folder=os.path.realpath(os.getcwd()), gguf=str(model)
        )
        store.append_message(chat.id, {"role": "user", "content": "hi"})
        store.append_message(chat.id, {"role": "assistant", "content": "hello"})
    return chat.id, model


def the_files_error(line: str, model: Path) -> bool:
    """The local model's own error for this file (or, without the [local] extra, its
    install line): never the API key's."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "skillchat's [local] extra" in line and "API_KEY" not in line
    return f"{model}: corrupt or truncated GGUF model file" in line and "API_KEY" not in line


def test_a_gguf_chat_continues_with_its_model_file_not_an_api_key(
    server: ScriptedServer, tmp_path: Path
) -> None:
    chat_id, model = gguf_chat(tmp_path)
    assert "OPENAI_API_KEY" not in os.environ
    assert the_files_error(one_line_error(ask("-c", "again")), model)
    assert the_files_error(one_line_error(ask("--chat", chat_id, "again")), model)
    server.script(reply("served"))
    done = ask("-c", "--api-base", server.base_url, "again")  # the command line wins
    assert done.returncode == 0 and done.stdout.strip() == "served", done.stderr
    sent = server.completions[0].body["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == ["hi", "hello", "again"]


def test_the_repl_continues_and_resumes_a_gguf_chat_with_its_file(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    chat_id, model = gguf_chat(tmp_path)
    started = pty_sessions("-c")  # the REPL: no key asked for, the chat's file loaded
    assert the_files_error(plain(started.expect("\n", timeout=30) + started.child.read()), model)
    assert started.wait() == 1
    config = tmp_path / "server.toml"  # a configured server: the chat's own file wins
    config.write_text(f'model = "openai/m"\napi_base = "{server.base_url}"\n')
    session = pty_sessions("--config", str(config))
    session.prompt()
    said = session.run(f"/resume {chat_id}")
    assert the_files_error(" ".join(said.split()), model)
    assert session.quit() == 0


def test_the_repl_continues_on_the_chats_server(
    server: ScriptedServer, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply("one"), reply("two"))
    assert ask("--model", "openai/local-m", "--api-base", server.base_url, "first").returncode == 0
    session = pty_sessions("-c", "--no-tools")  # no --api-base, no key: the chat's server
    session.prompt()
    assert "two" in session.run("second")
    assert session.quit() == 0
    assert [c.body["model"] for c in server.completions] == ["local-m", "local-m"]


def test_a_continued_chat_is_fitted_to_its_own_servers_window(
    server: ScriptedServer,
    other: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """The configured server reports 4,096 tokens, the chat's own 32,768: `-c` and
    `--chat ID` fit to the chat's server (a quarter of its window for the reply), as
    does `/resume`; a table naming that server's model states its window instead."""
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    other.props = {"default_generation_settings": {"n_ctx": 32768}}
    other.script(*(reply(said) for said in ("one", "two", "three", "four", "five", "six")))
    assert ask("--model", "openai/m", "--api-base", other.base_url, "first").returncode == 0
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
    assert chat is not None
    config = tmp_path / "config.toml"
    config.write_text(f'model = "openai/m"\napi_base = "{server.base_url}"\n')
    for resume in (["-c"], ["--chat", chat.id]):
        done = ask("--config", str(config), *resume, "again")
        assert done.returncode == 0, done.stderr
    stated = f'[models.o]\nmodel = "openai/m"\napi_base = "{other.base_url}"\n'
    stated += "context_window = 8000\n"
    config.write_text(config.read_text() + stated)
    assert ask("--config", str(config), "-c", "stated").returncode == 0
    config.write_text(f'model = "openai/m"\napi_base = "{server.base_url}"\n')
    session = pty_sessions("--config", str(config), "--no-tools")
    session.prompt()
    session.run(f"/resume {chat.id}")
    assert "five" in session.run("resumed")
    session.run("/model openai/plain")  # another model: on the resumed chat's server
    assert "six" in session.run("switched")
    assert session.quit() == 0
    assert [c.body["max_tokens"] for c in other.completions] == [8192] * 3 + [2000] + [8192] * 2
    assert other.completions[-1].body["model"] == "plain"
    assert server.completions == []
