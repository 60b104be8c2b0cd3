"""Walking the workspace under its read rules, with every cost bounded.

`list_files`, `search_files` and `@path` completion see exactly what `read_file`
may read: no hidden entry (a name starting with '.'), nothing git ignores, no link
leading out of the workspace or to a hidden or ignored file, regular files only.

Folders are opened one at a time from their open parent (`skillchat/safe_io/read.py`,
`open_folder_at`, never through a link), so a folder swapped for a link mid-walk
cannot lead outside. Links to folders are shown in a folder's listing but never
followed by a walk: no loop, no file seen twice. Every walk stops, and says so, past
`max_entries` entries seen or its deadline; a folder that cannot be opened, and a
folder whose `.gitignore` cannot be read (nothing below it is served, see
ignore.py), are skipped and named. A name that is not UTF-8 cannot be passed back
to `read_file` as JSON text, so it is skipped and counted.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from skillchat.errors import IgnoreFileError
from skillchat.safe_io.read import read_bytes_at
from skillchat.safe_io.walk import is_inside, open_folder, open_folder_at
from skillchat.workspace.ignore import (
    MAX_IGNORE_FILE_BYTES,
    NO_RULES,
    Chain,
    GitIgnore,
    Rules,
    as_bytes_path,
    parse_rules,
)

# Entries seen (files, folders, skipped ones) before a walk stops.
MAX_WALK_ENTRIES = 200_000
# Folders nested deeper than this are not entered (each level holds a descriptor).
MAX_DEPTH = 64


@dataclass(slots=True)
class Entry:
    """One visible entry: `rel` is its workspace path (a DocPath for files)."""

    rel: str
    is_dir: bool
    size: int  # bytes; 0 for folders, -1 when the walk does not look (`sizes=False`)
    dir_fd: int  # the open folder holding it: valid only while the walk is at it
    name: str
    is_link: bool


@dataclass(frozen=True)
class _Here:
    """An open folder of a walk, and the rules that apply to its entries."""

    fd: int
    rel: str
    parts: tuple[str, ...]  # its path as Latin-1 names (ignore.py)
    chain: Chain


@dataclass
class WalkReport:
    """What a walk could not cover, for the notice the tools add to a result."""

    seen: int = 0
    cut: str | None = None  # why the walk stopped early, if it did
    unreadable: list[str] = field(default_factory=list)  # folders that could not be opened
    blocked: list[str] = field(default_factory=list)  # rules files that could not be read
    undecodable: int = 0  # names that are not UTF-8
    too_deep: int = 0

    def notes(self) -> list[str]:
        """One sentence per thing the model should know about this walk."""
        out = []
        if self.cut:
            out.append(self.cut)
        if self.blocked:
            out.append(
                f"{some(self.blocked)} cannot be read, so nothing in their folders is "
                "served until they can be (ask the user to fix them)"
            )
        if self.unreadable:
            out.append(f"folders that cannot be opened were skipped: {some(self.unreadable)}")
        if self.undecodable:
            out.append(f"{self.undecodable} entries with names that are not UTF-8 were skipped")
        if self.too_deep:
            out.append(f"{self.too_deep} folders nested over {MAX_DEPTH} deep were skipped")
        return out


def some(items: list[str], shown: int = 5) -> str:
    names = ", ".join(f"'{item}'" for item in items[:shown])
    return names + (f" and {len(items) - shown} more" if len(items) > shown else "")


class Walker:
    """Visible entries of one workspace, for one tool call (the rules read once each)."""

    def __init__(
        self,
        root: str,
        *,
        max_entries: int = MAX_WALK_ENTRIES,
        deadline: float | None = None,
        sizes: bool = True,
    ) -> None:
        self.root = root
        self.sizes = sizes  # a stat per file; a search learns the size when it opens it
        self._rules: dict[str, Rules] = {}
        self.ignore = GitIgnore(self._cached_rules, folder_rules(root, ".git/info", "exclude"))
        self.max_entries = max_entries
        self.deadline = deadline
        self.report = WalkReport()

    def _cached_rules(self, folder: str) -> Rules:
        """The rules of a folder, read once per walk."""
        if folder not in self._rules:
            self._rules[folder] = folder_rules(self.root, folder)
        return self._rules[folder]

    def _stop(self) -> bool:
        if self.report.cut:
            return True
        if self.report.seen >= self.max_entries:
            self.report.cut = (
                f"stopped after {self.max_entries:,} entries: narrow it with path or glob"
            )
        elif self.deadline is not None and time.monotonic() > self.deadline:
            self.report.cut = "stopped at the time limit: narrow it with path or glob"
        return self.report.cut is not None

    def folder(self, rel: str) -> Iterator[Entry]:
        """The visible entries of the folder `rel` ('' for the root), sorted by name.

        Raises OSError when the folder itself cannot be opened (the caller says why).
        Whether the folder itself may be shown is the caller's check."""
        fd = open_folder(self.root, rel)
        try:
            here = self._enter(fd, rel, None)
            if here is not None:
                yield from self._scan(here)
        finally:
            os.close(fd)

    def files(self, rel: str) -> Iterator[Entry]:
        """Every visible regular file below the folder `rel`, depth first, by name.
        Raises OSError as `folder` does."""
        fd = open_folder(self.root, rel)
        try:
            here = self._enter(fd, rel, None)
            if here is not None:
                yield from self._files_in(here, 0)
        finally:
            os.close(fd)

    def _enter(self, fd: int, rel: str, parent: _Here | None) -> _Here | None:
        """The open folder with the rules that apply in it; None (and noted) when a
        rules file on the way cannot be read."""
        parts = tuple(as_bytes_path(rel).split("/")) if rel else ()
        rules = self._rules[rel] = read_rules(fd)
        try:
            if parent is None:
                chain = self.ignore.chain(parts)
            else:
                chain = GitIgnore.extend(parent.chain, len(parts), rel, rules)
        except IgnoreFileError as exc:
            self._blocked(exc.file)
            return None
        return _Here(fd, rel, parts, chain)

    def _blocked(self, file: str) -> None:
        if file not in self.report.blocked:
            self.report.blocked.append(file)

    def _files_in(self, top: _Here, depth: int) -> Iterator[Entry]:
        """Depth first with an explicit stack (nested generators would cost a frame
        per level on every file); each folder's descriptor is closed when done."""
        stack = [(top, self._scan(top), depth)]
        try:
            while stack:
                here, entries, depth = stack[-1]
                entry = next(entries, None)
                if entry is None:
                    stack.pop()
                    if here is not top:
                        os.close(here.fd)
                elif not entry.is_dir:
                    yield entry
                elif entry.is_link:
                    continue  # never followed: no loop, no file seen twice
                elif depth >= MAX_DEPTH:
                    self.report.too_deep += 1
                else:
                    inner = self._open(here, entry)
                    if inner is not None:
                        stack.append((inner, self._scan(inner), depth + 1))
        finally:
            for here, _, _ in stack:
                if here is not top:
                    os.close(here.fd)

    def _open(self, here: _Here, entry: Entry) -> _Here | None:
        """The sub-folder `entry` of `here`, opened without following a link."""
        try:
            child = open_folder_at(here.fd, entry.name)
        except OSError:
            self.report.unreadable.append(entry.rel)
            return None
        inner = self._enter(child, entry.rel, here)
        if inner is None:
            os.close(child)
        return inner

    def _scan(self, here: _Here) -> Iterator[Entry]:
        """The visible entries of an open folder, sorted by name."""
        if self._stop():
            return
        try:
            with os.scandir(here.fd) as found:
                names = []
                for item in found:
                    self.report.seen += 1
                    if not item.name.startswith("."):
                        names.append(item)
                    seen = self.report.seen  # the clock is read every 1,024 entries
                    if (seen >= self.max_entries or seen % 1024 == 0) and self._stop():
                        break
        except OSError:
            self.report.unreadable.append(here.rel or ".")
            return
        for item in sorted(names, key=lambda i: i.name):
            entry = self._visible(here, item)
            if entry is not None:
                yield entry

    def _visible(self, here: _Here, item: os.DirEntry[str]) -> Entry | None:
        try:
            return self._judge(here, item)
        except IgnoreFileError as exc:
            self._blocked(exc.file)
            return None

    def _judge(self, here: _Here, item: os.DirEntry[str]) -> Entry | None:
        if not item.name.isascii():
            try:
                item.name.encode("utf-8")
            except UnicodeEncodeError:
                self.report.undecodable += 1
                return None
        path = f"{here.rel}/{item.name}" if here.rel else item.name
        size = -1
        try:  # the kind comes with the name on most file systems: no stat for it
            link = item.is_symlink()
            is_dir = item.is_dir(follow_symlinks=False)
            if not link and not is_dir and not item.is_file(follow_symlinks=False):
                return None  # FIFOs, sockets, devices: never read
            if self.sizes and not link and not is_dir:
                size = item.stat(follow_symlinks=False).st_size
        except OSError:  # gone since the folder was read
            return None
        if link:
            target = self._link_target(path)
            if target is None:
                return None
            info, real_rel = target
            is_dir = stat.S_ISDIR(info.st_mode)
            if not is_dir and not stat.S_ISREG(info.st_mode):
                return None
            if self.ignore.ignored(real_rel, is_dir=is_dir):
                return None
            size = info.st_size
        parts = (*here.parts, as_bytes_path(item.name))
        if self.ignore.ignored_entry(here.chain, parts, is_dir):
            return None
        return Entry(path, is_dir, 0 if is_dir else size, here.fd, item.name, link)

    def _link_target(self, path: str) -> tuple[os.stat_result, str] | None:
        """A link's target when it stays inside, is not hidden, and exists."""
        real = os.path.realpath(os.path.join(self.root, path))
        if not is_inside(real, self.root):
            return None
        real_rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        if any(part.startswith(".") for part in real_rel.split("/")):
            return None
        try:
            return os.stat(real), real_rel
        except OSError:  # dangling, or a loop
            return None


