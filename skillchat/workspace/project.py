"""The project the user started in: the default workspace when no folder is named.

    top = project_folder(Path.cwd(), settings.projects)   # None: not a project

A project is a git work tree (its top: the nearest folder up from the cwd holding
`.git`, a folder or a worktree's file; a cheap walk, no `git` subprocess) or a
folder named in the config's `projects` list that holds the cwd. `--workspace DIR`
or `workspace` in the config name the workspace instead; `--no-workspace` turns it
off (cli/session_options.py). `workspace_from_settings` opens the one chosen; the
workspace's module (files.py) is imported only then, not at a start without one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.errors import ConfigError, UsageError, WorkspaceError

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.workspace.files import Workspace

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


def workspace_from_settings(settings: Settings, named_by: str = "file") -> Workspace | None:
    """The settings' workspace, or None when it is off.

    A bad one stops the command before any request: named by `--workspace`
    (`named_by` "flag") or a resumed chat's ("chat"), it is a usage error (exit 2);
    named in the config file, a config error (exit 1).
    """
    path = settings.resolved_workspace()
    if path is None:
        return None
    from skillchat.workspace.files import Workspace  # only with one: its dataclass costs

    try:
        return Workspace.open(path)
    except WorkspaceError as exc:
        if named_by == "flag":
            raise UsageError(f"--workspace: {exc}") from None
        if named_by == "chat":  # a resumed chat's own (-c)
            raise UsageError(
                f"this chat's workspace: {exc}; -w DIR or --no-workspace to go on without it"
            ) from None
        where = settings.config_path or "config"
        raise ConfigError(f"{where}: {exc}") from None
