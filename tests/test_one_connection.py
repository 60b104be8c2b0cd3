"""One TCP connection for a whole chat: every request and tool round of a chat, in
`ask` and in the REPL, goes on the connection its first request opened
(engine/backends/wire.py keeps it alive), as the scripted server counts the
connections it accepts. The window is stated in the config, so the start-up
`/props` probe of a local server (a short connection of its own, which fits the
first request to the server's window) is not in the count."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from helpers import BOTH_PROTOCOLS, session_options, skillchat
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession

# Both native protocols keep the connection (tests/conftest.py).
pytestmark = BOTH_PROTOCOLS

SKILLS = Path(__file__).resolve().parents[1] / "skillchat" / "bundled_skills"
LOAD = call("get_skill", {"skill_name": "calculator"})
READ = call("read_file_in_skill", {"skill_name": "calculator", "file_path": "SKILL.md"})


def stated_window(tmp_path: Path) -> list[str]:
    config = tmp_path / "config.toml"
    config.write_text("context_window = 32768\n")
    return ["--config", str(config)]


def test_ask_keeps_one_connection_through_its_tool_rounds(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script(reply(calls=[LOAD]), reply(calls=[READ]), reply(calls=[READ]), reply("39.1"))
    done = skillchat(
        "ask", *session_options(server, SKILLS), *stated_window(tmp_path), "17% of 230?"
    )
    assert done.returncode == 0 and done.stdout.strip() == "39.1", done.stderr
    assert len(server.completions) == 4
    assert server.connections == 1


def test_the_repl_keeps_one_connection_through_turns_and_tool_rounds(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply(calls=[LOAD]), reply(calls=[READ]), reply("39.1"))
    server.script(reply(calls=[READ]), reply("and 10% is 23"))
    session = pty_sessions(*session_options(server, SKILLS), *stated_window(tmp_path))
    session.prompt()
    assert "39.1" in session.run("what is 17% of 230?")
    assert "and 10% is 23" in session.run("and 10%?")
    assert session.quit() == 0
    assert len(server.completions) == 5
    assert server.connections == 1
