"""Writing a file whole or not at all: the one way skillchat rewrites its documents.

The trust store, a skills.lock, the user cache's files (safe_io/user_cache.py) and
a served skill's cached files are written in place. A crash, a full disk or a Ctrl-C halfway must
leave the old document, never half of the new one: a torn trust store or lock reads
as unusable, and every skill it vouched for would lose its trust. So the bytes go
to a temporary file of a name of its own in the same folder (private from its first
byte: mkstemp makes it 0600), reach the disk (fsync), take their final mode, and
are renamed over the target, which POSIX makes atomic: a reader sees the old file
or the new one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from skillchat.errors import SkillchatError

PRIVATE = 0o600
PRIVATE_DIR = 0o700


def replace_atomically(
    path: Path,
    data: bytes,
    error: Callable[[str], SkillchatError],
    failure: str,
    *,
    mode: int = PRIVATE,
) -> None:
    """Make `data` the whole of `path` (mode `mode`), or leave `path` as it was.

    A missing folder is made private (0700). Any OSError is raised as `error`, one
    line: "`path`: `failure`: why"; the temporary file never outlives a failure."""
    try:
        replace_file(path, data, mode=mode)
    except OSError as exc:
        raise error(f"{path}: {failure}: {exc.strerror or exc}") from None


def replace_file(path: Path, data: bytes, *, mode: int = PRIVATE) -> None:
    """`replace_atomically` raising the OSError itself: for the user cache
    (safe_io/user_cache.py), where a failed write is not said."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            if mode != PRIVATE:
                os.fchmod(fh.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
