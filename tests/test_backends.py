"""The model boundary: both backends against a real local OpenAI-protocol server.

Every scenario runs through the `openai` and the `litellm` backend (model
`openai/test-model`, api_base = the scripted server), so the loop above can
rely on the same deltas and the same one-line errors whichever is used.
Nothing is mocked: retries wait for real, just with a shorter `sleep`.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import backend_of, closed_port
from openai_server import ScriptedServer, call, error, reply

from skillchat.backend_table import backend_row
from skillchat.config import Settings
from skillchat.engine.assemble import assemble
from skillchat.engine.backends.base import Backend
from skillchat.engine.backends.openai_backend import describe_base
from skillchat.engine.backends.select import import_on_fresh_stack
from skillchat.engine.events import Delta, Reply, ToolCall, Usage
from skillchat.engine.retry import backoff_delay, parse_retry_after, stream_with_retries
from skillchat.errors import ProviderError

KEY = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "system", "content": "Use skills."}, {"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "get_skill", "parameters": {}}}]
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedServer() as s:
        yield s


@pytest.fixture(params=["openai", "litellm"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def backend_for(server: ScriptedServer, kind: str, **settings: object) -> Backend:
    options: dict = {
        "model": "openai/test-model",
        "api_base": server.base_url,
        "backend": kind,
        "timeout": 5.0,
        **settings,
    }
    return backend_of(Settings().replaced(**options))


def run(
    backend: Backend,
    tools: list | None = None,
    retries: int = 0,
    sleeps: list[float] | None = None,
    on_text: list[str] | None = None,
) -> Reply:
    """One model call as the loop makes it: retried, assembled, text reported."""

    def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)
        time.sleep(seconds / 100)  # real waiting, a hundred times faster

    deltas = stream_with_retries(
        lambda: backend.stream(MESSAGES, tools), max_retries=retries, sleep=sleep
    )
    return assemble(deltas, on_text=None if on_text is None else on_text.append)


# --- replies ---------------------------------------------------------------------------


def test_streamed_text(server: ScriptedServer, kind: str) -> None:
    server.script(reply("Hello there, my friend", chunks=4))
    pieces: list[str] = []
    result = run(backend_for(server, kind), on_text=pieces)
    assert result.text == "Hello there, my friend" and len(pieces) == 4
    assert result.finish_reason == "stop" and result.tool_calls == []
    sent = server.completions[0]
    assert sent.body["model"] == "test-model"
    assert sent.body["messages"] == MESSAGES
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert "tools" not in sent.body
    assert sent.headers["authorization"] == f"Bearer {KEY}"


def test_parallel_tool_calls_split_across_chunks(server: ScriptedServer, kind: str) -> None:
    calls = [
        call("get_skill", {"skill_name": "pdf-processing"}, id="call_a"),
        call("get_skill", {"skill_name": "calculator"}, id="call_b"),
    ]
    server.script(reply("Let me look.", calls=calls, chunks=5))
    result = run(backend_for(server, kind), tools=TOOLS)
    assert result.text == "Let me look." and result.finish_reason == "tool_calls"
    assert result.tool_calls == [
        ToolCall("call_a", "get_skill", '{"skill_name": "pdf-processing"}'),
        ToolCall("call_b", "get_skill", '{"skill_name": "calculator"}'),
    ]
    assert server.completions[0].body["tools"] == TOOLS


def test_parallel_calls_all_at_index_zero(server: ScriptedServer, kind: str) -> None:
    calls = [call("get_skill", {"skill_name": "a"}, id="x"), call("list_skills", id="y")]
    server.script(reply(calls=calls, same_index=True))
    result = run(backend_for(server, kind), tools=TOOLS)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("x", "get_skill", '{"skill_name": "a"}'),
        ("y", "list_skills", "{}"),
    ]


def test_usage_from_the_final_chunk_and_no_empty_tool_list(
    server: ScriptedServer, kind: str
) -> None:
    server.script(reply("ok", usage={"prompt_tokens": 7, "completion_tokens": 3}))
    assert run(backend_for(server, kind), tools=[]).usage == Usage(7, 3, 10, cost=None)
    assert "tools" not in server.completions[0].body  # OpenAI rejects "tools": []


def test_litellm_prices_a_known_model(server: ScriptedServer) -> None:
    server.script(reply("ok", usage={"prompt_tokens": 1000, "completion_tokens": 1000}))
    usage = run(backend_for(server, "litellm", model="openai/gpt-4o-mini")).usage
    assert usage is not None and usage.cost is not None and 0 < usage.cost < 0.01


def test_local_server_needs_no_key(
    server: ScriptedServer, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    server.script(reply("ok"))
    assert run(backend_for(server, kind)).text == "ok"
    assert server.completions[0].headers["authorization"] == "Bearer sk-no-key"


def test_no_key_and_no_api_base_fails_before_any_request(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(
        ProviderError,
        match="OPENAI_API_KEY is not set: export it or `skillchat keys set` it, "
        "or pass --api-base for a local server",
    ):
        backend_of(Settings().replaced(model="openai/test-model", backend=kind))


def test_litellm_refuses_a_model_without_a_known_provider() -> None:
    with pytest.raises(
        ProviderError,
        match="litellm does not know which provider serves 'llama3': write it as provider/model",
    ):
        backend_of(Settings().replaced(model="llama3", backend="litellm"))


# --- errors ----------------------------------------------------------------------------


def test_401_names_the_key_variable_and_never_the_key(server: ScriptedServer, kind: str) -> None:
    server.script(error(401, f"Incorrect API key provided: {KEY}."))
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind), retries=3)
    assert (
        str(info.value) == f"authentication failed (401) at {server.base_url}: check OPENAI_API_KEY"
    )
    assert not info.value.retryable and len(server.completions) == 1


def test_404_model_not_found(server: ScriptedServer, kind: str) -> None:
    server.script(error(404))
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind), retries=3)
    assert str(info.value) == (
        f"model 'openai/test-model' not found (404) at {server.base_url}: check --model"
    )
    assert len(server.completions) == 1


def test_400_shows_the_provider_message_without_secrets(server: ScriptedServer, kind: str) -> None:
    server.script(error(400, f"context too long for key {KEY}\nor sk-other-0123456789"))
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind), retries=3)
    message = str(info.value)
    assert message.startswith(f"the request was rejected (400) by {server.base_url}: context")
    assert "0123456789" not in message and "\n" not in message and not info.value.retryable


def test_messages_hide_keys_and_url_credentials() -> None:
    assert describe_base("http://me:secret@host:8080/v1") == "http://host:8080/v1"
    assert describe_base("https://api.example.com/v1") == "https://api.example.com/v1"


def test_429_retry_after_is_honoured_then_success(server: ScriptedServer, kind: str) -> None:
    server.script(error(429, retry_after=2), reply("finally"))
    sleeps: list[float] = []
    assert run(backend_for(server, kind), retries=3, sleeps=sleeps).text == "finally"
    assert sleeps == [2.0]
    first, second = server.completions
    assert second.at - first.at >= 0.02  # the (scaled) wait really happened


def test_429_retries_exhausted(server: ScriptedServer, kind: str) -> None:
    server.script(*[error(429, retry_after=1)] * 4)
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind), retries=3)
    assert str(info.value) == f"rate limited (429) by {server.base_url}; gave up after 3 retries"
    assert len(server.completions) == 4


def test_insufficient_quota_is_not_retried(server: ScriptedServer, kind: str) -> None:
    server.script(error(429, "You exceeded your current quota.", code="insufficient_quota"))
    with pytest.raises(ProviderError, match=r"^quota exceeded \(429\)") as info:
        run(backend_for(server, kind), retries=3)
    assert not info.value.retryable and len(server.completions) == 1


def test_500_and_503_are_retried(server: ScriptedServer, kind: str) -> None:
    server.script(error(500), error(503), reply("recovered"))
    sleeps: list[float] = []
    assert run(backend_for(server, kind), retries=3, sleeps=sleeps).text == "recovered"
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


def test_503_exhausted_says_server_error(server: ScriptedServer, kind: str) -> None:
    server.script(error(503), error(503))
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind), retries=1)
    assert str(info.value).startswith(f"server error (503) from {server.base_url}: The engine")
    assert str(info.value).endswith("; gave up after 1 retry")


def test_connection_refused(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    base = f"http://127.0.0.1:{closed_port()}/v1"
    backend = backend_of(
        Settings().replaced(model="openai/test-model", api_base=base, backend=kind)
    )
    with pytest.raises(ProviderError) as info:
        run(backend)
    assert (
        str(info.value) == f"cannot connect to {base}: connection refused — is the server running?"
    )
    assert not info.value.retryable  # nothing listens on this machine: not retried


def test_timeout(server: ScriptedServer, kind: str) -> None:
    server.script(reply("too late", delay=60))
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        run(backend_for(server, kind, timeout=1.0))
    # Well before the answer would come, however loaded the machine: the timeout
    # ended the wait, not the reply.
    assert time.monotonic() - started < 30
    assert len(server.completions) == 1
    assert str(info.value).startswith(f"timed out after 1s waiting for {server.base_url} ")
    assert not info.value.retryable  # a retry would wait `timeout` all over again


def test_keepalive_comments_are_skipped_and_keep_a_slow_prompt_alive(
    server: ScriptedServer, kind: str
) -> None:
    """llama.cpp sends `:` comment lines while it processes a long prompt: they are not
    text, and each one is a sign of life, so the read timeout (1.5 s here) counts from
    the last one, not from the request (2.4 s here before the first event). The 0.9 s
    between a comment and the timeout is a loaded machine's slack."""
    server.script(reply("answer", keepalives=4, keepalive_every=0.6))
    pieces: list[str] = []
    result = run(backend_for(server, kind, timeout=1.5), on_text=pieces)
    assert result.text == "answer"
    assert "".join(pieces) == "answer"
    assert len(server.completions) == 1  # not a timeout, then a retry


