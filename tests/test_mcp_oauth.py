"""An HTTP MCP server that asks for an OAuth login, through the real `skillchat`:
tests/oauth_mcp_server.py (a resource server and its own authorization server on
127.0.0.1). `mcp login` prints the URL, takes the redirect on its loopback listener
and keeps the token in a 0600 file; a chat uses it, refreshes it quietly once it
expired; `mcp logout` forgets it; a chat without one says in one line to log in.
No token is ever seen anywhere but in that file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from chat_helpers import tool_messages
from helpers import closed_port, listening, session_options, skillchat, wait_for
from oauth_helpers import logging_in
from openai_server import ScriptedServer, call, reply

if TYPE_CHECKING:
    from pty_session import PtySession

PROTECTED = Path(__file__).resolve().parent / "oauth_mcp_server.py"
EXPIRES_S = 2  # as oauth_mcp_server.py issues them


@pytest.fixture(autouse=True)
def no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """No browser is ever opened by a test: the "browser" is oauth_helpers.py."""
    for name in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)


@contextmanager
def protected(folder: Path, mode: str = "") -> Iterator[str]:
    """oauth_mcp_server.py in `mode` (its events in `folder`): the `[mcp.prot]` table."""
    folder.mkdir(exist_ok=True)
    port, auth = closed_port(), closed_port()
    argv = [sys.executable, str(PROTECTED), str(folder), str(port), str(auth), mode]
    with listening(*argv, port=port):
        yield f'[mcp.prot]\nurl = "http://127.0.0.1:{port}/mcp"\nallow = true\n'


def token_file() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "skillchat" / "mcp-auth" / "prot.json"


def login(config: Path, open_url: Callable[[str], None] | None = None) -> tuple[int, str, str]:
    """`skillchat mcp login prot`, its URL opened as a browser would (`open_url`):
    exit code, the URL it printed, its stderr."""
    user = subprocess.Popen(
        [sys.executable, "-m", "skillchat", "mcp", "login", "prot", "--config", str(config)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = logging_in(user, open_url) if open_url else logging_in(user)
    _, err = user.communicate(timeout=180)
    return user.returncode, url, err.decode()


def events(folder: Path) -> list[str]:
    path = folder / "events.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_login_a_chat_in_the_repl_a_quiet_refresh_logout_and_no_token_seen(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """A REPL open before the login: the call says to log in, the chat goes on; after
    `mcp login` (another terminal) the next call works, then refreshes quietly."""
    events_at = tmp_path / "as"
    with protected(events_at) as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        (tmp_path / "skills").mkdir()
        whoami = call("mcp__prot__whoami", {})
        server.script(
            reply("first"), reply(calls=[whoami]), reply("second"),
            reply(calls=[whoami]), reply("third"),
        )  # fmt: skip
        repl = pty_sessions(
            *session_options(server, tmp_path / "skills"), "--config", str(config), timeout=120
        )
        repl.prompt()
        repl.line("who am I")
        screen = repl.prompt()
        assert "first" in screen
        needs = "MCP server 'prot' is not available: needs a login: run `skillchat mcp login prot`"
        assert needs in " ".join(screen.split())  # its tool is not offered
        assert "mcp__prot__whoami" not in str(server.completions[0].body.get("tools"))

        code, url, said = login(config)
        assert code == 0, said
        assert "code_challenge_method=S256" in url and "resource=" in url
        assert "logged in to 'prot' (1 tools)" in said
        assert stat.S_IMODE(token_file().stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file().parent.stat().st_mode) == 0o700
        flow = [e for e in events(events_at) if not e.startswith(("refused", "mcp"))]
        assert flow == ["register", "authorize", "token authorization_code"]
        logged_in_at = time.time()

        repl.line("again")  # the server is connected again, logged in: its tool offered
        screen += repl.prompt()
        assert "second" in screen
        assert "you are logged in" in tool_messages(server)[-1]["content"]
        # The access token expires: the next call refreshes it first, without a word.
        assert wait_for(lambda: time.time() > logged_in_at + EXPIRES_S + 0.5, 10)
        repl.line("once more")
        third = repl.prompt()
        screen += third
        assert "third" in third and "login" not in third
        assert "you are logged in" in tool_messages(server)[-1]["content"]
        assert "token refresh_token" in events(events_at)
        assert repl.quit() == 0

        chats = skillchat("chats", "list", "--json", "--config", str(config))
        chat = json.loads(chats.stdout)
        chat_id = (chat["chats"] if isinstance(chat, dict) else chat)[0]["id"]
        export = skillchat("chats", "export", chat_id, "--config", str(config))
        as_json = skillchat("chats", "export", chat_id, "-f", "json", "--config", str(config))
        listed = skillchat("mcp", "list", "--json", "--config", str(config))
        assert export.returncode == as_json.returncode == listed.returncode == 0
        assert "you are logged in" in export.stdout and "you are logged in" in as_json.stdout
        shown = chats.stdout + export.stdout + as_json.stdout + listed.stdout + screen
        tokens = (events_at / "tokens.txt").read_text().split()
        assert len(tokens) >= 4  # two access tokens, two refresh tokens
        files = [p for p in Path(os.environ["HOME"]).rglob("*") if p.is_file()]
        assert any(b"you are logged in" in p.read_bytes() for p in files)  # the chat, kept
        for token in tokens:
            assert token not in shown
            for path in files:
                if path != token_file():
                    assert token.encode() not in path.read_bytes(), path

        done = skillchat("mcp", "logout", "prot", "--config", str(config))
        assert done.returncode == 0 and "logged out of 'prot'" in done.stderr
        assert not token_file().exists()


def test_a_chat_without_a_login_says_so_in_one_line_and_goes_on(
    server: ScriptedServer, tmp_path: Path
) -> None:
    events_at = tmp_path / "as"
    with protected(events_at) as table:
        (tmp_path / "config.toml").write_text(table)
        (tmp_path / "skills").mkdir()
        server.script(reply(calls=[call("mcp__prot__whoami", {})]), reply("went on"))
        done = skillchat(
            "ask", *session_options(server, tmp_path / "skills"),
            "--config", str(tmp_path / "config.toml"), "--allow-mcp", "who am I",
        )  # fmt: skip
        line = "MCP server 'prot' is not available: needs a login: run `skillchat mcp login prot`"
        assert line in done.stderr, done.stderr
        assert "went on" in done.stdout, done.stderr
        assert "Traceback" not in done.stderr
        # Nothing asked of the authorization server, nothing kept.
        assert not [e for e in events(events_at) if not e.startswith("refused")]
        assert not token_file().exists()


def test_a_token_refused_before_its_expiry_is_refreshed_once_quietly(tmp_path: Path) -> None:
    """The server stops taking a token the client still thinks good (revoked, or its
    clock ahead): its 401 gets one refresh, and the request goes through."""
    events_at = tmp_path / "as"
    with protected(events_at) as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        assert login(config)[0] == 0
        kept = json.loads(token_file().read_text())
        kept["expires_at"] = time.time() + 3600  # the client's view: good for an hour
        token_file().write_text(json.dumps(kept))
        logged_in_at = time.time()
        assert wait_for(lambda: time.time() > logged_in_at + EXPIRES_S + 0.5, 10)
        done = skillchat("mcp", "tools", "prot", "--config", str(config))
        assert done.returncode == 0 and "mcp__prot__whoami" in done.stdout, done.stderr
        assert events(events_at).count("token refresh_token") == 1
        assert "login" not in done.stderr


def test_a_step_up_in_the_repl_is_one_line_then_a_login_elsewhere_grants_it(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """A call the server refuses for want of scope (403 `insufficient_scope`) says so
    in one line; the next `mcp login` asks for that scope with the one granted, and
    the REPL's next call connects again with the new token."""
    events_at = tmp_path / "as"
    with protected(events_at, "step-up") as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        first, url, said = login(config)
        assert first == 0 and url.endswith("scope=mcp"), said
        (tmp_path / "skills").mkdir()
        whoami = call("mcp__prot__whoami", {})
        server.script(reply(calls=[whoami]), reply("refused"), reply(calls=[whoami]), reply("ok"))
        repl = pty_sessions(
            *session_options(server, tmp_path / "skills"), "--config", str(config), timeout=120
        )
        repl.prompt()
        repl.line("who am I")
        assert "refused" in repl.prompt()
        more = (
            "MCP server 'prot' needs more access (scope mcp write): run `skillchat mcp login prot`"
        )
        assert more in tool_messages(server)[-1]["content"]

        second, url, said = login(config)
        assert second == 0 and url.endswith("scope=mcp+write"), said
        repl.line("again")
        assert "ok" in repl.prompt()
        assert "you are logged in" in tool_messages(server)[-1]["content"]
        assert repl.quit() == 0


def test_login_opens_the_users_browser_when_there_is_one(tmp_path: Path) -> None:
    """With `$BROWSER` set, `mcp login` opens the URL there (and still prints it):
    the "browser" is a script that does what oauth_helpers.browse does."""
    browser = tmp_path / "browser.py"
    browser.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from oauth_helpers import browse\nbrowse(sys.argv[1])\n"
    )
    with protected(tmp_path / "as") as table:
        config = tmp_path / "config.toml"
        config.write_text(table)
        done = subprocess.run(
            [sys.executable, "-m", "skillchat", "mcp", "login", "prot", "--config", str(config)],
            env={**os.environ, "BROWSER": f"{sys.executable} {browser} %s"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "code_challenge_method=S256" in done.stdout  # printed as well
        assert "logged in to 'prot' (1 tools)" in done.stderr
        assert "token authorization_code" in events(tmp_path / "as")
        assert token_file().is_file()
