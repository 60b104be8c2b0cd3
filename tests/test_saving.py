"""Saving chats as they happen, in process: the real loop, through the real
SDK, against the scripted server, recording into a real database. Each test checks
what reached the database and, on resume, what skillchat sent back to the model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from chat_helpers import (
    RecordingView,
    registry,
    sent,
    settings_for,
    system_text,
    tool_messages,
    write_skill,
)
from openai_server import call, reply

from skillchat.chats import store as store_mod
from skillchat.chats.store import ChatStore
from skillchat.engine.request import INTERRUPTED_MARK
from skillchat.engine.resolve import asked, continued
from skillchat.recorder import sigint_deferred
from skillchat.session import Session
from skillchat.session_settings import chosen_transcript
from skillchat.skills.registry import Registry
from skillchat.tools.skill_tools import SKILL_FILE_STUB_NOTE, STUB_NOTE

BODY = "# Calculator\n\nCarry every digit. Marker: BODY-7f3a\n"
REF = "Rounding table. Marker: REF-90c2\n"


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    files = {"ref.md": REF}
    return registry(write_skill(root, "calculator", BODY, files), directories=(root,))


def start(server, skills, store, view=None, transcript=None, **overrides):
    settings = settings_for(server, **overrides)
    listeners = [view or RecordingView()]
    session = Session(
        settings, registry=skills, store=store, transcript=transcript, listeners=listeners
    )
    return session.chat, session.recorder


def rows(store: ChatStore, chat_id: str) -> list[tuple[str, bool, dict | None]]:
    return [(m.message["role"], m.interrupted, m.usage) for m in store.load_messages(chat_id)]


def test_every_message_is_saved_with_its_usage_and_the_skill_as_a_name(
    server, skills, store
) -> None:
    server.script(
        reply("Loading.", calls=[call("get_skill", {"skill_name": "calculator"})]),
        reply("39.1", usage={"prompt_tokens": 30, "completion_tokens": 2}),
    )
    chat, recorder = start(server, skills, store)
    assert recorder.chat_id is None and store.list_chats() == []  # no empty chats
    chat.send("17% of 230?")
    assert recorder.chat_id is not None and not recorder.unsaved
    stored = store.load_messages(recorder.chat_id)
    assert stored[0].message == {"role": "user", "content": "17% of 230?"}
    assert [(role, cut) for role, cut, _ in rows(store, recorder.chat_id)] == [
        ("user", False),
        ("assistant", False),
        ("tool", False),
        ("assistant", False),
    ]
    assert stored[1].usage == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "cost": None,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
    }
    assert stored[3].usage is not None and stored[3].usage["total_tokens"] == 32
    assert json.loads(stored[2].message["content"])["stub"] == STUB_NOTE
    saved = store.get_chat(recorder.chat_id)
    assert saved.activated_skills == ("calculator",) and saved.model == "openai/test-model"
    assert chat.messages[2]["content"] != stored[2].message["content"]  # memory keeps the body


class StopAfter(RecordingView):
    """A view whose user presses Ctrl-C once `chunks` pieces of text have been shown."""

    def __init__(self, chunks: int) -> None:
        super().__init__()
        self.chunks = chunks

    def text(self, chunk: str) -> None:
        super().text(chunk)
        if len(self.of("text")) == self.chunks:
            raise KeyboardInterrupt


def test_an_interrupted_reply_is_saved_marked_and_the_chat_goes_on(server, skills, store) -> None:
    server.script(reply("one two three four five six", chunks=6), reply("fine"))
    chat, recorder = start(server, skills, store, view=StopAfter(2))
    with pytest.raises(KeyboardInterrupt):
        chat.send("count")
    assert recorder.chat_id is not None
    last = store.load_messages(recorder.chat_id)[-1]
    assert last.interrupted and last.message["content"].endswith(INTERRUPTED_MARK)
    assert last.message["content"].startswith("one two")
    chat.send("go on")  # StopAfter stops the 2nd piece only
    assert sent(server)[-2] == last.message  # the model sees what the user saw
    assert [cut for _, cut, _ in rows(store, recorder.chat_id)] == [False, True, False, False]


def test_resume_sends_the_stored_transcript_and_names_the_activated_skills(
    server, skills, store
) -> None:
    server.script(reply("It is 39.1."), reply("And 10% is 23."))
    first, recorder = start(server, skills, store)
    first.send("/calculator 17% of 230")
    transcript = chosen_transcript(store, last=True, chat_id=None, notify=print)
    assert transcript is not None and transcript.chat.id == recorder.chat_id
    second, again = start(server, skills, store, transcript=transcript)
    assert again.chat_id == recorder.chat_id
    second.send("and 10%?")
    messages = sent(server)
    assert messages[0]["role"] == "system"
    assert messages[1:] == [*transcript.messages, {"role": "user", "content": "and 10%?"}]
    stub = json.loads(messages[3]["content"])
    assert stub == {"skill_name": "calculator", "stub": STUB_NOTE}  # no body sent back
    assert "Skills activated in this chat" in (system_text(server) or "")
    assert "calculator" in (system_text(server) or "").rsplit("activated", 1)[1]
    assert store.get_chat(recorder.chat_id).message_count == 6


def test_the_system_message_stays_the_same_while_the_skill_is_in_the_chat(
    server, skills, store
) -> None:
    """A provider's (and a local server's) prompt cache holds only while the prompt's
    start is unchanged: an activation must not rewrite the system message while the
    skill's instructions are in the conversation."""
    server.script(
        reply("Loading.", calls=[call("get_skill", {"skill_name": "calculator"})]),
        reply("39.1"),
        reply("23"),
    )
    chat, _ = start(server, skills, store)
    chat.send("17% of 230")
    chat.send("and 10%?")
    assert chat.activated == ["calculator"]
    assert len(server.completions) == 3
    assert len({system_text(server, n) for n in range(3)}) == 1
    assert "Skills activated" not in (system_text(server) or "")


