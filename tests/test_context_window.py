"""The context budget follows the model's window when the server (llama.cpp's /props) or
litellm's model map reports one, unless the user set `context_max_chars`. Against the
scripted server; tests/test_real_model.py does the same against llama.cpp itself."""

from __future__ import annotations

import socket
import time
from dataclasses import replace
from pathlib import Path

import pytest
from chat_helpers import RecordingView, make_chat, registry, settings_for, write_skill
from helpers import backend_of
from openai_server import ScriptedServer, call, reply

from skillchat.config import Settings, load_settings
from skillchat.engine.context_fit import ELIDED
from skillchat.engine.context_window import (
    budget_for_window,
    context_budget,
    may_answer_props,
    props_url,
    server_window,
)
from skillchat.engine.resolve import asked, resolve
from skillchat.skills.registry import Registry

# A chat past its first answer, over the lookup's floor.
LONG = [{"role": "user", "content": "x" * 5_000}, {"role": "assistant", "content": "ok"}]
PROPS_4K = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}


def props_requests(server: ScriptedServer) -> list:
    return [r for r in server.requests if r.path == "/props"]


def test_a_window_becomes_three_quarters_of_it_in_characters_never_above_the_default() -> None:
    assert budget_for_window(4096, 300_000) == 3072 * 3
    assert budget_for_window(1_047_576, 300_000) == 300_000  # gpt-4.1's 1M tokens
    assert budget_for_window(1, 300_000) == 3  # never 0: the loop needs a positive budget