@pytest.mark.parametrize("clean", [False, True], ids=["dropped", "clean-end"])
def test_stream_cut_mid_reply_is_not_retried(
    server: ScriptedServer, kind: str, clean: bool
) -> None:
    server.script(
        reply("Hello there, my friend", chunks=4, cut_after=3, clean_cut=clean),
        reply("never asked for"),
    )
    shown: list[str] = []
    with pytest.raises(ProviderError, match=r"^the stream was cut off mid-reply by ") as info:
        run(backend_for(server, kind), retries=3, on_text=shown)
    assert "".join(shown) == "Hello there,"  # shown, so not retried
    assert info.value.retryable and len(server.completions) == 1


def test_stream_cut_before_any_text_is_retried(server: ScriptedServer, kind: str) -> None:
    server.script(reply("lost", cut_after=1), reply("second try"))
    assert run(backend_for(server, kind), retries=3).text == "second try"
    assert len(server.completions) == 2


# --- choosing and importing ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "backend", "api_base", "expected"),
    [
        ("gpt-4.1-mini", "auto", None, "openai"),
        ("o3-mini", "auto", None, "openai"),
        ("chatgpt-4o-latest", "auto", None, "openai"),
        ("openai/anything", "auto", None, "openai"),
        ("anthropic/claude-sonnet-4", "auto", None, "anthropic"),
        ("anthropic/claude-sonnet-4", "auto", "http://gw:8080/v1", "anthropic"),
        ("any-model", "anthropic", "http://gw:8080/v1", "anthropic"),
        ("ollama_chat/llama3", "auto", "http://localhost:11434", "litellm"),
        ("claude-sonnet-4", "auto", None, "litellm"),
        ("llama3", "auto", "http://localhost:8080/v1", "openai"),
        ("gpt-4o", "litellm", None, "litellm"),
        ("anthropic/claude", "openai", None, "openai"),
    ],
)
def test_backend_row_chosen(model: str, backend: str, api_base: str | None, expected: str) -> None:
    assert backend_row(model, backend, api_base).name == expected


