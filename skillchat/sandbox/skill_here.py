"""A skill's command runs as its SKILL.md writes it: `python scripts/x.py`,
`python -m scripts.x`, `bash scripts/init.sh NAME`, `./find-polluter.sh`,
`node skills/NAME/scripts/x.mjs` are relative to the skill's folder (or to the
folder holding it), while commands start in the writable /scratch, where the
script's outputs belong.

So when there is no workspace, a command naming its skill sees that skill's
top-level entries in /scratch, read-only, next to what the chat wrote there
(`/scratch/scripts` is `/skills/NAME/scripts`), and `/scratch/skills/NAME` too.
Only names /scratch does not have already (or has as an empty placeholder): what
the chat wrote always wins. Outputs written to the working folder land in the
scratch folder as before.

With a workspace, commands start in /workspace, the user's project: nothing is
added there (a relative `scripts/x.py` is the project's file, as in Claude Code,
and as `allowed-tools` judge it); the model is told the skill's folder,
/skills/NAME. Module spellings (`python -m scripts.x`, `from core.x import y`) work
there too: the skill's folder is on PYTHONPATH and NODE_PATH (command_tool.py).

A bind needs a mount point in the real scratch folder: each is made empty before the
run and removed after it if still empty (skillchat/sandbox/protect.py does the
same for the workspace's protected entries), so the chat's files never show them.
"""

from __future__ import annotations

import os
from pathlib import Path

from skillchat.mounts import SCRATCH_MOUNT
from skillchat.sandbox.protect import remove_mount_points

MAX_ENTRIES = 32  # each bind costs bubblewrap about a millisecond
SKILLS_ENTRY = "skills"


def skill_entries(
    skill: str, root: Path, scratch: Path
) -> tuple[tuple[tuple[Path, str, bool], ...], list[Path]]:
    """The read-only binds that show `skill`'s top-level entries in /scratch, and
    the mount points made for them in `scratch` (to pass to `remove_mount_points`
    after the run, deepest first)."""
    binds: list[tuple[Path, str, bool]] = []
    made: list[Path] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return (), []
    shown = (_shown(root, e) for e in entries if not e.name.startswith("."))
    wanted = [w for w in shown if w is not None][:MAX_ENTRIES]
    wanted.append((SKILLS_ENTRY, root, "skills"))
    scratch.mkdir(parents=True, exist_ok=True, mode=0o700)
    used: set[str] = set()
    try:
        for name, host, kind in wanted:
            point = scratch / name
            if name in used or not _free(point, "dir" if kind == "skills" else kind):
                continue
            used.add(name)
            if kind == "skills":  # /scratch/skills/NAME: the skill, by its own name
                made += _made(point, "dir") + _made(point / skill, "dir")
                binds.append((host, f"{SCRATCH_MOUNT}/{SKILLS_ENTRY}/{skill}", False))
                continue
            made += _made(point, kind)
            binds.append((host, f"{SCRATCH_MOUNT}/{name}", False))
    except OSError:
        remove_mount_points(list(reversed(made)))
        return (), []
    return tuple(binds), list(reversed(made))


def _shown(root: Path, entry: os.DirEntry[str]) -> tuple[str, Path, str] | None:
    """What a top-level entry shows in /scratch: its name, the real path to bind and
    "dir" or "file"; None when that path is outside the skill's folder (`root`, a
    real path). bubblewrap follows a link it binds on the host, so an untrusted
    skill's `notes -> ~/.ssh` (only trust checks links) would show the user's folder
    in the sandbox; under /skills/NAME the same link leads nowhere."""
    real = Path(os.path.realpath(entry.path))
    if not real.is_relative_to(root):
        return None
    if real.is_dir():
        return entry.name, real, "dir"
    if real.is_file():
        return entry.name, real, "file"
    return None


def _free(point: Path, kind: str | None) -> bool:
    """Whether a mount point of `kind` may go at `point`: nothing there, or an
    empty placeholder of that kind (one a stopped run left)."""
    if point.is_symlink():
        return False
    if not point.exists():
        return True
    if kind == "dir":
        return point.is_dir() and not any(point.iterdir())
    return point.is_file() and point.stat().st_size == 0


def _made(point: Path, kind: str) -> list[Path]:
    """Make the mount point when missing; [it] when made here, else []."""
    if point.exists():
        return []
    if kind == "file":
        os.close(os.open(point, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    else:
        point.mkdir()
    return [point]
