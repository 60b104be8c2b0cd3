"""The project the user started in: the default workspace when no folder is named.

    top = project_folder(Path.cwd(), settings.projects)   # None: not a project

A project is a git work tree (its top: the nearest folder up from the cwd holding
`.git`, a folder or a worktree's file; a cheap walk, no `git` subprocess) or a
folder named in the config's `projects` list that holds the cwd. `--workspace DIR`
or `workspace` in the config name the workspace instead; `--no-workspace` turns it
off (cli/session_options.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

# Where a workspace nobody named came from (the command line's sources["workspace"]).
PROJECT_SOURCES = ("git work tree", "projects in the config")


def git_top(start: Path) -> Path | None:
    """The top of the git work tree holding `start`, or None outside one."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def project_folder(start: Path, named: Sequence[str] = ()) -> tuple[Path, str] | None:
    """The project holding `start` and what made it one ("git work tree" or
    "projects in the config"), or None. A named folder wins: the user chose it."""
    here = Path(os.path.abspath(start))
    for entry in named:
        folder = Path(os.path.abspath(Path(entry).expanduser()))
        if here == folder or folder in here.parents:
            return folder, "projects in the config"
    if (top := git_top(here)) is not None:
        return top, "git work tree"
    return None
