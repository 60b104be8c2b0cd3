"""`/model NAME` in the REPL says which server it talks to, and a later `/model other`
goes back to the session's own server, not the previous named model's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import session_options
from openai_server import ScriptedServer, reply
from pty_session import LINE_DONE, PtySession


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def test_model_name_says_its_server_and_the_next_switch_goes_back(
    server: ScriptedServer,
    other: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    (tmp_path / "none").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[models.smol]\nmodel = "smol-id"\napi_base = "{other.base_url}"\nbackend = "openai"\n'
    )
    other.script(reply("from smol"))
    server.script(reply("from the session's server"))
    session = pty_sessions(*session_options(server, tmp_path / "none"), "--config", str(config))
    session.prompt()
    said = session.run("/model smol")
    assert "model: smol-id" in said and f"server: {other.base_url}" in said
    assert "from smol" in session.run("hello")
    said = session.run("/model openai/plain")
    assert "model: openai/plain" in said and f"server: {server.base_url}" in said
    assert "from the session's server" in session.run("again")
    assert [c.body["model"] for c in other.completions] == ["smol-id"]
    assert [c.body["model"] for c in server.completions] == ["plain"]
    assert session.quit() == 0


PROPS = {"default_generation_settings": {"n_ctx": 4096}}
BIG_PROPS = {"default_generation_settings": {"n_ctx": 32768}}


def test_a_named_models_server_is_fitted_to_its_own_window_and_back(
    server: ScriptedServer,
    other: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """The session's server reports 4,096 tokens, the named model's 32,768: each gets
    the reply share of its own window (a quarter), never the other's."""
    (tmp_path / "none").mkdir()
    server.props, other.props = PROPS, BIG_PROPS
    config = tmp_path / "config.toml"
    config.write_text(f'[models.big]\nmodel = "big-id"\napi_base = "{other.base_url}"\n')
    other.script(reply("from big"))
    server.script(reply("first"), reply("back"))
    session = pty_sessions(*session_options(server, tmp_path / "none"), "--config", str(config))
    session.prompt()
    assert "first" in session.run("hello")
    session.run("/model big")
    assert "from big" in session.run("hello again")
    session.run("/model openai/test-model")
    assert "back" in session.run("and back")
    assert [c.body["max_tokens"] for c in server.completions] == [1024, 1024]
    assert [c.body["max_tokens"] for c in other.completions] == [8192]
    assert session.quit() == 0


@pytest.mark.real_model
def test_model_name_leaves_a_local_file_for_its_server_and_comes_back(
    server: ScriptedServer,
    smollm2: Path,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """`--gguf`: `/model big` talks to big's server with its window's fitting (not the
    local context's 512-token replies) and the backend its name picks (the local
    model's openai is not kept: `hosted_vllm/` goes through LiteLLM); the local
    model's own name, as `/model` shows it, goes back to the file.

    big's window is its table's `context_window`, not its server's `/props`: that
    probe gives up after 5 s (PROBE_TIMEOUT, best effort by design), and here it ran
    while the local model was still loading (the prompt comes first) on a machine
    already busy (`-n auto`), where it can take longer: big then went unfitted (no
    `max_tokens` at all), and the test failed. The probe's own fitting is
    test_a_named_models_server_is_fitted_to_its_own_window_and_back's subject."""
    config = tmp_path / "config.toml"
    config.write_text(
        "[local]\ncontext_max = 2048\n[skills]\nenabled = false\n"
        f'[models.big]\nmodel = "big-id"\napi_base = "{server.base_url}"\n'
        "context_window = 32768\n"
        f'[models.vllm]\nmodel = "hosted_vllm/big-id"\napi_base = "{server.base_url}"\n'
    )
    server.script(reply("from big"))
    session = pty_sessions("--gguf", str(smollm2), "--config", str(config), timeout=120)
    session.prompt()
    local = session.run("/model")
    assert "server: local model" in local
    name = local.split("model: ", 1)[1].split(" (backend", 1)[0].strip()
    said = session.run("/model big")
    assert "model: big-id (backend: openai" in said and f"server: {server.base_url}" in said
    assert "from big" in session.run("hello")
    assert [c.body["max_tokens"] for c in server.completions] == [8192]
    assert "backend: litellm" in session.run("/model vllm")
    said = session.run(f"/model {name}")
    assert f"model: {name}" in said and "server: local model" in said
    session.line("Say hi")
    session.expect(LINE_DONE)
    session.prompt()  # the local model answered: nothing more reached the server
    assert len(server.completions) == 1
    assert session.quit() == 0
