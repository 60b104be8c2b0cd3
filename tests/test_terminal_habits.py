"""The terminal habits people bring from other chat tools, each in a real
pseudo-terminal against the scripted server: `/context`, `/copy`, the external
editor, stored keys, `/model` completion, the status line, notifications."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import session_options, skill_folder
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(
        root, "notes", "name: notes\ndescription: Keeps notes.\n", "# Notes\n" + "n" * 3000
    )
    return root


@pytest.fixture
def repl(
    server: ScriptedServer, skills: Path, pty_sessions: Callable[..., PtySession]
) -> Callable[..., PtySession]:
    def start(*args: str, env: dict[str, str] | None = None) -> PtySession:
        session = pty_sessions(*session_options(server, skills), *args, env=env)
        session.prompt()
        return session

    return start


def _row(shown: str, name: str) -> int:
    """The token count on the `/context` row named `name`."""
    match = re.search(rf"^{re.escape(name)}\s+([\d,]+)", shown, re.MULTILINE)
    assert match, f"no row {name!r} in:\n{shown}"
    return int(match.group(1).replace(",", ""))


def test_context_shows_each_part_and_what_compact_would_free(server, repl, tmp_path) -> None:
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "notes"})]),
        reply("noted " + "x" * 600),
        reply("second " + "y" * 600),
        reply("third"),
        reply("fourth"),
    )
    (tmp_path / "config.toml").write_text("context_window = 100000\n")
    session = repl("--config", str(tmp_path / "config.toml"))
    fresh = session.run("/context")
    assert _row(fresh, "skills catalog") > 0 and _row(fresh, "tool definitions") > 0
    assert _row(fresh, "history") == 0
    assert "/compact would free nothing" in fresh
    for text in ("take a note", "more", "and more", "last"):
        session.run(text)
    shown = session.run("/context")
    skill = _row(shown, "skill notes")
    assert skill >= 1000  # the 3,000-character body, as get_skill returned it
    assert _row(shown, "history") > 400
    total = int(
        re.search(r"~([\d,]+) tokens of the model's 100,000-token window", shown)
        .group(1)
        .replace(",", "")
    )  # type: ignore[union-attr]
    parts = [
        _row(shown, n)
        for n in (
            "system prompt",
            "skills catalog",
            "tool definitions",
            "skill notes",
            "attachments",
            "history",
            "tool results",
        )
    ]
    assert total == sum(parts)
    frees = re.search(r"/compact would free up to ~([\d,]+) tokens", shown)
    assert frees and int(frees.group(1).replace(",", "")) >= skill  # the older turns hold it
    assert session.quit() == 0