def _imports(code: str) -> dict[str, bool]:
    probe = (
        code + "\nimport sys, json; print(json.dumps({m: m in sys.modules for m in "
        "('openai', 'litellm')}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(out.stdout.splitlines()[-1])


def test_select_imports_no_sdk() -> None:
    assert _imports("import skillchat.engine.backends.select") == {
        "openai": False,
        "litellm": False,
    }


def test_litellm_prints_nothing(server: ScriptedServer, tmp_path: Path) -> None:
    """A subprocess runs litellm through a reply and a failure: stdout and stderr
    stay empty (no banners, no "Give Feedback", no log lines, no warnings)."""
    server.script(reply("ok"), error(401), reply("cut", cut_after=2), error(400))
    code = (
        "from skillchat.config import Settings\n"
        "from skillchat.engine.backends.base import Timeouts\n"
        "from skillchat.engine.backends.select import make_backend\n"
        "from skillchat.engine.resolve import asked, resolve\n"
        "from skillchat.errors import ProviderError\n"
        f"s = Settings().replaced(model='openai/test-model', api_base='{server.base_url}',"
        " backend='litellm')\n"
        "b = make_backend(resolve(s, asked(s), probe=False), Timeouts.of(s.model))\n"
        "for _ in range(4):\n"
        "    try:\n        list(b.stream([{'role': 'user', 'content': 'hi'}], None))\n"
        "    except ProviderError:\n        pass\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=180
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    assert len(server.completions) == 4


# --- retry policy ----------------------------------------------------------------------


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= (parse_retry_after({"retry-after": when}) or 0) <= 30
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    for attempt, (low, high) in enumerate([(0.25, 0.5), (0.5, 1.0), (1.0, 2.0)], 1):
        assert all(low <= backoff_delay(attempt, None) <= high for _ in range(50))
    assert backoff_delay(30, None) <= 60.0
    assert backoff_delay(1, 7.0) == 7.0 and backoff_delay(1, 3600.0) == 60.0


def test_retries_only_before_the_first_delta() -> None:
    """Failures before anything was yielded are retried (on_retry is told); a failure
    after a delta, or a non-retryable one, propagates unchanged and at once."""
    attempts: list[int] = []
    retries: list[tuple[int, float, str]] = []

    def flaky() -> Iterator[Delta]:
        attempts.append(1)
        if len(attempts) < 3:
            raise ProviderError("busy", retryable=True, retry_after=0.01)
        yield Delta(text="ok")
        raise ProviderError("cut", retryable=True)

    stream = stream_with_retries(
        flaky,
        max_retries=5,
        sleep=time.sleep,
        on_retry=lambda n, d, e: retries.append((n, d, str(e))),
    )
    seen: list[str | None] = []
    with pytest.raises(ProviderError, match=r"^cut$"):
        for delta in stream:
            seen.append(delta.text)
    assert seen == ["ok"]
    assert len(attempts) == 3
    assert retries == [(1, 0.01, "busy"), (2, 0.01, "busy")]

    def fatal() -> Iterator[Delta]:
        attempts.append(1)
        raise ProviderError("bad key")
        yield Delta()  # pragma: no cover - makes this a generator

    attempts.clear()
    with pytest.raises(ProviderError, match=r"^bad key$"):
        list(stream_with_retries(fatal, max_retries=5, sleep=time.sleep))
    assert len(attempts) == 1


def test_a_backend_module_another_thread_is_importing_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The REPL imports the SDK's module on a thread while a `/model` or a fork may
    make its backend: the maker must wait for that import to end, not take the
    half-run module from sys.modules (it had no class yet: "partially initialized
    module 'openai_backend' has no attribute 'OpenAIBackend'", an internal error)."""
    (tmp_path / "import_gate.py").write_text(
        "import threading\nstarted = threading.Event()\ngo = threading.Event()\n"
    )
    (tmp_path / "slow_backend.py").write_text(
        "import import_gate\nimport_gate.started.set()\nimport_gate.go.wait(60)\n"
        "class Backend:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    gate = importlib.import_module("import_gate")
    preload = threading.Thread(target=importlib.import_module, args=("slow_backend",))
    preload.start()
    assert gate.started.wait(30)
    seen: list[bool] = []
    maker = threading.Thread(
        target=lambda: (
            import_on_fresh_stack("slow_backend"),
            seen.append(hasattr(sys.modules["slow_backend"], "Backend")),
        )
    )
    maker.start()
    maker.join(2)  # a maker that does not wait is done by now, with no class to see
    gate.go.set()
    maker.join(30)
    preload.join(30)
    assert seen == [True]
    monkeypatch.delitem(sys.modules, "slow_backend")
    monkeypatch.delitem(sys.modules, "import_gate")
