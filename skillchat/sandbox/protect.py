"""The workspace entries a command may not touch even with workspace writes
(`layout.PROTECTED`): bubblewrap binds each read-only over the writable workspace.

A bind needs something to mount over, and a missing `.git` or `.envrc` must not be
creatable either, so a missing entry is made empty for the run (on the host: a mount
point lives in the real folder) and removed after it. A symlinked entry cannot be
covered (a mount follows the link, and the link itself could be replaced), so a
workspace holding one refuses to start rather than run unprotected.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from skillchat.errors import SandboxFailure
from skillchat.sandbox.layout import PROTECTED, PROTECTED_FILES


def make_mount_points(workspace: Path) -> list[Path]:
    """Make each missing protected entry of `workspace` (an empty folder, or an
    empty file); the ones made, for `remove_mount_points` after the run."""
    made: list[Path] = []
    for name in PROTECTED:
        path = workspace / name
        try:
            if path.is_symlink():
                raise SandboxFailure(
                    f"{path} is a symlink: with workspace writes on it cannot be kept "
                    "read-only; replace the link or turn workspace writes off"
                )
            if path.exists():
                continue
            if name in PROTECTED_FILES:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            else:
                path.mkdir()
        except OSError as exc:
            remove_mount_points(made)
            raise SandboxFailure(f"cannot protect {path}: {exc}") from exc
        except SandboxFailure:
            remove_mount_points(made)
            raise
        made.append(path)
    return made


def remove_mount_points(made: list[Path]) -> None:
    """Remove what `make_mount_points` made, if still empty: never anything else."""
    for path in made:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            elif path.lstat().st_size == 0:
                path.unlink()
