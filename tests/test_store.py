"""The chat store's API against real SQLite files: round trips, listing, prefixes,
what may be stored (the no-SKILL.md-body rule above all), resuming after a crash.
Crashes, concurrent writers and refused files are in test_store_safety.py."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillchat.chats.messages import IMAGE_STUB, NO_RESULT, make_title
from skillchat.chats.store import ChatStore
from skillchat.errors import UnknownChatError
from skillchat.tools.skill_tools import SKILL_FILE_STUB_NOTE, STUB_NOTE
from skillchat.tools.toolbox import stored_result

pytestmark = pytest.mark.usefixtures("home_in_tmp_path")


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "dir" / "chats.db"


def call(call_id: str, name: str, **args: object) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def tool(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def skill_result(name: str, body: str) -> str:
    return json.dumps({"skill_name": name, "documentation": body, "frontmatter": {}, "files": []})


def stub(name: str, **more: str) -> str:
    return json.dumps({"skill_name": name, **more, "stub": STUB_NOTE})


# -- round trip ---------------------------------------------------------------------------


def test_round_trip_rebuilds_the_transcript_with_skill_bodies_stubbed(store: ChatStore) -> None:
    chat = store.create_chat("gpt-test")
    assistant_calls = {
        "role": "assistant",
        "content": "Let me load it.",
        "tool_calls": [
            call("c1", "get_skill", skill_name="calc"),
            call("c2", "read_file_in_skill", skill_name="calc", file_path="refs/A.md"),
        ],
    }
    appended = [
        {"role": "user", "content": "What is 2+2?"},
        assistant_calls,
        tool("c1", skill_result("calc", "# Calc\nAdd numbers.")),
        tool("c2", "reference text ✓"),
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "and 3+3?"},
        {"role": "assistant", "content": "It is"},  # cut by Ctrl-C
    ]
    for message in appended[:-1]:
        usage = (
            {"prompt_tokens": 5, "completion_tokens": 1} if message["role"] == "assistant" else None
        )
        store.append_message(chat.id, message, usage=usage)
    store.append_message(chat.id, appended[-1], interrupted=True)

    expected = [dict(m) for m in appended]
    expected[2] = tool("c1", stub("calc"))
    file_stub = {"skill_name": "calc", "file_path": "refs/A.md", "stub": SKILL_FILE_STUB_NOTE}
    expected[3] = tool("c2", json.dumps(file_stub))
    transcript = store.load_transcript(chat.id)
    assert transcript.messages == expected
    assert transcript.chat.activated_skills == ("calc",)
    assert transcript.chat.message_count == 7
    assert transcript.chat.title == "What is 2+2?"

    stored = store.load_messages(chat.id)
    assert [s.seq for s in stored] == list(range(7))
    assert [s.interrupted for s in stored] == [False] * 6 + [True]
    assert stored[1].usage == {"prompt_tokens": 5, "completion_tokens": 1}
    assert stored[0].usage is None


def test_content_parts_and_unknown_keys_survive_and_images_become_a_line(
    store: ChatStore,
) -> None:
    chat = store.create_chat("m")
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    store.append_message(chat.id, {"role": "user", "content": parts})
    store.append_message(chat.id, {"role": "assistant", "content": "ok", "refusal": None})
    assert store.load_transcript(chat.id).messages == [
        {"role": "user", "content": [parts[0], {"type": "text", "text": IMAGE_STUB}]},
        {"role": "assistant", "content": "ok", "refusal": None},
    ]
    assert store.get_chat(chat.id).title is None  # no text content: no title yet


def test_usage_may_be_a_dataclass(store: ChatStore) -> None:
    @dataclass(frozen=True)
    class Usage:
        prompt_tokens: int = 3
        completion_tokens: int = 4

    chat = store.create_chat("m")
    store.append_message(chat.id, {"role": "assistant", "content": "x"}, usage=Usage())
    assert store.load_messages(chat.id)[0].usage == {"prompt_tokens": 3, "completion_tokens": 4}


def test_title_is_the_first_user_message_trimmed(store: ChatStore) -> None:
    chat = store.create_chat("m")
    store.append_message(chat.id, {"role": "user", "content": "  \n  "})
    store.append_message(chat.id, {"role": "user", "content": "  plot\n the   data " + "x" * 200})
    store.append_message(chat.id, {"role": "user", "content": "second"})
    title = store.get_chat(chat.id).title
    assert title is not None and title.startswith("plot the data x") and title.endswith("…")
    assert len(title) == 80
    assert make_title("a" * 80) == "a" * 80


def activate(store: ChatStore, chat_id: str, name: str, call_id: str) -> None:
    """A get_skill call of `name` and its successful result, as a chat records them."""
    calls = [call(call_id, "get_skill", skill_name=name)]
    store.append_message(chat_id, {"role": "assistant", "content": None, "tool_calls": calls})
    store.append_message(chat_id, tool(call_id, skill_result(name, "body")))


def test_activated_skills_are_names_in_order_without_duplicates(store: ChatStore) -> None:
    chat = store.create_chat("m")
    activate(store, chat.id, "pdf", "a")
    activate(store, chat.id, "calc", "b")
    activate(store, chat.id, "pdf", "c")
    assert store.get_chat(chat.id[:4]).activated_skills == ("pdf", "calc")


def test_list_is_newest_first_with_counts_and_last_chat_follows(store: ChatStore) -> None:
    assert store.list_chats() == [] and store.last_chat() is None
    chats = [store.create_chat(f"m{i}") for i in range(3)]
    store.append_message(chats[0].id, {"role": "user", "content": "bump"})
    listed = store.list_chats()
    assert [c.id for c in listed] == [chats[0].id, chats[2].id, chats[1].id]
    assert [c.message_count for c in listed] == [1, 0, 0]
    assert [c.id for c in store.list_chats(limit=2)] == [chats[0].id, chats[2].id]
    last = store.last_chat()
    assert last is not None and last.id == chats[0].id and last.title == "bump"


def test_prefix_lookup_unique_ambiguous_unknown(store: ChatStore) -> None:
    chats = [store.create_chat("m") for _ in range(17)]  # 17 ids, 16 first digits: a clash
    first = {}
    for c in chats:
        first.setdefault(c.id[0], []).append(c.id)
    clash = next(ids for ids in first.values() if len(ids) > 1)
    with pytest.raises(UnknownChatError, match="ambiguous"):
        store.get_chat(clash[0][0])
    one = chats[0].id
    assert store.get_chat(one).id == one
    assert store.get_chat(one.upper()).id == one
    unique = next(one[:n] for n in range(1, 9) if sum(c.id.startswith(one[:n]) for c in chats) == 1)
    assert store.get_chat(unique).id == one
    missing = next(f"{n:08x}" for n in range(20) if f"{n:08x}" not in {c.id for c in chats})
    for bad in (missing, "zz", "", "0123456789", "1%"):
        with pytest.raises(UnknownChatError, match="no saved chat"):
            store.get_chat(bad)


def test_delete_removes_the_chat_its_messages_and_skills(store: ChatStore, db: Path) -> None:
    keep, gone = store.create_chat("m"), store.create_chat("m")
    for chat in (keep, gone):
        store.append_message(chat.id, {"role": "user", "content": "hi"})
        activate(store, chat.id, "calc", "a")
    store.delete_chat(gone.id)
    assert [c.id for c in store.list_chats()] == [keep.id]
    with pytest.raises(UnknownChatError):
        store.get_chat(gone.id)
    with pytest.raises(UnknownChatError):
        store.delete_chat(gone.id)
    raw = sqlite3.connect(db)
    assert raw.execute("SELECT count(*) FROM messages").fetchone() == (3,)  # keep's
    assert raw.execute("SELECT count(*) FROM chat_skills").fetchone() == (1,)
    raw.close()


def test_writes_to_an_unknown_chat_fail(store: ChatStore) -> None:
    for action in (
        lambda: store.append_message("deadbeef", {"role": "user", "content": "x"}),
        lambda: store.append_message("deadbeef", tool("a", skill_result("x", "body"))),
        lambda: store.load_messages("deadbeef"),
    ):
        with pytest.raises(UnknownChatError):
            action()


# -- what may be stored ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"role": "system", "content": "rules + SKILL.md body"},
        {"role": "robot", "content": "x"},
        {"role": "user", "content": "x", "tool_calls": []},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]},
        {"role": "tool", "content": "x"},
        {"role": "tool", "tool_call_id": "nope", "content": "x"},
        {"role": "user", "content": "x", "weird": object()},
    ],
)
def test_malformed_messages_are_refused_and_nothing_is_stored(
    store: ChatStore, message: dict
) -> None:
    chat = store.create_chat("m")
    with pytest.raises(ValueError):
        store.append_message(chat.id, message)
    assert store.get_chat(chat.id).message_count == 0


def test_tool_results_must_answer_a_pending_call_once(store: ChatStore) -> None:
    chat = store.create_chat("m")
    store.append_message(
        chat.id, {"role": "assistant", "content": None, "tool_calls": [call("a", "list_skills")]}
    )
    store.append_message(chat.id, tool("a", '{"skills": []}'))
    with pytest.raises(ValueError, match="no pending call"):
        store.append_message(chat.id, tool("a", "again"))
    store.append_message(chat.id, {"role": "user", "content": "next"})
    with pytest.raises(ValueError, match="no pending call"):
        store.append_message(chat.id, tool("a", "late"))
    assert store.get_chat(chat.id).message_count == 3


def test_a_store_opened_without_a_keep_policy_refuses_tool_messages(db: Path) -> None:
    """The store knows no tool: what it keeps of a result is the policy it was handed,
    and without one a tool result is refused, never stored whole."""
    with ChatStore.open(db) as plain:
        chat = plain.create_chat("m")
        plain.append_message(chat.id, {"role": "user", "content": "hi"})
        plain.append_message(
            chat.id, {"role": "assistant", "content": None, "tool_calls": [call("a", "get_skill")]}
        )
        with pytest.raises(RuntimeError, match="without `keep`"):
            plain.append_message(chat.id, tool("a", skill_result("calc", "BODY")))
    with ChatStore.open(db, keep=stored_result) as kept:
        kept.append_message(chat.id, tool("a", skill_result("calc", "BODY")))
        assert "BODY" not in json.dumps(kept.load_transcript(chat.id).messages)


def without_skill_body(tool: str, arguments: str, content: str) -> tuple[str, str | None]:
    stored = stored_result(tool, arguments, content)
    return stored.content, stored.activated


def test_skill_body_rule() -> None:
    body = skill_result("calc", "BODY")
    assert without_skill_body("get_skill", '{"skill_name": "calc"}', body) == (stub("calc"), "calc")
    error = json.dumps({"error": "Skill 'x' not found in skills folder", "error_code": "NOT_FOUND"})
    assert without_skill_body("get_skill", '{"skill_name": "x"}', error) == (error, None)
    # Not JSON at all: still stubbed (it may be a body), named from the arguments.
    assert without_skill_body("get_skill", '{"skill_name": "y"}', "BODY") == (stub("y"), None)
    assert without_skill_body("get_skill", "not json", "BODY") == (
        json.dumps({"skill_name": None, "stub": STUB_NOTE}),
        None,
    )
    for path in ("SKILL.md", "./skill.md", "SKILL.md/", ".\\SKILL.MD"):
        args = json.dumps({"skill_name": "calc", "file_path": path})
        assert without_skill_body("read_file_in_skill", args, "BODY") == (
            stub("calc", file_path=path),
            None,
        )
    error = "ERROR: File not found"
    args = json.dumps({"skill_name": "calc", "file_path": "SKILL.md"})
    assert without_skill_body("read_file_in_skill", args, error) == (error, None)
    # Any other file of a skill is stubbed too: its content is the skill's.
    args = json.dumps({"skill_name": "calc", "file_path": "refs/SKILL.md"})
    file_stub = {"skill_name": "calc", "file_path": "refs/SKILL.md", "stub": SKILL_FILE_STUB_NOTE}
    assert without_skill_body("read_file_in_skill", args, "text") == (json.dumps(file_stub), None)
    assert without_skill_body("list_skills", "{}", '{"skills": ["a"]}') == (
        '{"skills": ["a"]}',
        None,
    )


def test_no_skill_md_body_reaches_the_database_files(store: ChatStore, db: Path) -> None:
    marker = "MARKER-5f1c9e0b-never-on-disk"
    chat = store.create_chat("m")
    store.append_message(chat.id, {"role": "user", "content": "/calc add"})
    calls = [
        call("a", "get_skill", skill_name="calc"),
        call("b", "read_file_in_skill", skill_name="calc", file_path="SKILL.md"),
    ]
    store.append_message(chat.id, {"role": "assistant", "content": None, "tool_calls": calls})
    store.append_message(chat.id, tool("a", skill_result("calc", f"# Calc\n{marker}\n")))
    store.append_message(chat.id, tool("b", f"---\nname: calc\n---\n{marker}"))
    store.append_message(chat.id, {"role": "assistant", "content": "done"})
    files = [db, db.with_name(db.name + "-wal")]
    assert files[1].exists()  # the WAL holds the recent pages while the store is open
    for f in files:
        assert marker.encode() not in f.read_bytes()
    assert marker not in json.dumps(store.load_transcript(chat.id).messages)
    store.close()
    assert marker.encode() not in db.read_bytes()


# -- resuming after a crash -------------------------------------------------------------------


def test_transcript_answers_calls_a_crash_left_open(store: ChatStore) -> None:
    chat = store.create_chat("m")
    calls = [call("a", "list_skills"), call("b", "get_skill", skill_name="calc")]
    store.append_message(chat.id, {"role": "user", "content": "go"})
    store.append_message(chat.id, {"role": "assistant", "content": None, "tool_calls": calls})
    store.append_message(chat.id, tool("a", '{"skills": ["calc"]}'))
    # The session died here; on resume the user types again.
    store.append_message(chat.id, {"role": "user", "content": "still there?"})
    store.append_message(chat.id, {"role": "assistant", "content": ""}, interrupted=True)
    messages = store.load_transcript(chat.id).messages
    assert [(m["role"], m.get("tool_call_id")) for m in messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "a"),
        ("tool", "b"),
        ("user", None),
    ]
    assert messages[3]["content"] == NO_RESULT
    assert len(store.load_messages(chat.id)) == 5  # show/export still see everything
