"""The agent loop, in process, through the real SDKs against the scripted
server: each test scripts the model's moves and checks what skillchat sent back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest
from chat_helpers import (
    RecordingView,
    make_chat,
    registry,
    sent,
    system_text,
    tool_messages,
    write_skill,
)
from helpers import BOTH_PROTOCOLS, model_for
from openai_server import ScriptedServer, call, error, reply

from skillchat.engine.emit import Event, ForkStep, TextDelta, TextEnded
from skillchat.engine.request import INTERRUPTED_MARK
from skillchat.errors import ProviderError, ToolRoundLimit
from skillchat.skills.registry import Registry

# Every scenario here runs on OpenAI's protocol and on Anthropic's (tests/conftest.py).
pytestmark = BOTH_PROTOCOLS

CALC_BODY = "# Calculator\n\nWork it out step by step.\n\nQuestion: $ARGUMENTS\n"


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(
        write_skill(root, "calculator", CALC_BODY, {"references/units.md": "1 km = 1000 m\n"}),
        write_skill(root, "pdf", "# PDF\n\nRead references/forms.md first.\n"),
        directories=(root,),
    )


def get(name: str) -> dict:
    return call("get_skill", {"skill_name": name})


def read(skill: str, path: str, **extra: object) -> dict:
    return call("read_file_in_skill", {"skill_name": skill, "file_path": path, **extra})


# ------------------------------------------------------------ tool rounds


@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_parallel_calls_run_in_order_and_results_go_back(server, skills, backend) -> None:
    server.script(
        reply("Loading.", calls=[get("calculator"), read("calculator", "references/units.md")]),
        reply("It is 1000 m."),
    )
    view = RecordingView()
    result = make_chat(server, skills, view, backend=backend).send("how many m in a km?")
    assert result.answer == "It is 1000 m." and result.requests == 2
    assistant = sent(server)[-3]
    assert assistant["role"] == "assistant"
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "get_skill",
        "read_file_in_skill",
    ]
    results = tool_messages(server)
    assert [m["tool_call_id"] for m in results] == ids
    assert json.loads(results[0]["content"])["documentation"] == CALC_BODY
    assert results[1]["content"] == "1 km = 1000 m\n"
    # The user saw the wait, the narration, both cards, the wait, then the answer.
    kinds = [k for k, _ in view.events]
    collapsed = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1] or k == "tool"]
    assert collapsed == ["waiting", "text", "end", "tool", "tool", "waiting", "text", "end"]
    assert view.of("waiting") == [True, True]  # tools offered: the text may be narration
    assert [v for k, v in view.events if k == "end"] == ["narration", "answer"]
    assert [r.name for r in view.of("tool")] == ["get_skill", "read_file_in_skill"]
    assert result.usage is not None and result.usage.total_tokens == 30


def test_several_calls_streamed_at_index_zero_are_kept_apart(server, skills) -> None:
    server.script(
        reply(calls=[get("pdf"), read("calculator", "references/units.md")], same_index=True),
        reply("ok"),
    )
    make_chat(server, skills).send("x")
    results = tool_messages(server)
    assert len(results) == 2
    assert json.loads(results[0]["content"])["skill_name"] == "pdf"
    assert results[1]["content"] == "1 km = 1000 m\n"


@pytest.mark.parametrize(
    ("bad_call", "expected"),
    [
        (call("get_skill", '{"skill_name": "pdf"'), "arguments are not valid JSON"),
        (call("run_python", {"code": "1"}), "Unknown tool 'run_python'"),
        (call("read_file_in_skill", {"skill_name": "pdf"}), "missing required argument"),
        (call("get_skill", {"skill_name": ["pdf"]}), "must be a non-empty string"),
    ],
    ids=["invalid-json", "unknown-tool", "missing-argument", "wrong-type"],
)
def test_bad_calls_are_error_results_the_model_recovers_from(server, skills, bad_call, expected):
    server.script(reply(calls=[bad_call]), reply(calls=[get("pdf")]), reply("recovered"))
    result = make_chat(server, skills).send("x")
    assert result.answer == "recovered"
    first = tool_messages(server, 1)[0]
    assert expected in first["content"]
    assert result.tool_calls[0].result.is_error
    # The call is echoed with arguments a provider can parse, even when the model's were not.
    echoed = sent(server, 1)[-2]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(json.loads(echoed), dict)
    assert json.loads(tool_messages(server)[-1]["content"])["skill_name"] == "pdf"


def test_tool_round_limit_stops_with_a_clear_error(server, skills) -> None:
    server.script(
        reply(calls=[call("list_skills")]),
        reply(calls=[call("list_skills")]),
        reply("still going", calls=[call("list_skills")]),
    )
    chat = make_chat(server, skills, max_tool_rounds=2)
    with pytest.raises(ToolRoundLimit, match="after 2 tool rounds") as info:
        chat.send("loop forever")
    assert info.value.exit_code == 1
    assert len(server.completions) == 3
    # The transcript stays valid: every tool call has its result, nothing dangles.
    assert chat.messages[-1] == {"role": "assistant", "content": "still going"}
    calls = [c["id"] for m in chat.messages for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in chat.messages if m["role"] == "tool"]
    assert calls == answered


def test_list_skills_returns_sorted_names(server, skills) -> None:
    server.script(reply(calls=[call("list_skills", "")]), reply("two"))
    make_chat(server, skills).send("which skills?")
    assert tool_messages(server)[0]["content"] == '{"skills": ["calculator", "pdf"]}'


# ------------------------------------------------------------ context


def test_already_in_context_is_said_with_the_call_that_holds_it(server, skills) -> None:
    """Once that result leaves the context it is served again: test_context_budget.py."""
    units = read("calculator", "references/units.md")
    server.script(reply(calls=[units]), reply(calls=[units]), reply("done"))
    chat = make_chat(server, skills)
    chat.send("read it twice")
    first, second = tool_messages(server)
    assert first["content"] == "1 km = 1000 m\n"
    assert second["content"].startswith("ERROR: File 'references/units.md' of skill 'calculator'")
    assert "already in context above" in second["content"]
    assert first["tool_call_id"] in second["content"]


# ------------------------------------------------------------ /name invocation


@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_explicit_invocation_adds_get_skill_before_the_first_request(server, skills, backend):
    server.script(reply("39.1"))
    view = RecordingView()
    chat = make_chat(server, skills, view, backend=backend)
    result = chat.send("/calculator what is 17% of 230?")
    assert result.answer == "39.1" and len(server.completions) == 1  # no round trip spent
    messages = sent(server)
    assert messages[0]["role"] == "system"
    assert messages[1] == {"role": "user", "content": "what is 17% of 230?"}
    assistant, tool = messages[2], messages[3]
    [tc] = assistant["tool_calls"]
    assert tc["function"] == {"name": "get_skill", "arguments": '{"skill_name": "calculator"}'}
    assert tool["tool_call_id"] == tc["id"]
    doc = json.loads(tool["content"])["documentation"]
    assert doc == "# Calculator\n\nWork it out step by step.\n\nQuestion: what is 17% of 230?\n"
    assert chat.activated == ["calculator"]
    [card] = view.of("tool")
    assert card.synthetic and card.name == "get_skill"
    assert result.tool_calls == [card]


def test_model_asking_for_an_invoked_skill_again_is_told_it_has_it(server, skills) -> None:
    server.script(reply(calls=[get("calculator")]), reply("ok"))
    make_chat(server, skills).send("/calculator 2+2")
    again = json.loads(tool_messages(server)[-1]["content"])
    assert again["error_code"] == "ALREADY_IN_CONTEXT"


def test_skill_command_and_unknown_names(server, skills) -> None:
    server.script(reply("a"), reply("b"))
    chat = make_chat(server, skills)
    chat.send("/skill pdf fill the form")
    assert sent(server)[1] == {"role": "user", "content": "fill the form"}
    assert json.loads(tool_messages(server)[0]["content"])["skill_name"] == "pdf"
    chat.send("/etc/hosts has /calculator in it")
    assert sent(server)[-1] == {"role": "user", "content": "/etc/hosts has /calculator in it"}
    assert len(tool_messages(server)) == 1  # nothing new was activated


def test_no_tools_injects_the_body_for_that_request_only(server, skills) -> None:
    server.script(reply("first"), reply("second"))
    chat = make_chat(server, skills, tools=False)
    chat.send("/calculator 2+2")
    assert "tools" not in server.completions[0].body
    first = sent(server, 0)
    assert first[1] == {"role": "user", "content": "2+2"}
    assert '<skill name="calculator">' in first[0]["content"]
    assert "Question: 2+2" in first[0]["content"]
    assert "get_skill" not in first[0]["content"]
    assert not tool_messages(server)
    chat.send("and 3+3?")
    second = system_text(server) or ""
    assert "<skill name=" not in second and "Work it out" not in second
    assert "available_skills" in second


# ------------------------------------------------------------ catalog and no skills


def test_cut_catalog_warns_the_user_and_points_the_model_at_list_skills(server, tmp_path):
    root = tmp_path / "many"
    reg = registry(*(write_skill(root, f"skill-{i:02d}") for i in range(30)))
    server.script(reply(calls=[call("list_skills")]), reply("ok"))
    view = RecordingView()
    make_chat(server, reg, view, catalog_max_chars=400).send("what can you do?")
    [notice] = view.of("notice")
    assert "cut to" in notice and "of 30 skills" in notice and "list_skills" in notice
    assert "Call list_skills" in (system_text(server, 0) or "")
    names = json.loads(tool_messages(server)[0]["content"])["skills"]
    assert names == [f"skill-{i:02d}" for i in range(30)]


def test_no_skills_means_no_tools_and_no_system_prompt(server) -> None:
    server.script(reply("plain"))
    result = make_chat(server, Registry(skills={})).send("/calculator hi")
    body = {**server.completions[0].body, "messages": sent(server, 0)}
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "/calculator hi"}]
    assert result.answer == "plain"


# ------------------------------------------------------------ faults and Ctrl-C


def test_retryable_fault_before_any_text_is_retried(server, skills) -> None:
    server.script(error(429, retry_after="0"), reply("after the wait"))
    view = RecordingView()
    result = make_chat(server, skills, view, max_retries=2).send("x")
    assert result.answer == "after the wait" and len(server.completions) == 2
    assert any("rate limited (429)" in n and "retrying" in n for n in view.of("notice"))
    assert "".join(view.of("text")) == "after the wait"  # shown once


def test_stream_cut_after_text_is_not_retried(server, skills) -> None:
    server.script(reply("partial answer " * 5, chunks=6, cut_after=4), reply("never"))
    view = RecordingView()
    with pytest.raises(ProviderError, match="cut off mid-reply"):
        make_chat(server, skills, view, max_retries=3).send("x")
    assert len(server.completions) == 1
    assert view.events[-1] == ("end", "failed")


class InterruptingView(RecordingView):
    """Stands for the user pressing Ctrl-C once some text is on screen."""

    pressed = False

    def text(self, chunk: str) -> None:
        super().text(chunk)
        if len(self.of("text")) == 2 and not self.pressed:
            self.pressed = True
            raise KeyboardInterrupt


def test_ctrl_c_keeps_what_was_shown_and_the_chat_usable(server, skills) -> None:
    server.script(reply("one two three four five six", chunks=6, chunk_delay=0.01), reply("ok"))
    view = InterruptingView()
    chat = make_chat(server, skills, view)
    with pytest.raises(KeyboardInterrupt):
        chat.send("count")
    assert view.events[-1] == ("end", "interrupted")
    shown = "".join(view.of("text"))
    assert chat.messages[-1] == {
        "role": "assistant",
        "content": f"{shown}\n\n{INTERRUPTED_MARK}",
    }
    view.events.clear()
    assert chat.send("go on").answer == "ok"
    assert sent(server)[-2]["content"].endswith(INTERRUPTED_MARK)


def test_a_reply_cut_at_the_output_limit_is_flagged(server, skills) -> None:
    server.script(reply("half an answ", finish_reason="length"))
    view = RecordingView()
    assert make_chat(server, skills, view).send("x").answer == "half an answ"
    # Anthropic's API requires max_tokens: the default for the model is sent, and said.
    anthropic = model_for(server) == "anthropic/test-model"
    assert view.of("notice") == [
        "the reply was cut after 5 tokens by the server's output limit or context window "
        + ("(under max_tokens (16,000))" if anthropic else "(no max_tokens was sent)")
    ]
    assert server.completions[-1].body.get("max_tokens") == (16_000 if anthropic else None)


def test_a_refused_reply_is_said_and_runs_no_calls(server, skills) -> None:
    """OpenAI's `content_filter`, Anthropic's `refusal` stop reason."""
    server.script(reply("I can't help", calls=[get("calc")], finish_reason="content_filter"))
    view = RecordingView()
    result = make_chat(server, skills, view).send("x")
    assert result.answer == "I can't help" and result.requests == 1 and not result.tool_calls
    assert view.of("notice") == ["the provider stopped the reply as a refusal (its content filter)"]


def test_events_of_two_kinds_never_compare_equal(server: ScriptedServer, skills: Registry) -> None:
    """A reply whose text is "answer" emits TextDelta("answer") then TextEnded("answer"):
    a listener keeping the distinct events keeps both (as tuples of equal fields they
    were equal, whatever their kind); an event equals only an event of its own kind."""
    server.script(reply("answer", chunks=1))
    distinct: list[Event] = []
    chat = make_chat(server, skills)
    chat.emit.listeners.append(lambda event: None if event in distinct else distinct.append(event))
    chat.send("hi")
    assert [e for e in distinct if isinstance(e, TextDelta | TextEnded)] == [
        TextDelta("answer"),
        TextEnded("answer"),
    ]
    kinds = get_args(Event)

    def made(kind: type) -> Event:
        return kind(*("x",) * len(kind._fields))

    for kind in kinds:
        assert made(kind) == made(kind) and hash(made(kind)) == hash(made(kind))
        assert made(kind) != tuple(made(kind)) and tuple(made(kind)) != made(kind)
        assert all(made(kind) != made(other) for other in kinds if other is not kind)
    steps = {ForkStep(1, "s", "m", TextDelta("a")), ForkStep(1, "s", "m", TextEnded("a"))}
    assert len(steps) == 2
