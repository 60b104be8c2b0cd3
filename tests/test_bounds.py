"""Bounded everything: an endless, dripping, silent or huge reply ends with a clear
message keeping what arrived; a reply's tool calls are capped and never run when the
reply was cut; max_tokens is sent; no request outgrows the context budget; retry
waits have a total bound. All through the scripted server, no fixed sleeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import RecordingView, make_chat, registry, sent, tool_messages, write_skill
from helpers import session_options, skillchat
from openai_server import call, error, reply

from skillchat.chats.store import ChatStore
from skillchat.engine.request import CUT_MARK, MAX_REPLY_CHARS
from skillchat.errors import ProviderError
from skillchat.sections import user_data_dir
from skillchat.skills.registry import Registry


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(write_skill(root, "calc", "# Calc\n"), directories=(root,))


def get(name: str = "calc") -> dict:
    return call("get_skill", {"skill_name": name})


@pytest.mark.parametrize("backend", ["openai", "litellm"])
@pytest.mark.parametrize("kind", ["text", "comments"])
def test_a_dripping_endless_reply_ends_at_reply_timeout(server, skills, backend, kind) -> None:
    """A byte every 50 ms never trips the idle timeout; the overall deadline ends it.

    The deadline is 2 s, not less: the next turn's whole reply must arrive within it
    too, which a machine at load 10 did not always manage in 1 s."""
    server.script({"endless": kind, "chunk_delay": 0.05, "piece": "drip "}, reply("after"))
    view = RecordingView()
    chat = make_chat(server, skills, view, backend=backend, reply_timeout=2.0)
    with pytest.raises(ProviderError) as raised:
        chat.send("go")
    assert "the reply took longer than reply_timeout (2s)" in str(raised.value)
    shown = "".join(view.of("text"))
    assert view.of("end") == ["failed"]
    if kind == "text":  # what arrived (however much a loaded machine let through) is kept
        assert shown.startswith("drip") or not shown
        kept = chat.messages[-1]["content"]
        assert kept == f"{shown}\n\n{CUT_MARK}" if shown else kept == "go"
    assert chat.send("and now").answer == "after"


def test_a_silent_stream_ends_at_the_idle_timeout_keeping_what_arrived(server, skills) -> None:
    server.script(reply("so far so good", chunks=3, stall_after=3), reply("after"))
    chat = make_chat(server, skills, timeout=2.0)  # the next turn's first byte, under load
    with pytest.raises(ProviderError, match="timed out after 2s"):
        chat.send("go")
    assert chat.messages[-1]["content"] == f"so far so \n\n{CUT_MARK}"
    assert chat.send("again").answer == "after"
    assert sent(server)[-2]["content"].endswith(CUT_MARK)


def test_a_reply_past_the_size_limit_is_stopped(server, skills) -> None:
    server.script({"endless": "text", "piece": "y" * 100_000})
    chat = make_chat(server, skills)
    with pytest.raises(ProviderError, match=f"passed {MAX_REPLY_CHARS:,} characters"):
        chat.send("go")
    assert len(chat.messages[-1]["content"]) > MAX_REPLY_CHARS


def test_calls_past_max_tool_calls_are_answered_not_run(server, skills) -> None:
    server.script(reply(calls=[get() for _ in range(5)]), reply("done"))
    view = RecordingView()
    result = make_chat(server, skills, view, max_tool_calls=2).send("go")
    assert result.answer == "done"
    results = [json.loads(m["content"]) for m in tool_messages(server)]
    assert len(results) == 5  # every call answered: providers require it
    assert "error" not in results[0] and results[1]["error_code"] == "ALREADY_IN_CONTEXT"
    assert [r.get("error_code") for r in results[2:]] == ["TOO_MANY_CALLS"] * 3
    assert any("the first 2 ran" in n for n in view.of("notice"))


def test_tool_calls_of_a_reply_cut_at_length_are_not_run(server, skills) -> None:
    """As llama.cpp sent it: many parallel calls, the last cut mid-JSON."""
    calls = [get() for _ in range(56)] + [call("get_skill", '{"skill_na')]
    server.script(reply("Loading.", calls=calls, finish_reason="length"))
    view = RecordingView()
    chat = make_chat(server, skills, view)
    result = chat.send("go")
    assert result.tool_calls == [] and len(server.completions) == 1
    assert chat.messages[-1] == {"role": "assistant", "content": "Loading."}
    assert view.of("notice") == [
        "the reply was cut after 5 tokens by the server's output limit or context window "
        "(no max_tokens was sent); its 57 tool calls were not run"
    ]


@pytest.mark.parametrize("backend", ["openai", "litellm"])
def test_max_tokens_is_sent_and_named_when_it_cut_the_reply(server, skills, backend) -> None:
    server.script(reply("cut", finish_reason="length", usage={"completion_tokens": 5}))
    view = RecordingView()
    make_chat(server, skills, view, backend=backend, max_tokens=5).send("go")
    assert server.completions[-1].body["max_tokens"] == 5
    assert view.of("notice") == ["the reply was cut at max_tokens (5): raise --max-tokens"]


def test_a_long_chat_sends_only_the_turns_that_fit(server, skills) -> None:
    """A resumed 500-turn chat with tool rounds: every request stays in the budget,
    starts at a user message and carries no orphan tool message; the chat keeps all.
    (Step 3, the last resort: without compaction, which test_compaction.py covers.)"""
    history = []
    for n in range(500):
        history += [
            {"role": "user", "content": f"question {n} " + "q" * 300},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "list_skills", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{n}", "content": "r" * 500},
            {"role": "assistant", "content": f"answer {n} " + "a" * 300},
        ]
    server.script(reply("fine"), reply("still fine"))
    view = RecordingView()
    chat = make_chat(server, skills, view, context_max_chars=20_000, auto_compact=False)
    chat.restore(history, [], {})
    chat.send("one more")
    chat.send("and another")
    for request in server.completions:
        messages = request.body["messages"]
        assert len(json.dumps(request.body["messages"], ensure_ascii=False)) <= 20_000
        turn = [m for m in messages if m["role"] != "system"]
        assert turn[0]["role"] == "user"
        ids = {c["id"] for m in turn for c in m.get("tool_calls") or ()}
        assert all(m["tool_call_id"] in ids for m in turn if m["role"] == "tool")
    assert sent(server)[-1]["content"] == "and another"
    assert len(chat.messages) == 2_000 + 4
    notices = [n for n in view.of("notice") if "left out of the request" in n]
    assert len(notices) == 1  # told once, not on every request


def test_a_retry_after_of_a_day_is_not_waited_for(server, skills) -> None:
    server.script(error(429, retry_after=86_400))
    chat = make_chat(server, skills, max_retries=3)
    with pytest.raises(ProviderError, match=r"asks to wait 86,400s \(Retry-After\)"):
        chat.send("go")
    assert len(server.completions) == 1


def test_ask_takes_reply_timeout_and_max_tokens(server, tmp_path) -> None:
    skills_dir = tmp_path / "skills"
    write_skill(skills_dir, "calc", "# Calc\n")
    server.script({"endless": "text", "chunk_delay": 0.05, "piece": "drip "}, reply("ok"))
    options = session_options(server, skills_dir)
    done = skillchat("ask", *options, "--reply-timeout", "1", "go")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "the reply took longer than reply_timeout (1s)" in done.stderr
    again = skillchat("ask", *options, "-c", "--max-tokens", "7", "go on")
    assert (again.returncode, again.stdout.strip()) == (0, "ok"), again.stderr
    assert server.completions[-1].body["max_tokens"] == 7
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        kept = [m.message["content"] for m in store.load_messages(chat.id)]
    assert kept[1].startswith("drip drip") and kept[1].endswith(CUT_MARK)
