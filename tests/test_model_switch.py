"""`/model NAME` in the REPL says which server it talks to, and a later `/model other`
goes back to the session's own server, not the previous named model's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import session_options
from openai_server import ScriptedServer, reply
from pty_session import PtySession


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
