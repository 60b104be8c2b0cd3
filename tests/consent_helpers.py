"""What the consent tests share: the question the REPL asks before a command runs, a
REPL with the bundled skills started in a real terminal, a scripted `run_command`
call, and the results of the calls the model got back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from chat_helpers import tool_messages
from helpers import session_options
from openai_server import ScriptedServer, call
from pty_session import PtySession
from sandbox_helpers import require_sandbox

BUNDLED = Path(__file__).resolve().parents[1] / "skillchat" / "bundled_skills"
QUESTION = "Run it? [y]es / [n]o / [a]lways:"


def bundled_repl(server: ScriptedServer, pty_sessions: Callable[..., PtySession]) -> PtySession:
    """The REPL over the bundled skills, at its first prompt (a sandbox required)."""
    require_sandbox()
    session = pty_sessions(*session_options(server, BUNDLED))
    session.prompt()
    return session


def run_call(command: str, skill: str = "calculator") -> dict[str, object]:
    return call("run_command", {"command": command, "skill_name": skill})


def results(server: ScriptedServer) -> list[dict[str, object]]:
    return [json.loads(m["content"]) for m in tool_messages(server)]