def test_a_fitted_chat_has_the_budget_the_loop_derives_from_the_same_window() -> None:
    """Fitting at start-up (--gguf, an --api-base server's /props) and the loop's own
    lookup give one budget, so a fitted chat compacts where an unfitted one would;
    the catalog takes at most a quarter of it and the reply the reserved quarter."""
    server = "http://127.0.0.1:9/v1"  # its window stated: nothing is asked
    settings = load_settings()
    fitted = resolve(settings, replace(asked(settings), api_base=server, window=4096)).over(
        settings
    )
    assert (
        fitted.limits.context_max_chars
        == context_budget(load_settings(), lambda: 4096, LONG)
        == 9216
    )
    assert (fitted.limits.catalog_max_chars, fitted.model.max_tokens) == (9216 // 4, 1024)
    assert context_budget(fitted, lambda: None, LONG) == 9216  # stated: not looked up again
    mine = load_settings(max_tokens=77)
    assert (
        resolve(mine, replace(asked(mine), api_base=server, window=4096)).max_tokens == 77
    )  # what the user set wins


def test_the_users_context_max_chars_wins_and_the_window_is_not_even_asked(tmp_path) -> None:
    asked: list[bool] = []

    def window() -> int:
        asked.append(True)
        return 4096

    config = tmp_path / "config.toml"
    config.write_text("context_max_chars = 500000\n")
    assert context_budget(load_settings(config), window, LONG) == 500_000
    assert asked == []
    assert context_budget(load_settings(), window, LONG) == 9216  # the default yields
    assert (
        context_budget(Settings().replaced(context_max_chars=123), window, LONG) == 123
    )  # set in code
    assert context_budget(load_settings(), lambda: None, LONG) == 300_000


def test_a_short_chat_never_looks_the_window_up() -> None:
    def window() -> int:
        raise AssertionError("looked up")

    short = [{"role": "user", "content": "x" * 3_000}]
    assert context_budget(load_settings(), window, short) == 300_000


def test_props_sits_beside_v1() -> None:
    assert props_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/props"
    assert props_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/props"
    assert props_url("http://h:8080") == "http://h:8080/props"


def test_the_server_window_is_read_once_from_props(server) -> None:
    server.props = PROPS_4K
    backend = backend_of(settings_for(server))
    assert backend.context_window() == 4096
    assert backend.context_window() == 4096
    assert len(props_requests(server)) == 1


def test_no_props_and_no_known_model_means_no_window(server) -> None:
    assert backend_of(settings_for(server)).context_window() is None  # /props is a 404


def test_a_known_model_without_a_server_takes_litellms_model_map_window(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    assert backend_of(Settings().replaced(model="gpt-4o")).context_window() == 128_000
    assert backend_of(Settings().replaced(model="openai/gpt-4o")).context_window() == 128_000
    assert backend_of(Settings().replaced(model="gpt-no-such-model")).context_window() is None
    monkeypatch.setenv("MISTRAL_API_KEY", "test-not-used")
    litellm_backend = backend_of(Settings().replaced(model="mistral/mistral-large-latest"))
    assert litellm_backend.name == "litellm"
    assert litellm_backend.context_window() == 262_144
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-used")
    native = backend_of(Settings().replaced(model="anthropic/claude-sonnet-4-5"))
    assert native.name == "anthropic"  # Anthropic's own API now, the same map's window
    assert native.context_window() == 200_000


def test_a_server_that_never_answers_props_costs_a_bounded_wait() -> None:
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        settings = Settings().replaced(model="local", api_base=f"http://127.0.0.1:{port}/v1")
        begun = time.monotonic()
        assert backend_of(settings).context_window() is None
        assert time.monotonic() - begun < 10  # PROBE_TIMEOUT is 2 s; generous for CI load


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    files = {"references/a.md": "A" * 5_000, "references/b.md": "B" * 5_000}
    return registry(write_skill(root, "docs", "# Docs\n", files), directories=(root,))


def read(path: str) -> dict:
    return call("read_file_in_skill", {"skill_name": "docs", "file_path": path})


def two_reads(server: ScriptedServer) -> None:
    server.script(
        reply(calls=[read("references/a.md")]),
        reply("read a"),
        reply(calls=[read("references/b.md")]),
        reply("read b"),
        reply("done"),
    )


def test_a_small_server_window_trims_a_chat_the_default_budget_would_not(server, skills) -> None:
    server.props = {"default_generation_settings": {"n_ctx": 4096}}  # ~9,000 characters
    two_reads(server)
    view = RecordingView()
    chat = make_chat(server, skills, view)
    for text in ("read a", "read b", "and now?"):
        chat.send(text)
    last = server.completions[-1].body["messages"]
    assert next(m["content"] for m in last if m.get("role") == "tool") == ELIDED
    assert any("context budget (9,216 characters)" in n for n in view.of("notice"))
    assert len(props_requests(server)) == 1


def test_the_probe_and_the_chat_share_one_connection(server, skills) -> None:
    """The probe goes on the chat's kept-alive connection, and the requests after it
    too (a server with Nagle's algorithm on, this one, no longer holds their first
    event for a delayed ACK: wire.py's quick ACK)."""
    server.props = PROPS_4K
    two_reads(server)
    make_chat(server, skills, RecordingView()).send("read a")
    probe = props_requests(server)[0]
    after = server.requests[server.requests.index(probe) + 1]
    assert after.path.endswith("/chat/completions") and after.port == probe.port
    assert server.connections == 1


def test_a_hosted_server_is_never_asked_for_props() -> None:
    assert may_answer_props("http://127.0.0.1:8080/v1")
    assert may_answer_props("http://[::1]:8080/v1")
    assert may_answer_props("http://192.168.1.20:8080/v1")
    assert may_answer_props("http://10.0.0.5/v1") and may_answer_props("http://gpu-box:8080")
    assert may_answer_props("http://llm.lan/v1") and may_answer_props("http://localhost/v1")
    assert not may_answer_props("https://openrouter.ai/api/v1")
    assert not may_answer_props("https://api.together.xyz/v1")
    assert not may_answer_props("http://8.8.8.8/v1")
    # Not asked, so nothing is sent: an address nothing listens on answers None at once.
    assert server_window("https://api.example.com/v1") is None


def test_a_one_shot_question_asks_the_server_nothing_but_the_question(server) -> None:
    server.props = PROPS_4K
    server.script(reply("hi"))
    make_chat(server, Registry(skills={})).send("hello")
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]


def test_a_long_first_message_is_sent_before_the_window_is_asked(server) -> None:
    """Nothing of a chat's first request can be trimmed (no answer, no result yet):
    its window is asked for after it, when there is."""
    server.props = PROPS_4K
    server.script(reply("hi"), reply("again"))
    chat = make_chat(server, Registry(skills={}))
    chat.send("x" * 6_000)
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]
    chat.send("and now?")
    assert [r.path for r in server.requests][1:] == ["/props", "/v1/chat/completions"]


def test_a_budget_the_user_set_is_kept_whatever_the_server_says(server, skills) -> None:
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    two_reads(server)
    chat = make_chat(server, skills, RecordingView())
    chat.use_settings(chat.settings.replaced(context_max_chars=300_000))  # the user's own
    for text in ("read a", "read b", "and now?"):
        chat.send(text)
    last = server.completions[-1].body["messages"]
    assert ELIDED not in [m["content"] for m in last if m.get("role") == "tool"]
    assert props_requests(server) == []
