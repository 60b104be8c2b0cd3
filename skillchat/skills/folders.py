"""The candidate skill folders of a skills directory: its non-hidden child folders.

Discovery (skills/registry.py) and `skills validate` (skills/validate_paths.py)
list a directory the same way, so a folder `validate` checks is one discovery
would load; the listing lives here, apart from both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class SkillDir:
    """A candidate skill folder: its name, its path as listed, and its real path."""

    name: str
    path: str
    real: str


def list_skill_dirs(directory: str) -> list[SkillDir]:
    """The non-hidden child folders of a skills directory, sorted by name.

    Symlinked children are followed (broken links and links to files are skipped).
    Whether a child holds a SKILL.md is left to `inspect_skill`, which must open it
    anyway. Raises OSError (or ValueError for a NUL in the path) when `directory`
    cannot be listed.
    """
    with os.scandir(directory) as it:
        entries = sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    real_base = os.path.realpath(directory)
    found: list[SkillDir] = []
    for entry in entries:
        try:
            if not entry.is_dir():
                continue
            link = entry.is_symlink()
        except OSError:
            continue
        real = os.path.realpath(entry.path) if link else os.path.join(real_base, entry.name)
        found.append(SkillDir(entry.name, entry.path, real))
    return found
