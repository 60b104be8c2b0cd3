"""Live reload: whether the skill folders changed since the registry was built, and
what changed, so an edited, added or removed skill counts from the next turn on
without `/reload` (as Claude Code, Codex and Gemini CLI pick edits up).

The check runs at the start of every turn, so it must cost next to nothing when
nothing changed: `folder_stamps` (skills/stamps.py) lists each skills directory once
and stats each skill's SKILL.md, reading no file. Only when the stamps differ is the
registry built again (`discover`), and `compare` says what that changed for the user
and the model (this module is imported only then).

A skill whose SKILL.md breaks (a half-saved edit, a YAML slip) keeps its last good
version (`compare` puts the old `Skill` back) instead of vanishing from a chat that
is using it; the line says so, and a fix or `/reload` ends it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.skills.model import Skill

if TYPE_CHECKING:
    from skillchat.skills.registry import Registry
    from skillchat.skills.stamps import Stamp


@dataclass(frozen=True, eq=False)
class Changes:
    """What a rebuilt registry changed, and the registry to go on with."""

    registry: Registry
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()
    broken: tuple[tuple[str, str], ...] = ()  # (name, why): kept at the last good version

    def line(self) -> str | None:
        """One line for the user, None when no skill changed."""
        parts = [
            f"{label}: {', '.join(names)}"
            for label, names in (
                ("edited", self.edited),
                ("new", self.added),
                ("gone", self.removed),
            )
            if names
        ]
        parts += [
            f"{name} is now invalid ({why}): its last good version stays"
            for name, why in self.broken
        ]
        return "skills changed: " + "; ".join(parts) if parts else None


def _listed(skill_source: Path, name: str) -> str:
    """The path `folder_stamps` knows a skill's folder by (its directory's listing)."""
    return os.path.join(skill_source, name)


def compare(old: Registry, new: Registry) -> Changes:
    """What `new` (built again after the stamps changed) changes from `old`.

    A skill of `old` whose folder `new` found but judged invalid stays as it was in
    `old` (and leaves `new`'s left-out list), reported as broken when its SKILL.md
    is what changed (not again at each later change of another skill)."""
    skills = dict(new.skills)
    excluded = list(new.excluded)
    kept: set[str] = set()
    broken: list[tuple[str, str]] = []
    for name, skill in old.skills.items():
        if name in skills:
            continue
        folder = Path(_listed(skill.source_dir, name))
        for item in excluded:
            if item.reason == "invalid" and item.path == folder:
                skills[name] = skill
                excluded.remove(item)
                kept.add(name)
                if _md_stamp(old, skill) != _md_stamp(new, skill):  # said once per edit
                    broken.append((name, item.summary()))
                break
    registry = replace(new, skills={n: skills[n] for n in sorted(skills)}, excluded=tuple(excluded))
    edited = tuple(
        name
        for name, skill in registry.skills.items()
        if name in old.skills
        and name not in kept
        and _md_stamp(old, skill) != _md_stamp(new, skill)
    )
    return Changes(
        registry,
        added=tuple(n for n in registry.skills if n not in old.skills),
        removed=tuple(n for n in old.skills if n not in registry.skills),
        edited=edited,
        broken=tuple(broken),
    )


def _md_stamp(registry: Registry, skill: Skill) -> Stamp | None:
    """The stamp `registry` was built with of `skill`'s SKILL.md."""
    folder = _listed(skill.source_dir, skill.name)
    return (registry.stamps or {}).get(f"{folder}/{skill.skill_md.name}")
