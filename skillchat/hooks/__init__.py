"""Hooks: commands the user (or a project, or a skill) attaches to moments of a chat.

spec.py finds and reads them (the user's config, the project's
`.skillchat/config.toml`, a skill's `hooks:` frontmatter); trust.py is which of the
ones needing trust the user trusted, bound to their content; run.py runs one on the
host within its bounds and reads its answer; dispatch.py is a session's hooks: which
run for an event, trusted or asked about, and what they decided together. The
engine's step (engine/steps/hooks.py) calls them at the chat's moments; a skill's
hooks run in the sandbox (sandbox/hooks.py), handed in by the session. docs/hooks.md
is the user's side.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillchat.skills.model import Skill

# A project's hooks: the `[hooks]` of this file, in the folder a session starts in.
PROJECT_CONFIG = Path(".skillchat") / "config.toml"


def user_plugins() -> Path:
    """Where the user's plugins are installed (beside `~/.agents/skills`, their lock's
    folder): the only place plugins install, so the only place their hooks are."""
    return Path.home() / ".agents" / "plugins"


def may_have_hooks(configured: object, cwd: Path, skills: Iterable[Skill]) -> bool:
    """Whether any source could hold a hook, from what costs nothing to look at: the
    config's `[hooks]`, the project's config file, a skill's `hooks:` key, the plugins
    folder. False: there are none, and a session imports none of the hooks' machinery
    before its first request (about 13 ms of a start)."""
    return (
        bool(configured)
        or (cwd / PROJECT_CONFIG).is_file()
        or any("hooks" in skill.frontmatter for skill in skills)
        or user_plugins().is_dir()
    )
