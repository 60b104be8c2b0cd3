"""Live reload's check (skills/changes.py says what follows it): the stamps of the
skill folders' SKILL.md files, taken when the registry is built and again at the
start of every turn, so it must cost next to nothing when nothing changed: one
listing of each skills directory and one stat of each skill's SKILL.md (mtime,
size, inode), reading no file. Saving SKILL.md changes its stamp (in place or by an
editor's write-and-rename); adding or removing a skill changes the listing.

Apart from skills/changes.py, which is imported only when the stamps differ: its
dataclass costs every start (its methods compiled at import).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from skillchat.skills.frontmatter import SKILL_MD_NAMES

Stamp = tuple[int, int, int]  # st_mtime_ns, st_size, st_ino


def folder_stamps(directories: Sequence[Path]) -> dict[str, Stamp]:
    """The stamp of the SKILL.md (else skill.md) of every skill folder in
    `directories`, by path: one listing per directory and one stat per skill.

    A folder's own stamp is left out on purpose: a script or asset added to it is
    no change of the skill, and a SKILL.md appearing or going is seen by its stat.
    The hidden children discovery skips are skipped here too; a directory that is
    missing or cannot be listed has no entries (its appearing is a change)."""
    stamps: dict[str, Stamp] = {}
    for directory in directories:
        try:
            with os.scandir(directory) as it:
                children = [e.path for e in it if not e.name.startswith(".") and _is_dir(e)]
        except (OSError, ValueError):
            continue
        for folder in children:
            for name in SKILL_MD_NAMES:
                try:
                    md = os.stat(f"{folder}/{name}")
                except OSError:
                    continue
                stamps[f"{folder}/{name}"] = (md.st_mtime_ns, md.st_size, md.st_ino)
                break
    return stamps


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """A folder, or a link to one (as discovery follows them)."""
    try:
        return entry.is_dir()
    except OSError:
        return False
