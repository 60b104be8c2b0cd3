"""An HTTP MCP server's OAuth login facing a hostile authorization server, a forged
redirect and a token file that is not safe to use: each test runs the real
`skillchat mcp login` (or a chat) against tests/oauth_mcp_server.py in a hostile
mode, and holds one promise of docs/security.md's "MCP authorization": one line,
nothing stored, the chat goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import tool_messages
from helpers import session_options, skillchat
from oauth_helpers import redirect_of
from openai_server import ScriptedServer, call, reply
from test_mcp_oauth import events, login, no_browser, protected, token_file

__all__ = ["no_browser"]  # the fixture: no browser is ever opened


def refused(tmp_path: Path, mode: str) -> str:
    """`mcp login` against the authorization server in `mode`: its one line (exit 1),
    nothing stored, no code asked for."""
    with protected(tmp_path / "as", mode) as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        code, _, said = login(config)
        assert code == 1, said
        lines = [line for line in said.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in said, said
        assert not token_file().exists()
        assert "authorize" not in events(tmp_path / "as")
        return lines[0]


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        # Its metadata redirects to another origin: not followed, not read.
        ("redirect", "could not log in"),
        # Its metadata names another issuer than the one the resource named.
        ("wrong-issuer", "could not log in"),
        # Its token endpoint (where the code and verifier would go) is elsewhere.
        ("other-origin", "sends to another origin, http://127.0.0.1:"),
        # The resource names an authorization server over plain http on a remote host.
        ("http-remote", "refused its authorization server: http://auth.example.com is not https"),
        # Its metadata never ends: cut at a megabyte.
        ("endless", "could not log in"),
    ],
)
def test_a_hostile_authorization_server_is_refused_in_one_line(
    tmp_path: Path, mode: str, said: str
) -> None:
    line = refused(tmp_path, mode)
    assert said in line and "MCP server 'prot': " in line, line


def test_a_redirect_with_another_state_logs_in_to_nothing(tmp_path: Path) -> None:
    def forged(url: str) -> None:  # a page of another site, racing the real redirect
        location = redirect_of(url)
        assert location is not None
        redirect_of(location.replace("state=", "state=forged"))

    with protected(tmp_path / "as") as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        code, _, said = login(config, forged)
        assert code == 1, said
        assert "the redirect's state is not the login's: not logged in" in said
        assert "Traceback" not in said and not token_file().exists()
        assert "token authorization_code" not in events(tmp_path / "as")


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda path: path.chmod(0o644), "can be read by others (mode 0o644), so it is not used"),
        (lambda path: path.write_text("{not json"), "is not a token file skillchat wrote"),
    ],
)
def test_a_loose_or_corrupt_token_file_is_not_used_and_the_chat_goes_on(
    server: ScriptedServer, tmp_path: Path, spoil: object, said: str
) -> None:
    with protected(tmp_path / "as") as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        assert login(config)[0] == 0
        before = json.loads(token_file().read_text())["tokens"]["access_token"]
        spoil(token_file())  # type: ignore[operator]
        (tmp_path / "skills").mkdir()
        server.script(reply(calls=[call("mcp__prot__whoami", {})]), reply("went on"))
        done = skillchat(
            "ask", *session_options(server, tmp_path / "skills"),
            "--config", str(config), "--allow-mcp", "who am I",
        )  # fmt: skip
        result = tool_messages(server)[-1]["content"]
        assert said in result and "run `skillchat mcp login prot`" in result, result
        assert "error: MCP_ERROR" in done.stderr, done.stderr  # its card says it failed
        assert "went on" in done.stdout and "Traceback" not in done.stderr
        assert before not in done.stdout + done.stderr
        assert not [e for e in events(tmp_path / "as") if e == "mcp tools/call"]
