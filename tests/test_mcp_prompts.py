"""A server's prompts (`/mcp__SERVER__PROMPT args`) and resources (`@SERVER:URI`) in
the REPL, and in `mcp list`: tests/mcp_servers.py's `asks` server over streamable
HTTP, the scripted model reading what the user's turn became."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers import session_options, skillchat
from openai_server import ScriptedServer, reply
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from test_mcp import http, shared_server

from skillchat.errors import McpError
from skillchat.mcp.prompts import Prompt, Resource, prompt_arguments
from skillchat.ui.completion import ResourceCompleter, SlashCompleter

if TYPE_CHECKING:
    from pty_session import PtySession


@pytest.fixture(scope="module")
def asks_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from shared_server("asks", tmp_path_factory)


def user_turn(server: ScriptedServer, n: int = -1) -> str:
    """The last user message of request `n`, as the model got it."""
    messages = server.completions[n].body["messages"]
    return str([m for m in messages if m["role"] == "user"][-1]["content"])


def test_mcp_list_shows_prompts_and_resources(tmp_path: Path, asks_url: str) -> None:
    (tmp_path / "config.toml").write_text(http("srv", asks_url))
    config = ["--config", str(tmp_path / "config.toml")]
    done = skillchat("mcp", "list", *config, "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)["servers"][0]
    assert {"command": "/mcp__srv__review", "usage": "<topic> [tone] Review something."} in row[
        "prompts"
    ]
    assert "@srv:note://hello" in row["resources"]
    done = skillchat("mcp", "list", *config, timeout=180)
    assert "/mcp__srv__review <topic> [tone]" in done.stdout and "@srv:note://huge" in done.stdout


def test_prompt_arguments_named_or_in_order() -> None:
    prompt = Prompt("srv", "review", arguments=(("topic", True), ("tone", False)))
    assert prompt_arguments(prompt, "'the README' warm") == {"topic": "the README", "tone": "warm"}
    assert prompt_arguments(prompt, "tone=warm x") == {"tone": "warm", "topic": "x"}
    with pytest.raises(McpError, match="needs topic"):
        prompt_arguments(prompt, "tone=warm")
    with pytest.raises(McpError, match="'z' is one too many"):
        prompt_arguments(prompt, "x y z")


def test_completion_offers_prompts_and_resources() -> None:
    def completed(completer: object, typed: str) -> list[str]:
        found = completer.get_completions(Document(typed), CompleteEvent())  # type: ignore[attr-defined]
        return [c.text for c in found]

    slash = SlashCompleter(lambda: [("mcp__srv__review", "<topic>")], lambda: [], lambda: [])
    assert completed(slash, "/mcp__s") == ["/mcp__srv__review"]
    resources = ResourceCompleter(lambda: [("srv", Resource("note://hello", "hello"))])
    assert completed(resources, "explain @sr") == ["@srv:note://hello"]
    assert completed(resources, "explain @other") == []


def test_a_prompt_is_the_users_turn_and_a_resource_is_attached_in_the_repl(
    server: ScriptedServer, tmp_path: Path, asks_url: str, pty_sessions: Callable[..., PtySession]
) -> None:
    (tmp_path / "config.toml").write_text(http("srv", asks_url))
    (tmp_path / "skills").mkdir()
    server.script(reply("reviewed"), reply("explained"), reply("cut"))
    repl = pty_sessions(
        *session_options(server, tmp_path / "skills"), "--config", str(tmp_path / "config.toml"),
        timeout=120,
    )  # fmt: skip
    repl.prompt()
    assert "reviewed" in repl.run("/mcp__srv__review 'the README' tone=warm")
    assert user_turn(server) == "Please review the README, in a warm tone."
    screen = repl.run("/mcp__srv__review")
    assert "needs topic" in screen and len(server.completions) == 1  # nothing sent
    assert "explained" in repl.run("explain @srv:note://hello please")
    turn = user_turn(server)
    assert turn.startswith('<resource server="srv" uri="note://hello">\nhello from the server\n')
    assert turn.endswith("explain @srv:note://hello please")
    assert "cut" in repl.run("@srv:note://huge")
    assert "[cut at 256 KB]" in user_turn(server) and len(user_turn(server)) < 300_000
    assert repl.quit() == 0
