"""The scripted server itself, checked with the raw `openai` SDK and raw HTTP.

If the server drifted from OpenAI's wire format, every backend test built on it
would prove nothing; these tests pin the format the SDK actually parses.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import openai
import pytest
from openai_server import ScriptedServer, call, error, reply

HERE = Path(__file__).parent


def client(server: ScriptedServer, **options: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test-key", max_retries=0, **options)  # type: ignore[arg-type]


def stream(server: ScriptedServer, **extra: object) -> list:
    chunks = client(server).chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}], stream=True, **extra
    )  # type: ignore[call-overload]
    return list(chunks)


def test_streamed_text_arrives_in_several_chunks(server: ScriptedServer) -> None:
    server.script(reply("Hello there, friend", chunks=4))
    chunks = stream(server)
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(pieces) == 4 and "".join(pieces) == "Hello there, friend"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1


def test_raw_stream_is_sse_with_done(server: ScriptedServer) -> None:
    server.script(reply("ab", chunks=2))
    with httpx.stream(
        "POST",
        f"{server.base_url}/chat/completions",
        json={"model": "m", "messages": [], "stream": True},
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["transfer-encoding"] == "chunked"
        body = response.read().decode()
    events = body.split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    first = json.loads(events[0].removeprefix("data: "))
    assert first["choices"][0] == {
        "index": 0,
        "delta": {"role": "assistant", "content": "", "refusal": None},
        "logprobs": None,
        "finish_reason": None,
    }
    assert "usage" not in first  # only present when include_usage was asked for


def test_parallel_tool_calls_split_across_chunks(server: ScriptedServer) -> None:
    args = {"skill_name": "pdf-processing"}
    server.script(reply(calls=[call("get_skill", args, id="call_a"), call("list_skills")]))
    chunks = stream(server)
    fragments = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    firsts = [f for f in fragments if f.id]
    assert [(f.index, f.id, f.function.name) for f in firsts] == [
        (0, "call_a", "get_skill"),
        (1, "call_1_1", "list_skills"),
    ]
    assert all(f.function.arguments == "" for f in firsts)
    rest = [f for f in fragments if not f.id]
    assert all(f.function.name is None and f.type is None for f in rest)
    assert len([f for f in rest if f.index == 0]) == 3
    assert "".join(f.function.arguments for f in rest if f.index == 0) == json.dumps(args)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_same_index_variant_reports_every_call_at_index_zero(server: ScriptedServer) -> None:
    server.script(reply(calls=[call("a", id="x"), call("b", id="y")], same_index=True))
    fragments = [tc for c in stream(server) for tc in (c.choices[0].delta.tool_calls or [])]
    assert {f.index for f in fragments} == {0}
    assert [f.id for f in fragments if f.id] == ["x", "y"]


def test_usage_chunk_when_include_usage(server: ScriptedServer) -> None:
    server.script(reply("hi", usage={"prompt_tokens": 7, "completion_tokens": 3}))
    chunks = stream(server, stream_options={"include_usage": True})
    last = chunks[-1]
    assert last.choices == []
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (
        7,
        3,
        10,
    )
    assert all(c.usage is None for c in chunks[:-1])


def test_non_streamed_reply(server: ScriptedServer) -> None:
    server.script(reply("whole answer", calls=[call("list_skills")]))
    completion = client(server).chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}]
    )
    message = completion.choices[0].message
    assert message.content == "whole answer"
    assert message.tool_calls[0].function.name == "list_skills"
    assert completion.usage.total_tokens == 15


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, openai.AuthenticationError),
        (404, openai.NotFoundError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_errors_have_openai_json_bodies(server: ScriptedServer, status: int, kind: type) -> None:
    server.script(error(status, retry_after=2) if status == 429 else error(status))
    with pytest.raises(kind) as info:
        stream(server)
    assert info.value.status_code == status
    assert isinstance(info.value.body, dict) and info.value.body["message"]
    if status == 404:
        assert info.value.code == "model_not_found" and "test-model" in info.value.message
    if status == 429:
        assert info.value.response.headers["retry-after"] == "2"


def test_cut_stream_drops_the_connection_mid_body(server: ScriptedServer) -> None:
    server.script(reply("Hello there, friend", cut_after=2))
    with pytest.raises(httpx.RemoteProtocolError):
        stream(server)


def test_clean_cut_ends_without_finish_reason(server: ScriptedServer) -> None:
    server.script(reply("Hello there, friend", cut_after=2, clean_cut=True))
    chunks = stream(server)
    assert len(chunks) == 2 and all(c.choices[0].finish_reason is None for c in chunks)


def test_delay_holds_the_first_byte(server: ScriptedServer) -> None:
    server.script(reply("slow", delay=0.5), reply("slow", delay=60))
    started = time.monotonic()
    stream(server)
    assert time.monotonic() - started >= 0.5
    with pytest.raises(openai.APITimeoutError):
        client(server, timeout=0.5).chat.completions.create(model="m", messages=[], stream=True)


def test_records_requests_with_headers_body_and_time(server: ScriptedServer) -> None:
    server.script(reply("one"), reply("two"))
    before = time.monotonic()
    stream(server, stream_options={"include_usage": True})
    stream(server)
    first, second = server.completions
    assert before <= first.at <= second.at <= time.monotonic()
    assert first.method == "POST" and first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-test-key"
    assert first.body["messages"] == [{"role": "user", "content": "hi"}]
    assert first.body["stream_options"] == {"include_usage": True}
    assert "stream_options" not in second.body


def test_models_unknown_paths_and_exhausted_script(server: ScriptedServer) -> None:
    models = client(server).models.list()
    assert [m.id for m in models] == ["test-model"]
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/nope")
    assert info.value.code == 404 and json.load(info.value)["error"]["code"] == "unknown_url"
    with pytest.raises(openai.BadRequestError, match="no scripted move left"):
        stream(server)


def test_cli_mode_prints_port_and_serves_the_script(tmp_path: Path) -> None:
    script = tmp_path / "moves.json"
    script.write_text(json.dumps([reply("from a file")]))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "openai_server.py"), "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        c = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
        chunks = c.chat.completions.create(model="m", messages=[], stream=True)
        assert "".join(ch.choices[0].delta.content or "" for ch in chunks) == "from a file"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_requests") as response:
            log = json.load(response)
        assert log[0]["body"]["model"] == "m"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_rules_pick_the_move_by_the_conversation_not_the_queue(server: ScriptedServer) -> None:
    """Two conversations interleaved: each gets its own rule's moves, step by step."""
    server.when("tip", reply(calls=[call("get_skill", {"skill_name": "calculator"})]), reply("9"))
    server.when("commit", reply("feat: x"))
    server.script(reply("from the queue"))
    c = client(server)

    def text(messages: list[dict[str, object]]) -> str:
        chunks = c.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        return "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)

    tip = [{"role": "system", "content": "s"}, {"role": "user", "content": "a 15% tip on 60"}]
    first = c.chat.completions.create(model="m", messages=tip)  # type: ignore[arg-type]
    assert first.choices[0].message.tool_calls[0].function.name == "get_skill"  # type: ignore[index]
    assert text([{"role": "user", "content": "a commit message"}]) == "feat: x"
    tip += [{"role": "assistant", "content": "calling"}, {"role": "tool", "content": "{}"}]
    assert text(tip) == "9"
    assert text([*tip, {"role": "assistant", "content": "9"}]) == "9"  # the last repeats
    assert text([{"role": "user", "content": "anything else"}]) == "from the queue"
