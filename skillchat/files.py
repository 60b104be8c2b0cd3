"""The one way skillchat reads a file: every path rule lives here.

Every read of a skill's SKILL.md or resources, and of workspace files, goes
through `read_contained`, which:

1. rejects, before touching the disk: an empty path, NUL bytes, absolute paths
   (`/x`, `C:\\x`, `\\\\host\\x`) and any `..` segment, splitting on `/` and `\\`;
2. resolves the real path (symlinks followed) and rejects it unless it lies inside
   the real path of *that* container (a skill's own folder, never its siblings);
3. opens only regular files (a FIFO, device or socket is refused after `stat`,
   before any `open`; the open is non-blocking and re-checked with `fstat`);
4. never reads more than the limit + 1 byte, so a 1 GB file costs `limit` bytes;
5. refuses binary content (NUL bytes or invalid UTF-8) and strips a UTF-8 BOM.

Errors are `FileAccessError(code, message)` with the seeds' messages and the
tool error codes of DESIGN §5, so the tools can pass them to the model as they are.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import FileAccessError
from skillchat.skills.model import Skill

# No configuration can raise a read above this: the memory bound of one tool call.
HARD_CAP_BYTES = 32 * 1024 * 1024
# get_skill lists a skill's files; a skill with a node_modules inside must not flood it.
MAX_LISTED_FILES = 500

_DRIVE = re.compile(r"^[A-Za-z]:")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Container:
    """A folder files may be read from, and how to name it in error messages.

    `allow`, when set, is the container's own policy on top of the path rules (the
    workspace refuses hidden and git-ignored files): it gets the relative path as
    asked for and, after symlinks are resolved, the real one, and raises
    `FileAccessError` to refuse. Both, so a link cannot launder a refused path.
    """

    root: Path
    label: str  # "skill 'pdf'" / "workspace"
    boundary: str  # "skill folder" / "workspace"
    allow: Callable[[str], None] | None = None

    @classmethod
    def for_skill(cls, skill: Skill) -> Container:
        return cls(skill.root, f"skill '{skill.name}'", "skill folder")


@dataclass(frozen=True)
class FileText:
    """A file's decoded text, possibly cut to the limit."""

    path: str  # the relative path, normalised to '/' separators
    text: str
    size: int  # bytes on disk
    truncated: bool
    sha256: str  # of the bytes read (identifies the content for ALREADY_IN_CONTEXT)
    offset: int = 0  # the byte of the file `text` starts at

    @property
    def end(self) -> int:
        """The byte of the file just after `text`: where a further read starts."""
        return self.offset + len(self.text.encode("utf-8"))

    def with_notice(self) -> str:
        """The text, with a line saying it was cut (and where to read on) when it was."""
        if not self.truncated:
            return self.text
        return self.text + truncation_notice(self.path, self.offset, self.end, self.size)


def truncation_notice(path: str, start: int, end: int, total: int) -> str:
    """The line after a cut text: what was shown, and the offset that reads on."""
    shown = f"only the first {end:,}" if start == 0 else f"only bytes {start:,} to {end:,}"
    return (
        f"\n\n[truncated: '{path}' is {total:,} bytes; {shown} are shown. "
        f"To read on, call the tool again with offset={end}; or read a more specific file.]"
    )


def traversal_error(container: Container) -> FileAccessError:
    return FileAccessError(
        "PATH_TRAVERSAL",
        f"Path traversal detected: cannot access files outside {container.boundary}",
    )


