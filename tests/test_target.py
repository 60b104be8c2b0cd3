"""Where a chat's requests go after it moves (`/model`, `-c`) is resolved afresh from
what the user asked for, never carried over from the place it leaves: a named model
without `api_base` runs on its provider's own server, not the session's `--api-base`;
a bare model id leaves a `--gguf` session's file for the configured server; a chat
continued on another server is fitted to that server's window, not the configured
named model's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from chat_helpers import RecordingView
from helpers import skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.config import load_settings
from skillchat.session import Session


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


def test_a_named_model_without_api_base_leaves_the_sessions_api_base(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/model cloud` where `[models.cloud]` names no server: the provider's own (here
    `OPENAI_BASE_URL`, where the openai SDK sends), never the session's `--api-base`."""
    monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = tmp_path / "config.toml"
    config.write_text('[models.cloud]\nmodel = "openai/cloud-id"\n[skills]\nenabled = false\n')
    settings = load_settings(config, model="openai/local-id", api_base=server.base_url)
    server.script(reply("from the session's server"))
    other.script(reply("from the provider"))
    session = Session(settings, listeners=[RecordingView()])
    assert session.send("hi").answer == "from the session's server"
    session.switch_model("cloud")
    assert session.send("again").answer == "from the provider"
    assert [c.body["model"] for c in server.completions] == ["local-id"]
    assert [c.body["model"] for c in other.completions] == ["cloud-id"]


@pytest.mark.real_model
def test_a_model_id_leaves_a_local_file_for_the_configured_server(
    server: ScriptedServer,
    smollm2: Path,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """`--gguf` with a configured `api_base`: `/model openai/plain` (no table) talks to
    that server, not to the local file under another name."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'api_base = "{server.base_url}"\n[local]\ncontext_max = 2048\n[skills]\nenabled = false\n'
    )
    server.script(reply("from the server"))
    session = pty_sessions("--gguf", str(smollm2), "--config", str(config), timeout=120)
    session.prompt()
    said = session.run("/model openai/plain")
    assert "model: openai/plain" in said and f"server: {server.base_url}" in said
    assert "from the server" in session.run("hello")
    assert [c.body["model"] for c in server.completions] == ["plain"]
    assert session.quit() == 0


def test_a_chat_continued_on_another_server_drops_the_configured_models_window(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    """The configured model is `[models.qwen]` (its server, a 2,048-token window); a chat
    made on another server with `--api-base` and continued with `-c` and no flags goes
    on there with that server's window (its `/props`: 32,768 tokens, so replies of up
    to 8,192), not qwen's (512)."""
    config = tmp_path / "config.toml"
    config.write_text(
        'model = "qwen"\n[skills]\nenabled = false\n'
        f'[models.qwen]\nmodel = "openai/qwen-id"\napi_base = "{server.base_url}"\n'
        "context_window = 2048\n"
    )
    other.props = {"default_generation_settings": {"n_ctx": 32768}}
    other.script(reply("first"), reply("second"))
    base = ("ask", "--config", str(config))
    made = skillchat(*base, "--api-base", other.base_url, "--model", "openai/big-id", "hi")
    assert made.returncode == 0, made.stderr
    again = skillchat(*base, "-c", "and again")
    assert again.returncode == 0 and again.stdout.strip() == "second", again.stderr
    assert [c.body["model"] for c in other.completions] == ["big-id", "big-id"]
    assert [c.body["max_tokens"] for c in other.completions] == [8192, 8192]
    assert server.completions == []
