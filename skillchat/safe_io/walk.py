"""Walking a path by descriptor, so what is opened is what was checked.

The safe file layer (`skillchat/safe_io/read.py`) reads through these functions and never
through a path string the kernel resolves on its own:

- `open_root` opens a container's root by walking its real path from `/`, one
  folder at a time, each with `O_NOFOLLOW | O_DIRECTORY`. The root is recorded as a
  real path (no links) when a skill is discovered or a workspace opened, so a root,
  or a folder above it, that has since been swapped for a symlink fails the walk
  (`escape`), never leads elsewhere.
- `resolve` walks a relative path from that root descriptor: each step opens one
  name inside the folder the step before opened (`dir_fd=`, `O_NOFOLLOW`). A
  symlink met on the way is read with `readlink` and resolved here, against the
  folders already opened: a relative target goes on from where it is, an absolute
  one restarts at the root and only if it names a path below it, and a `..` that
  would climb above the root is an escape. There is no check-then-open window to
  race: swapping a folder for a symlink mid-walk makes the next step fail
  (`ELOOP`/`ENOTDIR`) or land on the symlink, which is then judged like any other.
- `opened_inside` asks the kernel (`/proc/self/fd/N`, on Linux) where an open file
  really is, which also catches a folder *moved* out of the root mid-walk.

Failures are `OSError`s (for the caller to word) and `escape()` for anything that
would leave the root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# O_PATH where there is one: a folder that may only be crossed (x without r) still walks.
DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC
# A folder opened to list it (scandir needs a readable descriptor).
LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC
MAX_LINKS = 40  # symlinks followed in one path: Linux's own limit
_PROC_FD = "/proc/self/fd"


def is_inside(real: str, root_real: str) -> bool:
    """Whether the real path `real` lies strictly below the real path `root_real`."""
    return real.startswith(root_real.rstrip(os.sep) + os.sep)


def open_root(root: str, escape: Callable[[], Exception]) -> int:
    """A descriptor of the real path `root`, reached from `/` without following any
    symlink: a link anywhere on it now means it was swapped after it was recorded."""
    fd = os.open(os.sep, DIR_FLAGS)
    try:
        for part in (p for p in os.path.abspath(root).split(os.sep) if p):
            nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise escape() from None
        raise
    return fd


@dataclass
class Walk:
    """The folders opened so far below the root: `fds[i]` is the folder `names[:i+1]`.
    The root's own descriptor belongs to the caller and is not in `fds`."""

    root_fd: int
    fds: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    @property
    def here(self) -> int:
        return self.fds[-1] if self.fds else self.root_fd

    def close(self) -> None:
        """Close the folders below the root and go back to it."""
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        self.names.clear()


def _link_parts(target: str, walk: Walk, root: str, escape: Callable[[], Exception]) -> list[str]:
    """The names a symlink's target puts in front of the rest of the path. An absolute
    target restarts the walk at the root, and only when it names a path below it."""
    if os.path.isabs(target):
        if target.rstrip(os.sep) != root and not is_inside(target, root):
            raise escape()
        walk.close()
        target = target[len(root) :]
    return [p for p in target.split(os.sep) if p not in ("", ".")] or ["."]


def resolve(
    root_fd: int, root: str, rel: str, escape: Callable[[], Exception]
) -> tuple[Walk, str, os.stat_result]:
    """Walk the '/'-separated `rel` from `root_fd` (the folder at the real path `root`).

    Returns the open folders, the last name and its `lstat`, which is never a
    symlink. The caller closes the walk. A path that ends at a folder is
    `IsADirectoryError`; a symlink chain longer than MAX_LINKS is `ELOOP`.
    """
    root = os.path.abspath(root)
    walk = Walk(root_fd)
    todo = rel.split("/")
    links = 0
    try:
        while todo:
            part = todo.pop(0)
            if part == "..":
                if not walk.names:
                    raise escape()
                os.close(walk.fds.pop())
                walk.names.pop()
            elif part in ("", "."):
                if not todo:
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            else:
                st = os.stat(part, dir_fd=walk.here, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    links += 1
                    if links > MAX_LINKS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                    target = os.readlink(part, dir_fd=walk.here)
                    todo = _link_parts(target, walk, root, escape) + todo
                elif not todo:
                    return walk, part, st
                else:
                    walk.fds.append(os.open(part, DIR_FLAGS, dir_fd=walk.here))
                    walk.names.append(part)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    except BaseException:
        walk.close()
        raise


def opened_inside(fd: int, root: str) -> bool:
    """Where the kernel shows it (Linux): whether the open file lies below `root`.
    True where there is no /proc to ask: the walk alone then holds the line."""
    try:
        return is_inside(os.readlink(f"{_PROC_FD}/{fd}"), os.path.abspath(root))
    except OSError:
        return not os.path.isdir(_PROC_FD)


# Folders are opened one name at a time from an open parent, never through a link
# (LIST_FLAGS): a walk holding these descriptors cannot be led outside by a folder
# swapped mid-way.


def open_folder_at(dir_fd: int, name: str) -> int:
    """A descriptor of the folder `name` in the open folder `dir_fd` (OSError if it is
    not a folder, is a link, or cannot be opened). The caller closes it."""
    return os.open(name, LIST_FLAGS, dir_fd=dir_fd)


def open_folder(root: str | Path, rel: str) -> int:
    """A descriptor of the folder `rel` ('' for `root` itself) below `root`, reached
    one real folder at a time: a link on the way is refused (OSError ELOOP/ENOTDIR)."""
    fd = os.open(os.path.realpath(root), LIST_FLAGS)
    for part in [p for p in rel.split("/") if p]:
        try:
            child = open_folder_at(fd, part)
        finally:
            os.close(fd)
        fd = child
    return fd
