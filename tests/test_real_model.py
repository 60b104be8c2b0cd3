"""End to end against a real model server: llama.cpp's own, with SmolLM2-135M (the
`real_model` fixture, tests/real_model.py), through `skillchat ask` as a user runs it
and, where the test needs to stop a reply at a chosen point, through the engine.

What is checked is skillchat's handling of what a real server sends (its streaming,
usage, errors, cancellation, tool-call deltas and context limit), never what the
model says: at temperature 0 its replies repeat, but they are a 135M model's. A reply
that would run on is stopped as a user stops it (Ctrl-C, SIGINT), so no test waits
for the model to fill its context.

The keep-alive comments llama.cpp sends while it reads a long prompt come every 30 s,
which a 4096-token prompt reaches only on a loaded machine: their handling is tested
with the scripted server, byte for byte as llama.cpp sends them (test_backends.py).
"""

from __future__ import annotations

import gc
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import backend_of, one_line_error, skillchat
from real_model import RealModel

from skillchat.config import Settings
from skillchat.engine.emit import TextEnd, ToolRecord, ViewListener
from skillchat.engine.loop import Chat
from skillchat.errors import ProviderError, ToolRoundLimit
from skillchat.skills.registry import Registry, discover

REPO = Path(__file__).resolve().parents[1]
# A prompt this model answers at length: the reply is still running when it is stopped.
LONG_REPLY = "Write a very long story about a dragon who learns to fly."
SHORT_REPLY = "Say hi"
CALL = '<tool_call>\n{"name": "get_skill", "arguments": {"skill_name": "calculator"}}\n</tool_call>'
# Prompts this model answers with a copy of the call in them (it makes no call of its
# own accord); which one works depends on the server's prompt cache, so up to all are
# tried, each stopped after a few hundred characters of text.
COPY_PROMPTS = (
    f"Reply with only this text:\n{CALL}\n{CALL}",
    f"Output this tool call and nothing else:\n{CALL}",
    f"Reply with only this text:\n{CALL}",
    f"Repeat after me: {CALL}",
)


def ask(real: RealModel, *args: str, timeout: float = 180, **options: Any):
    return skillchat(
        "ask", "--api-base", real.base_url, "--model", real.model, *args, timeout=timeout, **options
    )


