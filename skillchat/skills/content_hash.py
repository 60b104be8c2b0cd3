"""The SHA-256 of a skill folder that trust (skills/trust.py) and the lock of
installed skills (skills/lock.py) are bound to.

**What the hash covers**: every entry under the skill's real root, not only
SKILL.md and `scripts/`, because a command may run or import any file of the folder
(`python -m scripts.x` imports siblings, templates are rendered, `references/` may
hold code). Entries are taken depth-first in name order; a regular file contributes
its path, its executable bit and its bytes; a symlink its path and target text;
anything else (a FIFO, a socket) its path and kind, without being opened.

**Symlinks** must stay inside the skill's folder: each one is followed component by
component (every `..`, every further link) and must never step out of the folder;
then what it points to is an entry of the folder, hashed at its own path, so editing
it is a change. A link that leaves the folder (an absolute target, or one that
climbs out, even to a sibling skill in the same skills folder) makes the skill
impossible to trust (`TrustError`: "untrusted", or "changed since trusted" when it
was trusted before). Why refuse rather than hash the target: in the sandbox each
skill is mounted alone at /skills/NAME, so a link out of it resolves there to
whatever is mounted under that path (another skill, maybe a different folder than
on the host, or nothing). The host file's hash would not vouch for what runs.

Bounded: past `MAX_ENTRIES` entries or `MAX_BYTES` bytes a folder cannot be
trusted (`TrustError`), and a trusted folder that grows past them reads as changed.
A `__pycache__` written by running a script on the host is a change too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillchat.errors import TrustError

MAX_ENTRIES = 2_000
MAX_BYTES = 50_000_000
_CHUNK = 1 << 16


def content_hash(root: Path, files: dict[str, str] | None = None) -> str:
    """SHA-256 of a skill folder's entries (see the module doc for what counts).

    With `files`, also fills it with each regular file's own SHA-256 by relative
    path, read in the same pass: the lock of installed skills (skills/lock.py)
    records both, so its folder digest is this very function's.
    Raises TrustError when the folder is over the bounds or cannot be read.
    """
    import hashlib  # here, not at the top: `skills list` hashes only trusted skills

    digest = hashlib.sha256(b"skillchat-trust-1\0")
    budget = {"entries": MAX_ENTRIES, "bytes": MAX_BYTES}

    pending = [(str(root), b"")]  # folders still to hash, deepest-first (no recursion limit)
    while pending:
        folder, rel = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise TrustError(f"{folder}: cannot list: {exc.strerror or exc}") from None
        subfolders = []
        for entry in entries:
            budget["entries"] -= 1
            if budget["entries"] < 0:
                raise TrustError(f"{root}: more than {MAX_ENTRIES:,} files to hash")
            name = rel + os.fsencode(entry.name)
            try:
                if entry.is_symlink():
                    target = os.fsencode(os.readlink(entry.path))
                    if not _stays_inside(str(root), os.fsdecode(name)):
                        raise TrustError(
                            f"{entry.path}: a symlink to {os.fsdecode(target)!r} does not stay "
                            "inside the skill folder; trust covers only the skill's own files"
                        )
                    digest.update(b"L\0" + name + b"\0" + target + b"\0")
                elif entry.is_dir(follow_symlinks=False):
                    digest.update(b"D\0" + name + b"\0")
                    subfolders.append((entry.path, name + b"/"))
                elif entry.is_file(follow_symlinks=False):
                    own = _hash_file(entry.path, name, digest, budget)
                    if files is not None:
                        files[os.fsdecode(name)] = own
                else:
                    digest.update(b"O\0" + name + b"\0")
            except OSError as exc:  # it changed or vanished while being read
                raise TrustError(f"{entry.path}: cannot read: {exc.strerror or exc}") from None
        pending.extend(reversed(subfolders))
    return digest.hexdigest()


def _stays_inside(root: str, link: str, max_links: int = 40) -> bool:
    """Whether the path `link` (relative to `root`) resolves without ever leaving
    `root`: read as the kernel reads it, one component at a time, each symlink's
    target spliced in where the link was (at most `max_links` of them, as a loop
    must end). `..` at the top of `root` or an absolute target is leaving it."""
    here: list[str] = []  # real folders below root, where the walk stands
    pending = list(reversed(link.split("/")))
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if not here:
                return False
            here.pop()
            continue
        path = os.path.join(root, *here, name)
        if not os.path.islink(path):
            here.append(name)
            continue
        max_links -= 1
        target = os.readlink(path)
        if max_links < 0 or target.startswith("/"):
            return False
        pending.extend(reversed(target.split("/")))
    return True


def _hash_file(path: str, name: bytes, digest: Any, budget: dict[str, int]) -> str:
    """One regular file: its name, executable bit, size, and exactly that many bytes
    (opened without following a link or blocking on a FIFO swapped in meanwhile).
    Returns the SHA-256 of the file's bytes alone."""
    import hashlib

    own = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TrustError(f"{path}: changed while being hashed")
        budget["bytes"] -= info.st_size
        if budget["bytes"] < 0:
            raise TrustError(f"{path}: the skill folder is over {MAX_BYTES:,} bytes to hash")
        mode = b"x" if info.st_mode & 0o111 else b"-"
        digest.update(b"F\0" + name + b"\0" + mode + str(info.st_size).encode() + b"\0")
        left = info.st_size
        while left > 0 and (chunk := fh.read(min(_CHUNK, left))):
            digest.update(chunk)
            own.update(chunk)
            left -= len(chunk)
        if left:
            raise TrustError(f"{path}: changed while being hashed")
    return own.hexdigest()


def packages_digest(packages: Sequence[str]) -> str:
    """SHA-256 of a skill's `[packages]` entry in the config (the requirements in
    their order; none is the digest of an empty list)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(list(packages)).encode()).hexdigest()
