"""Saved chats end to end with `skillchat ask` as a user runs it (a subprocess against
the scripted server): resuming after a restart, a SIGKILL mid-turn, two sessions
writing at once, no SKILL.md body on disk, and a database that cannot be opened."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_helpers import sent, system_text
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply

from skillchat.chats.messages import NO_RESULT
from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir

REPO = Path(__file__).resolve().parents[1]
MARKER = "UNIQUE-BODY-MARKER-5c1e"


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A skill whose SKILL.md body holds a marker that must never reach the database."""
    root = tmp_path / "skills"
    marked = skill_folder(
        root,
        "marked",
        "name: marked\ndescription: A skill with a marked body.\n",
        f"# Marked\n{MARKER}\n",
    )
    (marked / "notes.md").write_text("plain notes\n")
    return root


def argv(server: ScriptedServer, skills: Path, *args: str) -> list[str]:
    """A real process's argv: the tests using it run several sessions at once."""
    return [sys.executable, "-m", "skillchat", "ask", *session_options(server, skills), *args]


def ask(server: ScriptedServer, skills: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return skillchat("ask", *session_options(server, skills), *args, stdin=subprocess.DEVNULL)


def database() -> Path:
    return user_data_dir() / "chats.db"


def test_ask_saves_and_continue_resumes_with_the_transcript(server, skills) -> None:
    server.script(
        reply(
            "Loading.",
            calls=[call("read_file_in_skill", {"skill_name": "marked", "file_path": "notes.md"})],
        ),
        reply("first answer"),
        reply("second answer"),
    )
    first = ask(server, skills, "/marked what do the notes say?")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "first answer\n"  # nothing about the chat on stdout
    chat_id = first.stderr.rsplit("chat ", 1)[1].strip()
    second = ask(server, skills, "-c", "and then?")
    assert second.returncode == 0, second.stderr
    assert second.stderr.rstrip().endswith(f"chat {chat_id}")
    with ChatStore.open(database()) as store:
        transcript = store.load_transcript(chat_id)
    messages = sent(server)
    assert messages[1:] == transcript.messages[:-1]  # the rebuilt transcript, then the question
    assert messages[-1] == {"role": "user", "content": "and then?"}
    assert [m["role"] for m in messages[1:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    # A skill file's text is not stored either: the resumed model reads it again.
    assert json.loads(messages[5]["content"])["file_path"] == "notes.md"
    assert "plain notes" not in json.dumps(messages)
    activated = (
        "Skills activated in this chat (call get_skill again if their instructions "
        "are no longer in the conversation): marked"
    )
    assert activated in (system_text(server) or "")


def test_chat_id_resumes_that_chat_and_json_reports_it(server, skills) -> None:
    server.script(reply("one"), reply("two"), reply("three"))
    ids = [json.loads(ask(server, skills, "--json", q).stdout)["chat_id"] for q in ("a", "b")]
    done = ask(server, skills, "--json", "--chat", ids[0][:5], "again")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chat_id"] == ids[0]
    assert sent(server)[-3:] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "again"},
    ]
    unknown = ask(server, skills, "--chat", "ffffffff", "x")
    assert unknown.returncode == 1 and "no saved chat 'ffffffff'" in unknown.stderr
    both = ask(server, skills, "-c", "--chat", ids[0], "x")
    assert both.returncode == 2 and "not both" in both.stderr
    assert len(server.completions) == 3


def test_no_skill_body_anywhere_in_the_database_files(server, skills) -> None:
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "marked"})]),
        reply(
            calls=[call("read_file_in_skill", {"skill_name": "marked", "file_path": "SKILL.md"})]
        ),
        reply("done"),
    )
    done = ask(server, skills, "/marked go")
    assert done.returncode == 0, done.stderr
    assert MARKER in json.dumps(server.completions[-1].body)  # the model did get the body
    files = list(database().parent.glob("chats.db*"))
    assert files and all(MARKER.encode() not in f.read_bytes() for f in files)
    with ChatStore.open(database()) as store:
        chat = store.last_chat()
    assert chat is not None and chat.activated_skills == ("marked",)


def test_sigkill_mid_turn_keeps_every_completed_message(server, skills) -> None:
    server.script(
        reply(
            "Reading.",
            calls=[call("read_file_in_skill", {"skill_name": "marked", "file_path": "notes.md"})],
        ),
        reply("never finished", delay=30),
        reply("after the crash"),
    )
    child = subprocess.Popen(
        argv(server, skills, "what do the notes say?"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while len(server.completions) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(server.completions) == 2, "the second request never arrived"
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=10)
    raw = sqlite3.connect(database())
    assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    raw.close()
    with ChatStore.open(database()) as store:
        chat = store.last_chat()
        assert chat is not None
        stored = [m.message for m in store.load_messages(chat.id)]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool"]
    assert json.loads(stored[2]["content"])["file_path"] == "notes.md"  # a stub
    resumed = ask(server, skills, "-c", "try again")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "after the crash\n"
    assert sent(server)[1:] == [*stored, {"role": "user", "content": "try again"}]
    assert NO_RESULT not in json.dumps(sent(server))


def test_four_sessions_writing_at_once_all_keep_every_message(skills) -> None:
    notes = call("read_file_in_skill", {"skill_name": "marked", "file_path": "notes.md"})
    moves = [
        reply("a", calls=[notes], chunk_delay=0.02),
        reply("b", calls=[call("list_skills")], chunk_delay=0.02),
        reply("answer", chunks=10, chunk_delay=0.02),
    ]
    servers = [ScriptedServer(moves) for _ in range(4)]
    for server in servers:
        server.__enter__()
    try:
        children = [
            subprocess.Popen(
                argv(server, skills, f"question {n}"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n, server in enumerate(servers)
        ]
        for child in children:
            out, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
            assert out == "answer\n"
    finally:
        for server in servers:
            server.__exit__()
    with ChatStore.open(database()) as store:
        chats = store.list_chats()
        assert sorted(c.title or "" for c in chats) == [f"question {n}" for n in range(4)]
        for chat in chats:
            roles = [m.message["role"] for m in store.load_messages(chat.id)]
            assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_a_database_that_cannot_be_opened_stops_ask_before_any_request(server, skills) -> None:
    database().parent.mkdir(parents=True, exist_ok=True)
    database().write_bytes(b"this is not a database" * 10)
    done = ask(server, skills, "hello")
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "chat database is unreadable" in lines[0]
    assert "move it aside" in lines[0]
    assert not server.completions  # nothing was asked, so nothing was lost


def test_a_trailing_open_tool_call_is_answered_when_the_chat_resumes(server, skills) -> None:
    """A crash while tools ran leaves the assistant's calls with no results as the last
    message; providers reject a call without its result, so resuming answers each."""
    calls = [
        {
            "id": f"open{n}",
            "type": "function",
            "function": {"name": "list_skills", "arguments": "{}"},
        }
        for n in range(2)
    ]
    with ChatStore.open(database()) as store:
        chat = store.create_chat("openai/test-model")
        store.append_message(chat.id, {"role": "user", "content": "list them"})
        store.append_message(chat.id, {"role": "assistant", "content": None, "tool_calls": calls})
    server.script(reply("resumed"))
    resumed = ask(server, skills, "--chat", chat.id, "go on")
    assert resumed.returncode == 0, resumed.stderr
    messages = sent(server)[1:]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert [m["tool_call_id"] for m in messages[2:4]] == ["open0", "open1"]
    assert all(m["content"] == NO_RESULT for m in messages[2:4])