def spawn_ask(real: RealModel, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "skillchat", "ask", "--api-base", real.base_url]
    return subprocess.Popen(
        [*command, "--model", real.model, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class StopAfter(ViewListener):
    """A view that presses Ctrl-C once the reply has shown `chars` characters."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self.shown = ""
        self.tools: list[ToolRecord] = []
        self.notices: list[str] = []

    def text(self, chunk: str) -> None:
        self.shown += chunk
        if len(self.shown) >= self.chars:
            raise KeyboardInterrupt

    def end_text(self, how: TextEnd) -> None:
        self.shown = ""

    def tool(self, record: ToolRecord) -> None:
        self.tools.append(record)

    def notice(self, message: str) -> None:
        self.notices.append(message)


class StopAtFollowUp(StopAfter):
    """A StopAfter that also presses Ctrl-C once a tool has run, as the model is asked
    again: the call and its result are in the chat by then, and the follow-up (its
    prompt holds the skill's whole SKILL.md) is not what the test is about."""

    def waiting(self, tools: bool) -> None:
        if self.tools:
            raise KeyboardInterrupt


def settings_for(real: RealModel, **overrides: Any) -> Settings:
    return Settings().replaced(
        model=real.model, api_base=real.base_url, max_retries=0, timeout=300.0, **overrides
    )


def send_until_stopped(chat: Chat, text: str, real: RealModel) -> bool:
    """`chat.send(text)`; True when the view (or `max_tool_rounds`) stopped it. Then the
    server is idle again: the abandoned stream was closed, as the REPL's Ctrl-C needs."""
    try:
        chat.send(text)
        stopped = False
    except (KeyboardInterrupt, ToolRoundLimit):
        stopped = True
    gc.collect()
    assert real.wait(busy=False, timeout=30), "the server still works on a stopped reply"
    return stopped


# ---------------------------------------------------------------- answers


def test_an_answer_and_its_usage(real_model: RealModel) -> None:
    done = ask(real_model, "--no-tools", "--json", SHORT_REPLY)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["answer"].strip()
    assert report["model"] == real_model.model
    usage = report["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["cost"] is None  # a local server's tokens have no known price


def test_the_answer_streams_to_a_terminal_and_ctrl_c_stops_it(
    real_model: RealModel, pty_sessions
) -> None:
    session = pty_sessions(
        "ask", "--api-base", real_model.base_url, "--model", real_model.model, "--no-tools",
        LONG_REPLY, timeout=120,
    )  # fmt: skip
    session.child.expect(r"[A-Za-z]{3,} [A-Za-z]{3,}")  # words on screen...
    assert session.child.isalive() and real_model.busy()  # ...while the reply runs
    session.interrupt()
    assert session.wait() == 130
    assert "interrupted" in "".join(session.output)
    assert real_model.wait(busy=False, timeout=30)


def test_sigint_cancels_the_request_and_the_server_is_free_again(real_model: RealModel) -> None:
    process = spawn_ask(real_model, "--no-tools", LONG_REPLY)
    try:
        assert real_model.wait(busy=True, timeout=120), "the request never reached the server"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert real_model.wait(busy=False, timeout=30), "the server still generates for nobody"
    done = ask(real_model, "--no-tools", "--json", "--max-tokens", "4", SHORT_REPLY)  # it answers
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"].strip()


# ---------------------------------------------------------------- limits


def test_a_prompt_over_the_servers_context_is_one_line_http_400(
    real_model: RealModel, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("context_max_chars = 10000000\n")  # the user's: sent as it is
    prompt = "word " * (2 * real_model.ctx)
    done = ask(real_model, "--config", str(config), "--no-tools", "-", input=prompt)
    line = one_line_error(done)
    assert "(400)" in line and "context" in line, line


def test_the_servers_window_is_read_from_props(real_model: RealModel) -> None:
    assert backend_of(settings_for(real_model)).context_window() == real_model.ctx


def history(results: int, size: int) -> list[dict[str, Any]]:
    """Earlier turns, each a tool call whose result is `size` characters of prose."""
    prose = "The quick brown fox jumps over the lazy dog. " * (size // 45)
    messages: list[dict[str, Any]] = []
    for n in range(results):
        call_id = f"call{n}"
        arguments = json.dumps({"skill_name": "calculator", "file_path": f"notes{n}.md"})
        function = {"name": "read_file_in_skill", "arguments": arguments}
        messages += [
            {"role": "user", "content": f"Read notes{n}.md"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": function}
            ]},
            {"role": "tool", "tool_call_id": call_id, "content": prose},
            {"role": "assistant", "content": "Read it."},
        ]  # fmt: skip
    return messages


def test_a_long_chat_is_trimmed_to_the_servers_window_before_it_is_refused(
    real_model: RealModel,
) -> None:
    """Two 10,000-character results are ~4,500 tokens, over the 4,096 of the server:
    the budget from /props (9,216 characters) leaves them out, and the server takes
    the rest; with the user's own larger budget the same chat is refused."""
    no_skills = Registry(skills={})
    view = StopAfter(chars=1)  # the first word of the answer: the prompt was accepted
    chat = Chat(settings_for(real_model), no_skills, backend_of(settings_for(real_model)), view)
    chat.restore(history(results=2, size=10_000), activated=[], served={})
    assert send_until_stopped(chat, SHORT_REPLY, real_model)
    assert any("context budget (9,216 characters)" in notice for notice in view.notices)

    settings = settings_for(real_model, context_max_chars=1_000_000)
    chat = Chat(settings, no_skills, backend_of(settings), StopAfter(chars=1))
    chat.restore(history(results=2, size=10_000), activated=[], served={})
    with pytest.raises(ProviderError, match=r"\(400\).*context"):
        chat.send(SHORT_REPLY)


# ---------------------------------------------------------------- tool calls


def test_a_tool_call_copied_from_the_prompt_is_run_and_its_result_kept(
    real_model: RealModel,
) -> None:
    registry = discover([REPO / "skillchat" / "bundled_skills"])
    settings = settings_for(real_model, max_tool_rounds=1)
    backend = backend_of(settings)
    for prompt in COPY_PROMPTS:
        view = StopAtFollowUp(chars=300)
        chat = Chat(settings, registry, backend, view)
        send_until_stopped(chat, prompt, real_model)
        if view.tools:
            break
    else:
        pytest.fail(f"the model copied no tool call from {len(COPY_PROMPTS)} prompts")
    record = view.tools[0]
    assert record.name in {"get_skill", "list_skills"}
    assert not record.result.is_error, record.result.content
    calls = [m for m in chat.messages if m.get("tool_calls")]
    call = calls[0]["tool_calls"][0]
    assert len(call["id"]) == 32  # llama.cpp's ids, kept as sent
    assert isinstance(json.loads(call["function"]["arguments"]), dict)
    result = next(m for m in chat.messages if m.get("tool_call_id") == call["id"])
    assert result["content"] == record.result.content
    if record.name == "get_skill":
        assert "calculator" in result["content"]


def test_tool_calls_in_a_reply_cut_by_length_are_not_run(
    real_model: RealModel, tmp_path: Path
) -> None:
    """At 22 tokens llama.cpp ends the copied call mid-arguments (`{"skill_name":`)
    with finish_reason "length": that call must not run as if it were complete.
    run_command off, the prompt is the one the test above sent first, which the server
    has cached: it reads only what differs, not ~1,000 tokens of tools and catalog."""
    config = tmp_path / "config.toml"
    config.write_text("[run]\nenabled = false\n")
    skills = str(REPO / "skillchat" / "bundled_skills")
    done = ask(
        real_model, "--config", str(config), "--skills-dir", skills, "--json",
        "--max-tokens", "22", COPY_PROMPTS[0],
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    if done.returncode == 0:
        ran = [c for c in json.loads(done.stdout)["tool_calls"] if not c["is_error"]]
        assert ran == [], ran
    assert "· complete" not in done.stderr  # no card of a call that ran


# ---------------------------------------------------------------- cut by length


def test_a_reply_cut_at_max_tokens_says_what_cut_it(real_model: RealModel) -> None:
    done = ask(real_model, "--no-tools", "--json", "--max-tokens", "8", LONG_REPLY)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["answer"].strip()
    assert 0 < report["usage"]["completion_tokens"] <= 8
    assert "max_tokens" in done.stderr or "max tokens" in done.stderr, done.stderr
