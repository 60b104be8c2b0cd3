"""Opening a file the user named on the command line or in the config: a query file
for `eval`, the chat database, a `--gguf` model.

Such a path may name anything: a FIFO (whose `open` waits forever for a writer),
`/dev/zero` (endless, and `st_size` 0, so a size check passes and the read fills
memory), a folder. So the file is opened non-blocking, which never waits, its kind
is read from the descriptor (not from the path, which may have changed since), and
anything but a regular file is refused with what it is. A read is capped whatever
the size says.
"""

from __future__ import annotations

import os
import stat

from skillchat.errors import NotRegularFile

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for a message: 'it is a FIFO, not a regular file'."""
    if stat.S_ISDIR(mode):
        return "it is a directory"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO, not a regular file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a regular file"
    return "it is not a regular file"


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of the regular file `path` (symlinks followed), opened
    without waiting; NotRegularFile for any other kind, OSError as `open` raises it."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(file_kind(mode))
        os.set_blocking(fd, True)  # a regular file never blocks; reads may now be plain
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_at_most(fd: int, count: int) -> bytes:
    """Up to `count` bytes of `fd`, in reads of at most 1 MiB: the size a file claims
    (0 for a device) is never trusted for how much to read."""
    chunks: list[bytes] = []
    remaining = count
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` + 1 of them: more than
    `limit` means the file is larger (whatever its size said)."""
    fd = open_regular(path)
    try:
        return read_at_most(fd, limit + 1)
    finally:
        os.close(fd)
