"""A bad reply is an error result or one provider error, never a crash, and the chat
goes on (and keeps being saved) afterwards: wrong JSON types, lone surrogates,
arguments nested thousands deep and malformed chunks, played by the scripted server
exactly as a broken server would send them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import make_chat, registry, sent, tool_messages, write_skill
from helpers import BOTH_PROTOCOLS, provider_target, session_options, skillchat
from openai_server import call, reply

from skillchat.chats.store import ChatStore
from skillchat.errors import ProviderError
from skillchat.recorder import ChatRecorder
from skillchat.sections import user_data_dir
from skillchat.skills.registry import Registry
from skillchat.tools.toolbox import stored_result

DEEP = "[" * 5_000 + "]" * 5_000


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(write_skill(root, "calc", "# Calc\n"), directories=(root,))


def chunk(delta: dict[str, Any] | str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def with_arguments(arguments: Any) -> dict[str, Any]:
    """A reply whose one get_skill call carries `arguments` as the raw JSON value."""
    head = {"index": 0, "id": "c1", "type": "function"}
    function = {"name": "get_skill", "arguments": arguments}
    return {
        "events": [chunk({"tool_calls": [{**head, "function": function}]}), chunk({}, "tool_calls")]
    }


def test_arguments_of_the_wrong_json_type_become_error_results(server, skills) -> None:
    """(litellm drops such a call itself: there the reply is empty, not a crash.)"""
    server.script(
        with_arguments(5),
        with_arguments([1]),
        with_arguments(None),
        with_arguments({"skill_name": "calc"}),  # an object, not its text: still usable
        reply("done"),
    )
    chat = make_chat(server, skills)
    assert chat.send("go").answer == "done"
    results = [m["content"] for m in tool_messages(server)]
    assert "arguments must be a JSON object" in results[0]
    assert "arguments must be a JSON object" in results[1]
    assert "missing required argument 'skill_name'" in results[2]
    assert json.loads(results[3])["skill_name"] == "calc"


@BOTH_PROTOCOLS
@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_arguments_nested_thousands_deep_are_an_error_result(server, skills, backend) -> None:
    server.script(reply(calls=[call("get_skill", DEEP)]), reply("done"))
    result = make_chat(server, skills, backend=backend).send("go")
    assert result.answer == "done"
    assert "nested too deeply" in tool_messages(server)[0]["content"]
    assert result.tool_calls[0].result.is_error


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([chunk({"content": 12345}), chunk({}, "stop")], "'content' is int, not text"),
        ([chunk({"tool_calls": 5}), chunk({}, "stop")], "'tool_calls' is int, not a list"),
        (
            ["{not json", chunk({}, "stop")],
            "a chunk that is not JSON (Expecting property name enclosed in double quotes)",
        ),
    ],
)
def test_a_malformed_chunk_is_one_provider_error_and_the_chat_goes_on(
    server, skills, events, problem
) -> None:
    server.script({"events": events}, reply("fine"))
    chat = make_chat(server, skills)
    with pytest.raises(ProviderError) as raised:
        chat.send("go")
    assert str(raised.value) == f"a malformed reply from {server.base_url}: {problem}"
    assert chat.send("again").answer == "fine"


def test_choices_null_is_skipped(server, skills) -> None:
    server.script({"events": [{"choices": None}, chunk({"content": "hi"}), chunk({}, "stop")]})
    assert make_chat(server, skills).send("go").answer == "hi"


@BOTH_PROTOCOLS
@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_lone_surrogates_never_reach_the_transcript(server, skills, backend) -> None:
    """The model's "\\ud800" in text, a tool name and arguments: each is kept as U+FFFD,
    so later requests (and saves) still encode."""
    server.script(
        reply("half \ud800 a pair", calls=[call("get_\udc00skill", '{"skill_name": "\\ud800"}')]),
        reply(calls=[call("get_skill", '{"skill_name": "x\\udfff"}')]),
        reply("done \ud83d"),
        reply("next"),
    )
    chat = make_chat(server, skills, backend=backend)
    assert chat.send("go").answer == "done \ufffd"
    assert chat.send("and then").answer == "next"
    text = json.dumps(sent(server), ensure_ascii=False)
    assert "\ufffd" in text
    text.encode("utf-8")  # no lone surrogate anywhere in what was sent


def test_ask_survives_every_bad_reply_and_the_chat_is_saved(server, tmp_path) -> None:
    """Through the real command: each bad move ends `ask` as usual (answer or one error
    line), and a follow-up `ask -c` continues the saved chat."""
    skills_dir = tmp_path / "skills"
    write_skill(skills_dir, "calc", "# Calc\n")
    server.script(
        reply(calls=[call("get_skill", '{"skill_name": "\\ud800"}'), call("get_skill", DEEP)]),
        reply("first \ud800"),
        reply("second"),
    )
    options = session_options(server, skills_dir)
    first = skillchat("ask", *options, "--json", "go")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["answer"] == "first \ufffd"
    second = skillchat("ask", *options, "-c", "again")
    assert (second.returncode, second.stdout.strip()) == (0, "second"), second.stderr
    server.script({"events": [chunk({"content": 12345})]})
    third = skillchat("ask", *options, "-c", "once more")
    assert third.returncode == 1 and "a malformed reply from" in third.stderr
    assert "Traceback" not in third.stderr
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        users = [
            m.message["content"]
            for m in store.load_messages(chat.id)
            if m.message["role"] == "user"
        ]
    assert users == ["go", "again", "once more"]


@BOTH_PROTOCOLS
def test_the_repl_keeps_working_and_saving_after_a_bad_argument(server, tmp_path, pty_sessions):
    """Once, a lone surrogate in a tool argument made every later REPL message fail
    (it was stored, then re-sent, and no UTF-8 encoder takes it) and nothing more was
    saved."""
    skills_dir = tmp_path / "skills"
    write_skill(skills_dir, "calc", "# Calc\n")
    server.script(
        reply(calls=[call("get_skill", '{"skill_name": "\\ud800"}')]),
        reply("first answer"),
        reply("second answer"),
        reply("third answer"),
    )
    session = pty_sessions(*session_options(server, skills_dir), "--max-tokens", "900")
    session.prompt()
    assert "first answer" in session.run("one")
    assert "second answer" in session.run("two")
    assert "third answer" in session.run("three")
    assert session.quit() == 0
    assert {r.body["max_tokens"] for r in server.completions} == {900}
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        messages = [m.message for m in store.load_messages(chat.id)]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["one", "two", "three"]
    assert messages[-1]["content"] == "third answer"


def test_two_sessions_continuing_one_chat_both_save(tmp_path: Path) -> None:
    """Two sessions on one chat, their writes interleaved as two processes would: the
    second one's user message lands between the first's call and its results."""
    path = tmp_path / "chats.db"
    with (
        ChatStore.open(path, keep=stored_result) as one,
        ChatStore.open(path, keep=stored_result) as two,
    ):
        first = ChatRecorder(one, provider_target("m"))
        first.message({"role": "user", "content": "start"})
        second = ChatRecorder(two, provider_target("m"), first.chat_id)
        calls = [
            {"id": "a1", "type": "function", "function": {"name": "list_skills", "arguments": "{}"}}
        ]
        first.message({"role": "user", "content": "from one"})
        second.message({"role": "user", "content": "from two"})
        first.message({"role": "assistant", "content": None, "tool_calls": calls})
        second.message({"role": "assistant", "content": "two's answer"})
        first.message({"role": "tool", "tool_call_id": "a1", "content": "{}"})
        first.message({"role": "assistant", "content": "one's answer"})
        assert first.pending == 0 and second.pending == 0
        stored = [m.message for m in one.load_messages(first.chat_id)]
    assert [m.get("content") for m in stored][-3:] == ["two's answer", "{}", "one's answer"]


@BOTH_PROTOCOLS
def test_two_asks_continuing_one_chat_at_once_both_finish_and_save(server, tmp_path) -> None:
    """End to end, two processes at once (the exact interleaving that used to fail,
    a message landing between a call and its results, is forced in the test above)."""
    skills_dir = tmp_path / "skills"
    write_skill(skills_dir, "calc", "# Calc\n")
    options = session_options(server, skills_dir)
    server.script(reply("first"))
    assert skillchat("ask", *options, "start").returncode == 0
    slow = {"chunks": 10, "chunk_delay": 0.02}
    server.script(
        reply("a", calls=[call("list_skills")], **slow),
        reply("b", calls=[call("list_skills")], **slow),
        reply("done", **slow),
        reply("done", **slow),
    )
    # Real processes: the subject is two of them writing one chat at once.
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "skillchat", "ask", *options, "-c", f"question {n}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for child in children:
        out, err = child.communicate(timeout=60)
        assert (child.returncode, out) == (0, "done\n"), err
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        stored = [m.message for m in store.load_messages(chat.id)]
    users = sorted(m["content"] for m in stored if m["role"] == "user")
    assert users == ["question 0", "question 1", "start"]
    assert [m["content"] for m in stored].count("done") == 2
    assert sum(m["role"] == "tool" for m in stored) == 2
