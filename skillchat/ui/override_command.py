"""The REPL's `/skills pin|name-only|manual|off|reset NAME [--project]`: the same
lasting change as `skillchat skills ACTION NAME` (skillchat/skills/overrides.py),
taking effect from the next message. `/skills` (ui/commands.py) hands it the words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.errors import UsageError
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl

OVERRIDES = ("pin", "name-only", "manual", "off", "reset")
OVERRIDE_USAGE = f"{'|'.join(OVERRIDES)} NAME [--project]"


def override(repl: Repl, action: str, words: list[str]) -> None:
    """Write the user's file (or with `--project` the project's), read the skills
    again so the catalog, the tools and completion see it, and say what it is now."""
    from skillchat.session_settings import load_overrides
    from skillchat.skills.overrides import change

    project = "--project" in words
    names = [w for w in words if w != "--project"]
    if len(names) != 1:
        raise UsageError(f"usage: /skills {OVERRIDE_USAGE}")
    session = repl.session
    said = change(
        load_overrides(session.settings), session.registry, names[0], action, project=project
    )
    session.reload_skills()
    repl.warn_skills()
    repl.consoles.out.print(safe.line((safe.one_line(said), "strong")))
