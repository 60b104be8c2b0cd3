"""The workspace's visible files, kept up to date between turns without walking it
again: what `paths` gating (engine/steps/paths.py) asks every turn.

    index = FileIndex(workspace)
    changed = index.refresh()       # the folders whose files changed since last time
    index.files(folder)             # the visible files directly in `folder`

The first `refresh` walks the workspace under its rules (walk.py: nothing hidden,
ignored or leading out, at most `MAX_WALK_ENTRIES` entries). Later ones stat each
folder the index knows, and its `.gitignore` when it has one: a folder whose
modification time moved (an entry was added, removed or renamed in it) is listed
again, a new sub-folder walked, a removed one dropped; a `.gitignore` that changed
has its whole folder walked again, as do `.git/info/exclude`'s changes the root.
So a turn costs one `lstat` per folder (two where a `.gitignore` is), not one per
file: benchmarks/bench_paths_gate.py measures it with 20,000 files.

`PathGlobs` matches gitignore-style globs (Claude Code's `paths`) against the
index's paths with the workspace's own gitignore matcher (ignore.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from skillchat.workspace.files import Workspace
from skillchat.workspace.ignore import NO_RULES, GitIgnore, as_bytes_path, parse_rules
from skillchat.workspace.walk import Walker

_EXCLUDE = ".git/info/exclude"


@dataclass(frozen=True)
class _Folder:
    path: str  # absolute, joined once: the check of every turn stats it
    mtime: int | None  # st_mtime_ns when it was listed
    rules: int | None  # its .gitignore's st_mtime_ns; None when it has none
    files: tuple[str, ...]  # workspace-relative paths of the visible files in it
    folders: tuple[str, ...]  # its visible sub-folders (links to folders are not entered)

    def moved(self) -> bool:
        """Whether the folder, or its .gitignore, changed since it was listed."""
        if _mtime(self.path) != self.mtime:
            return True
        return self.rules is not None and _mtime(self.path + "/.gitignore") != self.rules


def _mtime(path: str) -> int | None:
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return None


class FileIndex:
    """The visible files of one workspace, by folder (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.root = str(workspace.root)
        self._folders: dict[str, _Folder] = {}
        self._exclude: int | None = None
        self._built = False

    def files(self, folder: str) -> tuple[str, ...]:
        known = self._folders.get(folder)
        return known.files if known is not None else ()

    def folders(self) -> Iterable[str]:
        return self._folders.keys()

    def refresh(self) -> set[str]:
        """Bring the index up to date; the folders whose files changed (all of them
        the first time), removed folders included."""
        exclude = _mtime(os.path.join(self.root, _EXCLUDE))
        if not self._built or exclude != self._exclude:
            self._built, self._exclude = True, exclude
            before = set(self._folders)
            self._folders.clear()
            return before | self._walk("", self.workspace.walker(sizes=False))
        stale = [rel for rel, known in self._folders.items() if known.moved()]
        changed: set[str] = set()
        if stale:
            walker = self.workspace.walker(sizes=False)
            for rel in sorted(stale, key=len):  # a parent first: it may drop its children
                if rel in self._folders:
                    changed |= self._update(rel, walker)
        return changed

    def _path(self, rel: str) -> str:
        return os.path.join(self.root, rel) if rel else self.root

    def _list(self, rel: str, walker: Walker) -> _Folder | None:
        """One folder as it is now, its times taken before it is read (a change while
        it is read shows at the next refresh); None when it cannot be opened."""
        path = self._path(rel)
        mtime, rules = _mtime(path), _mtime(path + "/.gitignore")
        files, folders = [], []
        try:
            for entry in walker.folder(rel):
                if not entry.is_dir:
                    files.append(entry.rel)
                elif not entry.is_link:
                    folders.append(entry.rel)
        except OSError:
            return None
        return _Folder(path, mtime, rules, tuple(files), tuple(folders))

    def _walk(self, rel: str, walker: Walker) -> set[str]:
        """Index `rel` and every folder below it; the folders indexed."""
        done: set[str] = set()
        pending = [rel]
        while pending:
            here = pending.pop()
            listed = self._list(here, walker)
            if listed is None:
                continue
            self._folders[here] = listed
            done.add(here)
            pending += listed.folders
        return done

    def _drop(self, rel: str) -> set[str]:
        """Forget `rel` and everything below it; the folders forgotten."""
        known = self._folders.pop(rel, None)
        if known is None:
            return set()
        gone = {rel}
        for folder in known.folders:
            gone |= self._drop(folder)
        return gone

    def _update(self, rel: str, walker: Walker) -> set[str]:
        known = self._folders[rel]
        if known.rules != _mtime(known.path + "/.gitignore"):  # its rules: all below
            return self._drop(rel) | self._walk(rel, walker)
        listed = self._list(rel, walker)
        if listed is None:
            return self._drop(rel)
        changed = {rel}
        for folder in set(known.folders) - set(listed.folders):
            changed |= self._drop(folder)
        self._folders[rel] = listed
        for folder in set(listed.folders) - set(known.folders):
            changed |= self._walk(folder, walker)
        return changed


class PathGlobs:
    """Gitignore-style globs, relative to the workspace root, matched against files:
    a glob that matches a folder matches every file below it."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._rules = parse_rules("\n".join(patterns).encode("utf-8", "surrogateescape"))
        self._tree = GitIgnore(lambda _folder: NO_RULES, self._rules)

    def folder(self, rel: str) -> bool:
        """Whether the globs take everything in the folder `rel` ('' for the root)."""
        return bool(rel) and self._tree.ignored(rel, is_dir=True)

    def file(self, rel: str) -> bool:
        """Whether the file `rel` itself matches (its folders are `folder`'s business)."""
        return self._rules.verdict(as_bytes_path(rel).split("/"), False) is True

    def matches(self, rel: str) -> bool:
        """Whether the file `rel` matches, its folders included."""
        return self._tree.ignored(rel)

    def count(self, folder: str, files: Iterable[str]) -> int:
        """How many of `files` (all directly in `folder`) match."""
        if self.folder(folder):
            return sum(1 for _ in files)
        return sum(1 for rel in files if self.file(rel))
