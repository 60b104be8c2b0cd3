"""context_max_chars: old tool results leave the context so long chats keep working,
and what left is served again when the model asks for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import RecordingView, make_chat, registry, sent, tool_messages, write_skill
from openai_server import call, reply

from skillchat.engine.context_fit import ELIDED, TOO_MUCH
from skillchat.skills.registry import Registry

# Under the result cap of an 8,000-character budget (a quarter: 2,000 bytes), so each
# read is whole and four of them pass the budget.
BIG = "x" * 1_900
NAMES = "abcd"


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    files = {f"references/{n}.md": n.upper() + BIG for n in NAMES}
    return registry(write_skill(root, "docs", "# Docs\n", files), directories=(root,))


def read(path: str) -> dict:
    return call("read_file_in_skill", {"skill_name": "docs", "file_path": path})


def test_old_results_are_elided_past_the_budget_and_served_again(server, skills) -> None:
    for name in [*NAMES, "a"]:
        server.script(reply(calls=[read(f"references/{name}.md")]), reply(f"read {name}"))
    view = RecordingView()
    chat = make_chat(server, skills, view, context_max_chars=8_000)
    for name in NAMES:  # four files of ~2 KB with their turns fit no more: a's leaves
        chat.send(f"read {name}")
    chat.send("read a again")

    requests = [c.body["messages"] for c in server.completions]
    # Turn 2's first request still had a's content (under budget, 1 file so far).
    assert any(m.get("content") == "A" + BIG for m in requests[2])
    # The last turn's first request: a's old result elided, later ones too if
    # needed, but never the content of the current turn.
    first_of_last_turn = requests[8]
    a_results = [m for m in first_of_last_turn if m.get("role") == "tool"]
    assert a_results[0]["content"] == ELIDED
    # a was elided, so reading it again is served in full, not ALREADY_IN_CONTEXT.
    assert tool_messages(server)[-1]["content"] == "A" + BIG
    assert any("context budget" in n for n in view.of("notice"))


def test_activated_skills_are_named_once_their_instructions_left_the_context(
    server, skills
) -> None:
    """The get_skill result is the oldest: the first to leave past the budget, after
    which the system prompt names the skill whose instructions the model no longer has."""
    server.script(reply(calls=[call("get_skill", {"skill_name": "docs"})]), reply("ok"))
    for name in NAMES:
        server.script(reply(calls=[read(f"references/{name}.md")]), reply(f"read {name}"))
    chat = make_chat(server, skills, context_max_chars=8_000)
    chat.send("use docs")
    assert chat.activated == ["docs"]
    chat.send("read a")  # the instructions are in the chat: the system message as before
    first, system = sent(server, 0)[0], sent(server)[0]
    assert system["role"] == "system" and system == first and "activated" not in system["content"]
    for name in NAMES[1:]:
        chat.send(f"read {name}")
    get_skill = next(m for m in sent(server) if m.get("role") == "tool")
    assert get_skill["content"] == ELIDED
    assert sent(server)[0]["content"].endswith("are no longer in the conversation): docs")


def test_a_round_that_reads_more_than_the_budget_is_not_sent_whole(server, skills) -> None:
    """Four files of ~1.9 KB read at once under an 8 KB budget (each under the result
    cap): the request still fits, a result is replaced by a note telling the model to
    read less at once."""
    server.script(reply(calls=[read(f"references/{n}.md") for n in NAMES]), reply("ok"))
    view = RecordingView()
    chat = make_chat(server, skills, view, context_max_chars=8_000)
    chat.send("read both")
    last = [m for m in sent(server) if m["role"] != "system"]
    assert sum(len(json.dumps(m, ensure_ascii=False)) for m in last) <= 8_000
    contents = [m["content"] for m in last if m.get("role") == "tool"]
    assert contents == [TOO_MUCH, "B" + BIG, "C" + BIG, "D" + BIG]
    assert any("read more in one round" in n for n in view.of("notice"))


def test_under_the_budget_nothing_changes(server, skills) -> None:
    server.script(reply(calls=[read("references/a.md")]), reply("ok"), reply("fine"))
    view = RecordingView()
    chat = make_chat(server, skills, view)
    chat.send("read a")
    chat.send("and?")
    assert [m["content"] for m in sent(server) if m.get("role") == "tool"] == ["A" + BIG]
    assert not any("context budget" in n for n in view.of("notice"))
