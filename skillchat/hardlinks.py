"""When a file with more than one hard link may be read: the one place that decides.

The rule itself is applied where a file is opened: by every read of a skill's file
(safe_io/read.py, the `hard_links` of a skill folder's `Container`: skills/files.py)
and by discovery's read of SKILL.md (skills/frontmatter.py, from skills/validation.py).

Why hard links are refused at all: every name of a hard-linked file is equally real,
and nothing can say where the other names are. A second name for `~/.ssh/id_rsa` or a
workspace's `.env`, made inside a skill folder or the workspace (by a script that runs
as the user, say), passes every path check: the walk opens a regular file inside the
folder, not hidden, not a symlink. Its text would then go to the model's provider. So
a file whose link count is above one is not served.

The exception is the skills bundled with skillchat (`skillchat/bundled_skills`, by
real path). uv (`uv tool install`, `uv pip install`, pipx on its uv backend) installs
every file of a package as a hard link into its cache, so there every bundled file has
two links; refusing them leaves out every bundled skill. The folder is part of
skillchat's own installation, beside its code: whoever can add a name to it can
already change what skillchat does, so the link count there guards nothing. Every
other folder (the user's and projects' skills, the workspace) keeps the rule.
"""

from __future__ import annotations

import functools
import os

from skillchat.sections import BUNDLED_SKILLS


@functools.cache
def _bundled_real() -> str:
    return os.path.realpath(BUNDLED_SKILLS)


def hard_links_allowed(root: str | os.PathLike[str]) -> bool:
    """Whether files below the folder `root`, a real path (as discovery records a
    skill's), may have more than one hard link: only when it is skillchat's bundled
    skills folder or below it. Compared as text: the reads walk `root` itself with no
    symlink followed (safe_io/walk.py), so a swapped folder fails there, not here."""
    real = os.fspath(root)
    bundled = _bundled_real()
    return real == bundled or real.startswith(bundled.rstrip(os.sep) + os.sep)