def read_rules(dir_fd: int, name: str = ".gitignore") -> Rules:
    """The rules of the rules file `name` in the open folder `dir_fd`: none when there
    is no such file, fail-closed rules when it exists but cannot be read (ignore.py)."""
    try:
        data, _ = read_bytes_at(dir_fd, name, limit=MAX_IGNORE_FILE_BYTES)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return NO_RULES
        if exc.errno == errno.ELOOP:
            return Rules(error="it is a symbolic link")
        return Rules(error=exc.strerror or type(exc).__name__)
    if len(data) > MAX_IGNORE_FILE_BYTES:
        return Rules(error=f"it is over {MAX_IGNORE_FILE_BYTES:,} bytes")
    if b"\x00" in data:
        return Rules(error="it holds NUL bytes")
    return parse_rules(data)


def folder_rules(root: str, folder: str, name: str = ".gitignore") -> Rules:
    """The rules of `name` in the folder `folder` below `root`. A folder that is missing,
    or reached through a link, has no rules of its own (the link's target is judged by
    its real path); one that cannot be opened blocks what is below it."""
    try:
        fd = open_folder(root, folder)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return NO_RULES
        return Rules(error=f"its folder cannot be opened ({exc.strerror})")
    try:
        return read_rules(fd, name)
    finally:
        os.close(fd)
