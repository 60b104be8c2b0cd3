"""What the terminal-habit tests share: a REPL in a pty on the scripted server,
and small real programs standing in for an editor or a clipboard tool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from helpers import session_options
from openai_server import ScriptedServer
from pty_session import PtySession

Start = Callable[..., PtySession]


def repl_starter(server: ScriptedServer, skills: Path, pty_sessions: Start) -> Start:
    """Starts `skillchat ARGS` (with `env`) in a pty and waits for its first prompt."""

    def start(*args: str, env: dict[str, str] | None = None) -> PtySession:
        session = pty_sessions(*session_options(server, skills), *args, env=env)
        session.prompt()
        return session

    return start


def shell_script(folder: Path, name: str, body: str) -> str:
    """An executable `#!/bin/sh` script `folder/name` running `body`; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)
