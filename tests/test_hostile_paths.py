"""Local paths that are not the file they claim to be: a device, a FIFO, JSON nested
100,000 deep, a dangling symlink or a damaged table as the chat database. Each is one
line on stderr and a non-zero exit, with nothing sent to the model and no hang (every
run has a timeout, so a blocking open fails the test instead of stalling it)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer, reply

from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def empty_skills() -> Path:
    folder = Path.home() / "no-skills"
    folder.mkdir(exist_ok=True)
    return folder


def ask(server: ScriptedServer, *args: str):  # type: ignore[no-untyped-def]
    return skillchat("ask", *session_options(server, empty_skills()), *args, timeout=30)


# --- eval query files -------------------------------------------------------------


def test_eval_of_a_device_is_one_line(server: ScriptedServer) -> None:
    done = skillchat("eval", "/dev/zero", *session_options(server, empty_skills()), timeout=30)
    assert "/dev/zero: not a query file: it is a device" in one_line_error(done, 2)
    assert not server.completions


def test_eval_of_a_fifo_is_one_line(server: ScriptedServer, tmp_path: Path) -> None:
    path = fifo(tmp_path / "eval_queries.json")
    done = skillchat("eval", str(path), *session_options(server, empty_skills()), timeout=30)
    assert "not a query file: it is a FIFO" in one_line_error(done, 2)


def test_eval_of_json_nested_100k_deep_is_one_line(server: ScriptedServer, tmp_path: Path) -> None:
    path = tmp_path / "eval_queries.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    done = skillchat("eval", str(path), *session_options(server, empty_skills()), timeout=30)
    assert "eval_queries.json: not JSON skillchat can read (nested too deeply)" in one_line_error(
        done, 2
    )
    assert "RecursionError" not in done.stderr


# --- --gguf -------------------------------------------------------------------------


def test_a_fifo_as_the_gguf_model_is_one_line(tmp_path: Path) -> None:
    path = fifo(tmp_path / "model.gguf")
    done = skillchat("ask", "--gguf", str(path), "hi", timeout=30)
    assert "model.gguf: not a GGUF model file: it is a FIFO" in one_line_error(done)


# --- the chat database --------------------------------------------------------------


COMMANDS = [["skills", "stats"], ["chats", "list"], ["ask", "hi"]]


def run(server: ScriptedServer, command: list[str]):  # type: ignore[no-untyped-def]
    """`command` on the test's chat database, skills from an empty folder."""
    if command[0] == "ask":
        return ask(server, *command[1:])
    skills = ["--skills-dir", str(empty_skills())] if command[0] == "skills" else []
    return skillchat(*command, *skills, timeout=30)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_fifo_as_the_chat_database(server: ScriptedServer, command: list[str]) -> None:
    fifo(user_data_dir() / "chats.db")
    done = run(server, command)
    assert "chats.db: not a chat database: it is a FIFO" in one_line_error(done)
    assert not server.completions


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_dangling_symlink_as_the_chat_database_creates_nothing(
    server: ScriptedServer, command: list[str], tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere" / "made.db"
    target.parent.mkdir()
    database = user_data_dir() / "chats.db"
    database.parent.mkdir(parents=True)
    database.symlink_to(target)
    done = run(server, command)
    assert "is a symlink to a file that does not exist" in one_line_error(done)
    assert not target.exists()
    assert not server.completions


def break_chats_table(path: Path) -> None:
    """A saved chat, then the `chats` table's root page overwritten with garbage."""
    with ChatStore.open(path) as store:
        chat = store.create_chat("openai/test-model")
        store.append_message(chat.id, {"role": "user", "content": "earlier"})
    with sqlite3.connect(path) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'chats'").fetchone()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with path.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * page_size)


def test_a_damaged_chats_table_fails_before_the_question_is_sent(server: ScriptedServer) -> None:
    database = user_data_dir() / "chats.db"
    break_chats_table(database)
    server.script(reply("an answer that could not be saved"))
    done = ask(server, "hi")
    line = one_line_error(done)
    assert "chat database is unreadable" in line and "move it aside" in line
    assert not server.completions
    assert done.stdout == ""
