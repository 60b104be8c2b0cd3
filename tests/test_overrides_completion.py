"""An `off` skill is not offered by the REPL's `/name` completion (docs/skills.md,
per-skill overrides), in a real terminal: the menu for a prefix three skills share
shows the two that are on, and on that same screen not the one turned off; after
`/skills reset` it is offered again. The screen that shows the others is the one
checked, so the absence is not a menu still being drawn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer
from pty_session import PtySession

SKILLS = {"tool-one": "Counts the widgets.", "tool-two": "Paints the fences.",
          "tool-three": "Sorts the marbles."}  # fmt: skip


def menu(session: PtySession, *shown: str) -> str:
    """Type `/tool-`, and the screen once its completion menu shows `shown`."""
    session.send("/tool-")
    lines = session.until_screen(lambda lines: all(any(s in ln for ln in lines) for s in shown))
    session.send("\x15")  # Ctrl-U: the line cleared, nothing sent
    return "\n".join(lines)


def test_an_off_skill_is_not_offered_by_name_completion(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    skills = tmp_path / "skills"
    for name, description in SKILLS.items():
        skill_folder(skills, name, f"name: {name}\ndescription: {description}\n")
    done = skillchat("skills", "off", "tool-two", "--skills-dir", str(skills))
    assert done.returncode == 0, done.stderr
    session = pty_sessions(*session_options(server, skills))
    session.prompt()
    screen = menu(session, "Counts the widgets.", "Sorts the marbles.")
    assert "Paints the fences." not in screen and "tool-two" not in screen
    assert "'tool-two'" in session.run("/skills reset tool-two")
    menu(session, "Counts the widgets.", "Paints the fences.", "Sorts the marbles.")
    assert session.quit() == 0
