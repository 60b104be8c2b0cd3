"""Files and folders only their owner can read: the chat database (with SQLite's
`-wal` and `-shm`), the input history and the data folder that holds them.

Chats hold everything the user typed and everything the model and the skills said;
the history holds every line typed at the prompt. Neither is for other users of the
machine, whatever the umask: a new file is created 0600 and a new folder 0700
(exactly, not "0666 minus the umask"), and one that already exists with group or
other bits (an older skillchat, a copy, `umask 000`) loses them when skillchat
opens it. Owner bits are left alone. A file skillchat cannot chmod (another
user's, or on a read-only file system) is used as it is: refusing it would not
make it private.

SQLite creates `-wal` and `-shm` with the database file's own mode, so a private
database gets private companions; existing ones are tightened with it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def _tighten(path: Path) -> None:
    """Drop the group and other bits of an existing `path`, if it has any."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & _OTHERS:
            path.chmod(mode & ~_OTHERS)
    except OSError:  # gone, another user's, or on a read-only file system
        pass


def private_dir(path: Path, *, tighten: bool = True) -> None:
    """Make folder `path` (and its missing parents) 0700; an existing `path` is
    tightened when `tighten` (skillchat's own data folder), and left alone when not
    (a folder the user chose for the database, such as their home)."""
    missing: list[Path] = []
    walk = path
    while not walk.exists() and walk.parent != walk:
        missing.append(walk)
        walk = walk.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another session
            continue
        folder.chmod(DIR_MODE)  # mkdir's mode is narrowed by the umask, never widened
    if tighten and not missing:
        _tighten(path)


def private_file(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist; else drop its group and
    other bits. The contents of an existing file are not touched."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        _tighten(path)
        return
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def private_database(path: Path) -> None:
    """The database file `path` (created empty if missing, which SQLite reads as a
    new database) and its existing `-wal` and `-shm`, private."""
    private_file(path)
    for suffix in ("-wal", "-shm"):
        _tighten(path.with_name(path.name + suffix))
