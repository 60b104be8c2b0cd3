"""Where the per-skill overrides files are (skills/overrides.py reads and writes
them), and whether either could be there: a look at the disk that imports nothing,
so that a start with no overrides file (most starts) does not load the overrides'
reading, merging and writing (about 14 M instructions of `ask`'s start, its frozen
classes' generated methods most of it).
"""

from __future__ import annotations

import os
from pathlib import Path

FILE_NAME = "overrides.toml"
PROJECT_FOLDER = ".skillchat"


def user_file() -> Path:
    from skillchat.sections import user_config_dir

    return user_config_dir() / FILE_NAME


def project_file(project: Path) -> Path:
    return project / PROJECT_FOLDER / FILE_NAME


def _may_be(path: Path) -> bool:
    """False only when `path` is certainly absent: any other answer (a link, a
    folder that cannot be searched, a file where a folder should be) is for the
    reader to say."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    return True


def any_file(project: Path | None) -> bool:
    """Whether the user's file or the project's could hold overrides (or a problem
    to report): the user's file, or the project's `.skillchat` entry of any kind
    (a link in its place is refused, and said, by the reader)."""
    return _may_be(user_file()) or (project is not None and _may_be(project / PROJECT_FOLDER))
