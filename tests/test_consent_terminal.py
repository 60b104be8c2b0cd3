"""The consent question in a real terminal, where what the user sees decides what
runs: every character of the command is on the card (invisible ones as markers).

The screen is read back with pyte, which draws what a terminal would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest
from chat_helpers import tool_messages
from helpers import session_options
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Run it? [y]es / [n]o / [a]lways for this skill:"


@pytest.fixture
def repl(server: ScriptedServer, pty_sessions: Callable[..., PtySession]) -> PtySession:
    require_sandbox()
    session = pty_sessions(*session_options(server, REPO / "skillchat" / "bundled_skills"))
    session.prompt()
    return session


def run_call(command: str, skill: str = "calculator") -> dict[str, object]:
    return call("run_command", {"command": command, "skill_name": skill})


def results(server: ScriptedServer) -> list[dict[str, object]]:
    return [json.loads(m["content"]) for m in tool_messages(server)]


def screen(session: PtySession) -> str:
    """The 40x120 terminal as pyte draws everything the session printed."""
    display = pyte.Screen(120, 40)
    pyte.Stream(display).feed("".join(session.output))
    return "\n".join(line.rstrip() for line in display.display)


def test_invisible_characters_are_shown_on_the_card(
    server: ScriptedServer, repl: PtySession
) -> None:
    hidden = "echo safe\u200b\u200d\ufeff\u2060\u200e\u200f\u061c\u202e\U000e0041\u00a0end"
    server.script(reply("", calls=[run_call(hidden)]), reply("declined"))
    repl.line("go")
    repl.expect(QUESTION)
    markers = "<U+200B><U+200D><U+FEFF><U+2060><U+200E><U+200F><U+061C><U+202E><U+E0041>"
    assert f"$ echo safe{markers}<U+00A0>end" in screen(repl)
    repl.line("n")
    repl.prompt()
    assert results(server)[0]["error_code"] == "NOT_ALLOWED"
    card = screen(repl).split("run_command", 2)[-1]  # the tool card after the answer
    assert f"safe{markers}" in card
