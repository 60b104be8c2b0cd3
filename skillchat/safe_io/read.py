"""The one way skillchat reads a file: every path rule lives here.

Every read of a skill's SKILL.md or resources, and of workspace files, goes
through `read_contained`, which:

1. rejects, before touching the disk: an empty path, NUL bytes, absolute paths
   (`/x`, `C:\\x`, `\\\\host\\x`) and any `..` segment, splitting on `/` and `\\`;
2. opens the container's root by walking its real path from `/` with `O_NOFOLLOW`,
   then the relative path from that root descriptor, one `openat`-style open
   (`dir_fd=`, `O_NOFOLLOW`) per folder, resolving symlinks itself: one that stays
   inside is followed, one that leads out (or a root swapped for a link since it
   was recorded) is PATH_TRAVERSAL. The walk *is* the containment check, so there
   is no window between a check and an open to race (see `skillchat/safe_io/walk.py`);
3. the container's own policy (the workspace refuses hidden and git-ignored
   files) judges the path as asked and the path the walk really opened;
4. on Linux, also checks where the kernel says the opened file is
   (`/proc/self/fd/N`), which catches a folder moved out of the root mid-walk;
5. opens only regular files: the last name is `lstat`-ed in its folder and a FIFO,
   device or socket is refused before any `open`; the open is non-blocking and the
   descriptor re-checked with `fstat`;
6. refuses a regular file with more than one hard link (`st_nlink > 1`): another
   name may be outside the folder (or hidden) and no path check can see it. Only
   skillchat's bundled skills are exempt, as uv installs them as hard links (the
   policy and why: `skillchat/hardlinks.py`);
7. never reads more than the limit + 1 byte, so a 1 GB file costs `limit` bytes;
8. refuses binary content (NUL bytes or invalid UTF-8) and strips a UTF-8 BOM;
   `read_text_or_image` serves PNG, JPEG, GIF and WebP instead (safe_io/images.py).

Errors are `FileAccessError(code, message)` with the tools' messages and
error codes (docs/tools.md) (NOT_FOUND, PATH_TRAVERSAL, PERMISSION_DENIED, UNSUPPORTED_FILE,
INVALID_ARGUMENT, INTERNAL_ERROR), so the tools can pass them to the model as they are.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.errors import FileAccessError
from skillchat.localfile import file_kind, read_at_most
from skillchat.safe_io.walk import Walk, open_root, opened_inside, resolve

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image, ImageLimits

# No configuration can raise a read above this: the memory bound of one tool call.
HARD_CAP_BYTES = 32 * 1024 * 1024

_DRIVE = re.compile(r"^[A-Za-z]:")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True, eq=False)
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
    hard_links: bool = False  # files with more than one link are served (hardlinks.py)


@dataclass(frozen=True, eq=False)
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


def _os_error(exc: OSError, rel: str, container: Container) -> FileAccessError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FileAccessError("NOT_FOUND", f"File '{rel}' not found in {container.label}")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileAccessError("PERMISSION_DENIED", f"Cannot read file '{rel}': permission denied")
    if exc.errno == errno.EISDIR:
        return FileAccessError("UNSUPPORTED_FILE", f"Cannot read file '{rel}': it is a directory")
    if exc.errno == errno.ELOOP:
        return FileAccessError("UNSUPPORTED_FILE", f"Cannot read file '{rel}': symlink loop")
    return FileAccessError(
        "INTERNAL_ERROR", f"Cannot read file '{rel}': {exc.strerror or exc.__class__.__name__}"
    )


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


def _open_regular(
    walk: Walk, name: str, before: os.stat_result, shown: str, hard_links: bool
) -> int:
    """Open the walk's last name, non-blocking: a regular file, with a single link
    unless `hard_links`."""
    if not stat.S_ISREG(before.st_mode):
        raise FileAccessError(
            "UNSUPPORTED_FILE", f"Cannot read file '{shown}': {file_kind(before.st_mode)}"
        )
    fd = os.open(name, _OPEN_FLAGS | _NOFOLLOW, dir_fd=walk.here)
    after = os.fstat(fd)
    refusal = None
    if not stat.S_ISREG(after.st_mode):  # swapped since the lstat
        refusal = FileAccessError(
            "UNSUPPORTED_FILE", f"Cannot read file '{shown}': {file_kind(after.st_mode)}"
        )
    elif after.st_nlink > 1 and not hard_links:
        refusal = FileAccessError(
            "PERMISSION_DENIED",
            f"Cannot read file '{shown}': it has {after.st_nlink} hard links, and a "
            "hard-linked file may be a second name for one outside the folder",
        )
    if refusal is not None:
        os.close(fd)
        raise refusal
    return fd


def open_contained(container: Container, clean: str) -> int:
    """Open `clean` by walking it from the pinned root; the container's policy is
    applied to the path the walk really took."""
    escape = functools.partial(traversal_error, container)
    try:
        root_fd = open_root(str(container.root), escape)
    except OSError as exc:
        raise _os_error(exc, clean, container) from None
    try:
        walk, name, before = resolve(root_fd, str(container.root), clean, escape)
        try:
            if container.allow is not None:
                container.allow("/".join([*walk.names, name]))
            fd = _open_regular(walk, name, before, clean, container.hard_links)
        finally:
            walk.close()
    except OSError as exc:
        raise _os_error(exc, clean, container) from None
    finally:
        os.close(root_fd)
    if not opened_inside(fd, str(container.root)):
        os.close(fd)
        raise traversal_error(container)
    return fd


def read_contained(container: Container, rel: object, *, limit: int, offset: int = 0) -> FileText:
    """Read `rel` inside `container` under every path rule, at most `limit` bytes of it
    from byte `offset` on (an offset inside a character starts at the next one)."""
    clean, fd = _opened(container, rel)
    return _text(fd, clean, container, limit, offset)


def read_text_or_image(
    container: Container, rel: object, *, limit: int, offset: int = 0, images: ImageLimits
) -> FileText | Image:
    """`read_contained`, except that a PNG, JPEG, GIF or WebP (by its first bytes,
    read from its start) is an `Image` (safe_io/images.py), within `images` or not."""
    from skillchat.safe_io.images import SNIFF_BYTES, ImageLimits, image_type, read_image

    images = ImageLimits(min(images.max_bytes, HARD_CAP_BYTES), images.max_side)
    clean, fd = _opened(container, rel)
    try:
        mime = image_type(os.pread(fd, SNIFF_BYTES, 0)) if offset == 0 else None
        image = read_image(fd, clean, mime, images) if mime is not None else None
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            raise _os_error(exc, clean, container) from None
        raise
    if image is None:
        return _text(fd, clean, container, limit, offset)
    os.close(fd)
    return image


def _opened(container: Container, rel: object) -> tuple[str, int]:
    """`rel` checked and opened under every rule: its clean form and descriptor."""
    clean = normalise_relative_path(rel, container)
    if container.allow is not None:
        container.allow(clean)
    return clean, open_contained(container, clean)


def _text(fd: int, clean: str, container: Container, limit: int, offset: int) -> FileText:
    """The text of the open file `fd` (closed here), as `read_contained` says."""
    limit = max(0, min(limit, HARD_CAP_BYTES))
    try:
        size = os.fstat(fd).st_size
        if offset and offset >= size:
            raise FileAccessError(
                "INVALID_ARGUMENT",
                f"offset {offset} is past the end of '{clean}' ({size:,} bytes)",
            )
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        data = read_at_most(fd, limit + 1)
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
        size=max(size, offset + len(data)),
        truncated=truncated,
        sha256=hashlib.sha256(data).hexdigest(),
        offset=start,
    )


def read_bytes_at(dir_fd: int, name: str, *, limit: int) -> tuple[bytes, int]:
    """At most `limit` + 1 bytes of the regular file `name` in the open folder `dir_fd`,
    and its size. Never follows a link, never opens a FIFO or device for reading (the
    open is non-blocking and the kind checked on the descriptor). OSError otherwise:
    ELOOP for a link, EISDIR/ENXIO-style errors for other kinds."""
    fd = os.open(name, _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, file_kind(info.st_mode))
        most = min(limit, HARD_CAP_BYTES) + 1
        # The size says when one read is enough (a file reporting 0 may still have text).
        return read_at_most(fd, min(most, info.st_size) or most), info.st_size
    finally:
        os.close(fd)