def normalise_relative_path(rel: object, container: Container) -> str:
    """Check a model- or user-supplied relative path lexically; return it with '/' only.

    Runs before any filesystem access, so hostile spellings never reach `open`.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise FileAccessError("INVALID_ARGUMENT", "file_path must be a non-empty string")
    if "\x00" in rel:
        raise FileAccessError("INVALID_ARGUMENT", "file_path must not contain NUL bytes")
    if rel.startswith(("/", "\\")) or _DRIVE.match(rel):
        raise traversal_error(container)
    parts = re.split(r"[\\/]", rel)
    if any(part == ".." for part in parts):
        raise traversal_error(container)
    clean = [p for p in parts if p not in ("", ".")]
    if not clean:
        raise FileAccessError("UNSUPPORTED_FILE", f"Cannot read file '{rel}': it is a directory")
    return "/".join(clean)


def is_inside(real: str, root_real: str) -> bool:
    """Whether the real path `real` lies strictly below the real path `root_real`."""
    return real.startswith(root_real.rstrip(os.sep) + os.sep)


def _os_error(exc: OSError, rel: str, container: Container) -> FileAccessError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FileAccessError("NOT_FOUND", f"File '{rel}' not found in {container.label}")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileAccessError("PERMISSION_DENIED", f"Cannot read file '{rel}': permission denied")
    if exc.errno == errno.ELOOP:
        return FileAccessError("UNSUPPORTED_FILE", f"Cannot read file '{rel}': symlink loop")
    return FileAccessError(
        "INTERNAL_ERROR", f"Cannot read file '{rel}': {exc.strerror or exc.__class__.__name__}"
    )


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "it is a directory"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO, not a regular file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a regular file"
    return "it is not a regular file"


def _read_at_most(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    remaining = count
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _decode(data: bytes, truncated: bool, rel: str) -> str:
    """UTF-8 text or a refusal; a cut in the middle of a character is not binary."""
    binary = FileAccessError(
        "UNSUPPORTED_FILE", f"Cannot read file '{rel}': binary files are not supported"
    )
    if b"\x00" in data:
        raise binary
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8")
        raise binary from None


def read_contained(container: Container, rel: object, *, limit: int, offset: int = 0) -> FileText:
    """Read `rel` inside `container` under every path rule, at most `limit` bytes of it
    from byte `offset` on (an offset inside a character starts at the next one)."""
    clean = normalise_relative_path(rel, container)
    limit = max(0, min(limit, HARD_CAP_BYTES))
    root_real = os.path.realpath(container.root)
    if container.allow is not None:
        container.allow(clean)
    real = os.path.realpath(os.path.join(root_real, *clean.split("/")))
    if not is_inside(real, root_real):
        raise traversal_error(container)
    if container.allow is not None:
        container.allow(os.path.relpath(real, root_real).replace(os.sep, "/"))
    try:
        before = os.stat(real)
    except OSError as exc:
        raise _os_error(exc, clean, container) from None
    if not stat.S_ISREG(before.st_mode):
        raise FileAccessError(
            "UNSUPPORTED_FILE", f"Cannot read file '{clean}': {_file_kind(before.st_mode)}"
        )
    try:
        fd = os.open(real, _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise _os_error(exc, clean, container) from None
    try:
        after = os.fstat(fd)
        # The path could have been swapped between stat and open: insist on the same file.
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(
            after.st_mode
        ):
            raise traversal_error(container)
        if offset and offset >= after.st_size:
            raise FileAccessError(
                "INVALID_ARGUMENT",
                f"offset {offset} is past the end of '{clean}' ({after.st_size:,} bytes)",
            )
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        data = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise _os_error(exc, clean, container) from None
    finally:
        os.close(fd)
    truncated = len(data) > limit
    if truncated:
        data = data[:limit]
    start = offset
    if offset == 0 and data.startswith(b"\xef\xbb\xbf"):
        start = 3  # the BOM is not text: the text starts after it
    while offset and data and data[0] & 0xC0 == 0x80:  # UTF-8 continuation bytes
        data, start = data[1:], start + 1
    text = _decode(data, truncated, clean)
    return FileText(
        path=clean,
        text=text,
        size=max(after.st_size, offset + len(data)),
        truncated=truncated,
        sha256=hashlib.sha256(data).hexdigest(),
        offset=start,
    )


def read_skill_file(skill: Skill, rel: object, *, limit: int, offset: int = 0) -> FileText:
    """A resource of `skill` (any file under its folder), cut at `limit` bytes from
    `offset`."""
    return read_contained(Container.for_skill(skill), rel, limit=limit, offset=offset)


def read_skill_md(skill: Skill, *, limit: int) -> FileText:
    """The whole SKILL.md of `skill` through the same rules as every other file."""
    try:
        return read_skill_file(skill, skill.skill_md.name, limit=limit)
    except FileAccessError as exc:
        if exc.code == "NOT_FOUND":
            raise FileAccessError(
                "NOT_FOUND", f"SKILL.md not found for skill '{skill.name}'"
            ) from None
        raise


def list_skill_files(skill: Skill, *, max_files: int = MAX_LISTED_FILES) -> list[str]:
    """Relative paths of the regular files in a skill's folder, sorted, hidden ones skipped.

    Symlinked directories are not descended into (they may lead anywhere); a symlinked
    file is listed only when its target stays inside the folder. Stops at `max_files`.
    """
    root_real = os.path.realpath(skill.root)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root_real, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            full = os.path.join(dirpath, name)
            real = os.path.realpath(full)
            if not is_inside(real, root_real) or not os.path.isfile(real):
                continue
            found.append(os.path.relpath(full, root_real).replace(os.sep, "/"))
            if len(found) >= max_files:
                return sorted(found)
    return sorted(found)