def test_a_stubbed_skill_is_served_again_after_resume(server, skills, store) -> None:
    server.script(
        reply("ok"),
        reply(calls=[call("get_skill", {"skill_name": "calculator"})]),
        reply("done"),
    )
    first, _ = start(server, skills, store)
    first.send("/calculator hi")
    transcript = chosen_transcript(store, last=True, chat_id=None, notify=print)
    second, _ = start(server, skills, store, transcript=transcript)
    second.send("load it again")
    result = json.loads(sent(server)[-1]["content"])
    assert result["documentation"] == BODY  # not ALREADY_IN_CONTEXT: the ledger began empty


def test_continue_with_no_saved_chat_starts_a_new_one(store) -> None:
    said: list[str] = []
    assert chosen_transcript(store, last=True, chat_id=None, notify=said.append) is None
    assert said == [
        "no saved chat of this folder to continue: starting a new one "
        "(`skillchat chats list` and --chat ID reach the others)"
    ]


def test_resume_keeps_the_chat_model_unless_model_is_a_flag(server, skills, store) -> None:
    server.script(reply("a"))
    chat, recorder = start(server, skills, store, model="openai/old-model")
    chat.send("hi")
    transcript = store.load_transcript(recorder.chat_id or "")
    fresh = settings_for(server, model="openai/new-model")
    assert continued(fresh, asked(fresh), transcript, {}).model == "openai/old-model"
    given = {"model": "flag"}  # --model on the command line
    assert continued(fresh, asked(fresh), transcript, given).model == "openai/new-model"


def test_a_failed_write_is_told_once_queued_and_saved_with_the_next_message(
    server, skills, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(store_mod, "BUSY_RETRIES", 1)
    server.script(reply("first"), reply("second"), reply("third"))
    db = tmp_path / "locked.db"
    view = RecordingView()
    with ChatStore.open(db) as store:
        chat, recorder = start(server, skills, store, view=view)
        chat.send("one")
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        chat.send("two")
        chat.send("three")  # still locked: told once, not per message
        notices = [n for n in view.of("notice") if "not saved" in n]
        assert len(notices) == 1 and "locked" in notices[0]
        assert recorder.pending == 4 and recorder.failure is not None
        other.execute("ROLLBACK")
        other.close()
        assert recorder.flush() and not recorder.unsaved
        assert view.of("notice")[-1] == f"chat {recorder.chat_id} saved again"
        contents = [m.message["content"] for m in store.load_messages(recorder.chat_id or "")]
    assert contents == ["one", "first", "two", "second", "three", "third"]


def test_no_tools_invocation_saves_no_body(server, skills, store, tmp_path) -> None:
    server.script(reply("ok"))
    chat, _ = start(server, skills, store, tools=False)
    chat.send("/calculator 2+2")
    assert "BODY-7f3a" in (system_text(server) or "")  # the body was sent, for this request
    store.close()
    for path in tmp_path.glob("chats.db*"):
        assert b"BODY-7f3a" not in path.read_bytes()


def test_ctrl_c_during_a_write_waits_for_the_commit() -> None:
    finished = False
    with pytest.raises(KeyboardInterrupt), sigint_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the signal has arrived: without the deferral, raised here
        finished = True
    assert finished
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_skill_file_is_stored_as_a_stub_and_read_again_after_resume(
    server, skills, store
) -> None:
    ref = call("read_file_in_skill", {"skill_name": "calculator", "file_path": "ref.md"})
    server.script(reply(calls=[ref]), reply("read it"))
    first, recorder = start(server, skills, store)
    first.send("read the table")
    assert recorder.chat_id is not None
    stored = store.load_messages(recorder.chat_id)[2].message["content"]
    assert json.loads(stored) == {
        "skill_name": "calculator",
        "file_path": "ref.md",
        "stub": SKILL_FILE_STUB_NOTE,
    }
    # Resumed: the ledger is empty, so the same read is served, not ALREADY_IN_CONTEXT.
    transcript = chosen_transcript(store, last=True, chat_id=None, notify=print)
    server.script(reply(calls=[ref]), reply("read it again"))
    second, _ = start(server, skills, store, transcript=transcript)
    second.send("again")
    assert tool_messages(server)[-1]["content"] == REF
    assert "REF-90c2" not in json.dumps([m.message for m in store.load_messages(recorder.chat_id)])
