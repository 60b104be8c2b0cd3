"""Anthropic's Messages API, spoken natively (engine/backends/anthropic_backend.py),
against tests/anthropic_server.py: what is Anthropic's own. The loop's scenarios
run on it too (BOTH_PROTOCOLS in test_loop.py, test_ask_cli.py, ...)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from anthropic_server import AnthropicServer, call, error, reply
from chat_helpers import make_chat, registry, write_skill
from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer

from skillchat.config import Settings
from skillchat.engine.backends.anthropic_backend import request_body
from skillchat.engine.backends.select import backend_name
from skillchat.engine.events import Usage
from skillchat.engine.pricing import model_entry, price
from skillchat.engine.resolve import asked
from skillchat.errors import ProviderError
from skillchat.session import Session
from skillchat.skills.registry import Registry

KEY = "sk-ant-test-0123456789abcdef"


@pytest.fixture
def server() -> AnthropicServer:  # type: ignore[misc]
    with AnthropicServer() as s:
        yield s


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(
        write_skill(root, "calc", "# Calc\n\nAdd.\n", {"notes.md": "1 + 1 = 2\n"}),
        directories=(root,),
    )


def get(name: str) -> dict:
    return call("get_skill", {"skill_name": name})


def events_of(raw: bytes) -> list[tuple[str, dict]]:
    """(event name, data) of each SSE event in a Messages stream's body."""
    out = []
    for block in raw.decode().strip().split("\n\n"):
        name, data = block.split("\n")
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_the_stream_is_messages_sse_as_anthropic_sends_it(server: AnthropicServer) -> None:
    server.script(reply("Hi there", calls=[get("calc"), call("list_skills")], chunks=2))
    body = {"model": "m", "max_tokens": 10, "stream": True,
            "messages": [{"role": "user", "content": "hi"}]}  # fmt: skip
    request = urllib.request.Request(
        f"{server.base_url}/messages", json.dumps(body).encode(),
        {"anthropic-version": "2023-06-01", "content-type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = events_of(response.read())
    assert all(name == data["type"] for name, data in events)
    names = [name for name, _ in events]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use", "tool_use"]
    assert starts[1]["name"] == "get_skill" and starts[1]["input"] == {}
    pieces = [d["delta"]["partial_json"] for n, d in events
              if n == "content_block_delta" and d["index"] == 1]  # fmt: skip
    assert pieces[0] == "" and json.loads("".join(pieces)) == {"skill_name": "calc"}
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use" and delta["usage"]["output_tokens"] == 5
    assert events[0][1]["message"]["usage"]["input_tokens"] == 10


def test_anthropic_models_go_to_the_native_backend_and_need_their_key() -> None:
    native = Settings().replaced(model="anthropic/claude-sonnet-4-5")
    assert backend_name(asked(native)) == "anthropic"
    chosen = Settings().replaced(model="m", backend="anthropic", api_base="http://h/v1")
    assert backend_name(asked(chosen)) == ("anthropic")
    done = skillchat("ask", "--model", "anthropic/claude-sonnet-4-5", "hi")
    line = one_line_error(done)
    assert "ANTHROPIC_API_KEY is not set" in line


# No SDK, nor the HTTP client the SDKs are built on (cli/app.py puts a None under
# `httpx._main` to keep httpx's command line out: a None is no import).
PROBE = """
import sys
from skillchat.cli.app import run
code = run(sys.argv[1:])
heavy = {'litellm', 'openai', 'httpx', 'anthropic'}
loaded = {m.split('.')[0] for m, module in sys.modules.items() if module is not None}
print(code, sorted(loaded & heavy), file=sys.stderr)
"""


def test_the_anthropic_path_imports_no_sdk(server: AnthropicServer, tmp_path: Path) -> None:
    server.script(reply("ok"))
    argv = ["ask", *session_options(server, tmp_path), "hi"]
    # A fresh interpreter: the subject is what `ask` imports, which this one has all.
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.stdout == "ok\n", done.stderr
    assert done.stderr.strip().splitlines()[-1] == "0 []"


def test_messages_tools_and_results_are_translated_with_cache_breakpoints(
    server: AnthropicServer, skills: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.script(
        reply(
            "Loading.",
            calls=[
                get("calc"),
                call("read_file_in_skill", {"skill_name": "calc", "file_path": "notes.md"}),
            ],
        ),
        reply("2"),
    )
    result = make_chat(server, skills, max_tokens=300).send("1+1?")
    assert result.answer == "2"
    first, second = server.completions
    assert first.headers["x-api-key"] == KEY and first.headers["anthropic-version"] == "2023-06-01"
    body = second.body
    assert body["max_tokens"] == 300 and body["stream"] is True
    assert [t["name"] for t in body["tools"]][:2] == ["list_skills", "get_skill"]
    assert all("input_schema" in t and "function" not in t for t in body["tools"])
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    [system] = body["system"]
    assert "calc" in system["text"] and system["cache_control"] == {"type": "ephemeral"}
    user, assistant, results = body["messages"]
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert assistant["content"][1]["input"] == {"skill_name": "calc"}
    # Both results in one user turn, answering the calls by id.
    assert [b["type"] for b in results["content"]] == ["tool_result", "tool_result"]
    ids = [b["id"] for b in assistant["content"][1:]]
    assert [b["tool_use_id"] for b in results["content"]] == ids
    assert results["content"][1]["content"] == "1 + 1 = 2\n"
    # The tail breakpoints: this request's last block and the previous request's.
    assert "cache_control" in results["content"][-1] and "cache_control" in user["content"][-1]
    marked = json.dumps(body).count('"cache_control"')
    assert marked == 4


def test_images_become_base64_image_blocks() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "t1", "content": "an image (PNG, 8 bytes)"},
        {"role": "user", "content": [{"type": "text", "text": "The images:"},
                                     {"type": "image_url",
                                      "image_url": {"url": f"data:image/png;base64,{png}"}}]},
    ]  # fmt: skip
    turns = request_body("m", messages, None, 100, None)["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    result, text, image = turns[2]["content"]
    assert result["type"] == "tool_result" and text["text"] == "The images:"
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": png}


def test_every_round_after_the_first_reads_the_prefix_from_cache(
    skills: Registry, tmp_path: Path
) -> None:
    with AnthropicServer(prompt_cache=True) as server:
        server.script(
            reply(calls=[get("calc")]),
            reply(
                calls=[call("read_file_in_skill", {"skill_name": "calc", "file_path": "notes.md"})]
            ),
            reply("2"),
        )
        result = make_chat(server, skills).send("1+1?")
    first, second, third = server.usages
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 0
    # Each round reads all the round before sent, and writes only what it added.
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert third["cache_read_input_tokens"] == (
        second["cache_read_input_tokens"] + second["cache_creation_input_tokens"]
    )
    assert result.usage is not None
    assert result.usage.cached_tokens == sum(u["cache_read_input_tokens"] for u in server.usages)
    assert result.usage.prompt_tokens == sum(sum(u.values()) for u in server.usages)


def test_the_usage_line_says_what_was_cached(tmp_path: Path) -> None:
    with AnthropicServer(prompt_cache=True) as server:
        server.script(reply(calls=[call("list_skills")]), reply("done"))
        done = skillchat("ask", *session_options(server, tmp_path), "hi")
    assert done.returncode == 0, done.stderr
    cached = server.usages[1]["cache_read_input_tokens"]
    total = sum(sum(u.values()) for u in server.usages)
    assert f"tokens: {total:,} in ({cached:,} cached) + 10 out" in done.stderr


def test_a_long_usage_line_on_a_pipe_is_one_line(tmp_path: Path) -> None:
    """stderr on a pipe is not wrapped at 80 columns: the chat id stays on its line."""
    big = {"prompt_tokens": 2_345_678, "completion_tokens": 7_654_321}
    with AnthropicServer() as server:
        server.script(reply("done", usage={**big, "cache_read_input_tokens": 12_345_678}))
        done = skillchat("ask", *session_options(server, tmp_path), "hi")
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("tokens: 14,691,356 in (12,345,678 cached)") and " · chat " in line
    assert len(line.rsplit(" · chat ", 1)[1]) == 8


def test_cached_tokens_are_priced_at_the_cache_price() -> None:
    entry = model_entry("anthropic/claude-sonnet-4-5")
    assert entry is not None
    plain = price("anthropic/claude-sonnet-4-5", Usage(10_000, 100, 10_100))
    cached = price("anthropic/claude-sonnet-4-5", Usage(10_000, 100, 10_100, None, 9_000, 500))
    assert plain is not None and cached is not None
    rate = entry["input_cost_per_token"]
    expected = (500 * rate + 9_000 * rate / 10 + 500 * rate * 1.25
                + 100 * entry["output_cost_per_token"])  # fmt: skip
    assert cached == pytest.approx(expected) and cached < plain / 3


@pytest.mark.parametrize(
    "moves",
    [
        [error(529), reply("ok")],
        [error(429, retry_after="0"), reply("ok")],
        [{"stream_error": "overloaded_error", "after": 2}, reply("ok")],
        [{"stream_error": "api_error", "after": 2}, reply("ok")],
    ],
    ids=["529", "429", "overloaded-event", "api-error-event"],
)
def test_busy_and_failing_servers_are_retried(
    server: AnthropicServer, skills: Registry, moves: list
) -> None:
    """Before any of the reply was shown: an error event after HTTP 200 too."""
    server.script(*moves)
    assert make_chat(server, skills, max_retries=1).send("hi").answer == "ok"
    assert len(server.completions) == 2


@pytest.mark.parametrize(
    ("move", "expected"),
    [
        (error(401), "authentication failed (401) at {where}: check ANTHROPIC_API_KEY"),
        (
            error(400, "messages: roles must alternate"),
            "the request was rejected (400) by {where}: messages: roles must alternate",
        ),
        (
            {"stream_error": "overloaded_error", "after": 6, "text": "partly"},
            "server error (529) from {where}: Overloaded",
        ),
        (reply("a long reply", cut_after=3, clean_cut=True), "cut off mid-reply"),
        ({"events": ["event: message_start\ndata: {not json"]}, "a malformed reply from"),
    ],
    ids=["401", "400", "error-event-after-text", "no-message-stop", "not-json"],
)
def test_failures_are_one_line_without_the_key(
    server: AnthropicServer, skills: Registry, monkeypatch: pytest.MonkeyPatch, move, expected
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.script(move, reply("fine"))
    chat = make_chat(server, skills)
    with pytest.raises(ProviderError) as raised:
        chat.send("go")
    assert expected.format(where=server.base_url) in str(raised.value)
    assert KEY not in str(raised.value)
    assert chat.send("again").answer == "fine"  # the chat goes on


def test_thinking_is_asked_for_kept_for_the_tool_round_and_shown_collapsed(
    server: AnthropicServer, tmp_path: Path
) -> None:
    write_skill(tmp_path / "skills", "calc", "# Calc\n")
    server.script(
        reply("Let me load it.", calls=[get("calc")], thinking="The user wants a sum. " * 5),
        reply("2", thinking="Now add."),
    )
    options = session_options(server, tmp_path / "skills")
    done = skillchat("ask", *options, "--thinking-budget", "2000", "1+1?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2\n"
    first, second = (r.body for r in server.completions)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert first["max_tokens"] > 2000
    # The tool round's assistant turn starts with its thinking block, signature and all
    # (the server refuses it otherwise, as the API does).
    block = second["messages"][1]["content"][0]
    assert block["type"] == "thinking" and block["thinking"] == "The user wants a sum. " * 5
    assert block["signature"].startswith("sig-1-")
    assert "thinking… 110 characters (not shown)" in done.stderr
    assert "The user wants a sum" not in done.stderr


def test_skills_stats_and_cost_know_cached_tokens(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "calc", "# Calc\n")
    with AnthropicServer(prompt_cache=True) as server:
        server.script(reply(calls=[get("calc")]), reply("done"))
        asked = skillchat("ask", *session_options(server, tmp_path / "skills"), "hi")
    assert asked.returncode == 0, asked.stderr
    cached = server.usages[1]["cache_read_input_tokens"]
    total = sum(sum(u.values()) for u in server.usages)
    stats = skillchat("skills", "stats", "--skills-dir", str(tmp_path / "skills"), "--json")
    tokens = json.loads(stats.stdout)["tokens"]
    assert (tokens["prompt_tokens"], tokens["cached_tokens"]) == (total, cached)
    stats = skillchat("skills", "stats", "--skills-dir", str(tmp_path / "skills"))
    assert f"tokens: {total:,} in ({cached:,} cached) + 10 out" in stats.stderr
    config = tmp_path / "config.toml"
    config.write_text('model = "anthropic/claude-sonnet-4-5"\n')
    cost = skillchat("skills", "cost", "--config", str(config), "--skills-dir",
                     str(tmp_path / "skills"))  # fmt: skip
    assert cost.returncode == 0, cost.stderr
    # one line, however long, on a pipe: not wrapped at 80 columns
    [said] = [line for line in cost.stderr.splitlines() if "prompt caching" in line]
    assert said.startswith("anthropic/claude-sonnet-4-5: prompt caching reads these ")
    assert "tokens from the cache on every request after the first ($0.0" in said


def test_a_chat_moved_to_an_openai_server_sends_no_thinking_blocks(
    server: AnthropicServer, skills: Registry
) -> None:
    """The thinking blocks kept for Anthropic's API are its alone: a chat that moves
    (`/model`) to an OpenAI-compatible server sends its messages without them."""
    with ScriptedServer() as other:
        server.script(reply("Loading.", calls=[get("calc")], thinking="hmm"), reply("done"))
        other.script(reply("moved"))
        named = {"oai": {"model": "openai/test-model", "api_base": other.base_url}}
        settings = Settings().replaced(
            model="anthropic/test-model", api_base=server.base_url, thinking_budget=1024,
            named_models=named, max_retries=0,
        )  # fmt: skip
        session = Session(settings, registry=skills)
        assert session.send("go").answer == "done"
        assert "thinking_blocks" in json.dumps(session.chat.messages)
        session.switch_model("oai")
        assert session.send("and now?").answer == "moved"
    sent = other.completions[0].body["messages"]
    assert any(m.get("tool_calls") for m in sent)  # the tool round went along
    assert "thinking" not in json.dumps(sent)


def test_with_only_an_anthropic_key_the_default_model_is_anthropics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    shown = json.loads(skillchat("config", "show", "--json").stdout)
    assert shown["settings"]["model"] == "anthropic/claude-sonnet-4-5"
    assert shown["sources"]["model"] == "ANTHROPIC_API_KEY"
    assert KEY not in json.dumps(shown)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-0123456789")  # both: as before
    shown = json.loads(skillchat("config", "show", "--json").stdout)
    assert (shown["settings"]["model"], shown["sources"]["model"]) == ("gpt-4.1-mini", "default")


def test_the_repl_toolbar_says_what_was_cached(tmp_path: Path, pty_sessions) -> None:
    write_skill(tmp_path / "skills", "calc", "# Calc\n")
    with AnthropicServer(prompt_cache=True) as server:
        server.script(reply(calls=[get("calc")]), reply("two"))
        session = pty_sessions(*session_options(server, tmp_path / "skills"))
        session.prompt()
        assert "two" in session.run("1+1?")
        cached = server.usages[1]["cache_read_input_tokens"]
        session.expect(f" tokens ({cached:,} cached)")  # the bottom toolbar
        assert session.quit() == 0


def test_a_messages_api_server_is_not_asked_for_props(
    server: AnthropicServer, tmp_path: Path
) -> None:
    """llama.cpp's /props is a chat-completions server's: the first request to a
    Messages API server does not wait for its 404."""
    server.script(reply("ok"))
    done = skillchat("ask", *session_options(server, tmp_path), "hi")
    assert done.returncode == 0, done.stderr
    assert [r.path for r in server.requests] == ["/v1/messages"]
