"""The user's workspace: a project folder whose text files the model may read.

    workspace = Workspace.open("~/src/app")       # WorkspaceError if not a folder
    text = workspace.read("src/main.py", limit=2_000_000)

Every read goes through `skillchat/safe_io/read.py` (`read_contained`): the same lexical and
real-path containment, regular-files-only, binary and size rules as skill files.
On top of them the workspace refuses, before touching the file:

- hidden paths: any segment starting with '.' (`.env`, `.git/config`, `.ssh/...`);
- paths the workspace's `.gitignore` files (root and nested ones) and its
  `.git/info/exclude` ignore, and everything below a `.gitignore` that cannot be
  read (fail closed: ignore.py).

`list_files` and `search_files` walk the same policy (walk.py, `Workspace.walker`),
so the three tools never disagree about what the model may see.

Both are checked on the path as asked and on its real path after symlinks, so a link
named `notes.txt` pointing at `.env` is refused too. Both refusals are
`PERMISSION_DENIED` with a message saying why, rather than `NOT_FOUND`: the checks
are lexical (they say nothing about whether the file exists), and "not found" would
make the model tell the user a file is missing when it is only off limits.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.errors import (
    FileAccessError,
    IgnoreFileError,
    WorkspaceError,
)
from skillchat.safe_io.read import (
    Container,
    FileText,
    normalise_relative_path,
    read_contained,
    read_text_or_image,
)
from skillchat.safe_io.walk import is_inside

if TYPE_CHECKING:  # the walk loads at the first listing or read, not at start
    from skillchat.safe_io.images import Image, ImageLimits
    from skillchat.workspace.walk import Walker

LABEL = "workspace"
# Completion lists at most this many entries of one folder.
MAX_ENTRIES = 1000


def hidden_segment(rel: str) -> str | None:
    """The first segment of `rel` that starts with '.', if any."""
    return next((part for part in rel.split("/") if part.startswith(".")), None)


@dataclass(frozen=True)
class Workspace:
    """A workspace folder, by its real path; `name` is what the model is told."""

    root: Path

    @classmethod
    def open(cls, path: str | Path) -> Workspace:
        """The workspace at `path` (`~` expanded, symlinks resolved)."""
        shown = str(path)
        real = Path(os.path.realpath(Path(path).expanduser()))
        if not real.exists():
            raise WorkspaceError(f"workspace '{shown}' does not exist")
        if not real.is_dir():
            raise WorkspaceError(f"workspace '{shown}' is not a folder")
        if not os.access(real, os.R_OK | os.X_OK):
            raise WorkspaceError(f"workspace '{shown}' is not readable")
        return cls(real)

    @property
    def name(self) -> str:
        """The folder's name, never its absolute path: the provider does not need to
        know the user's home layout, and the tool takes relative paths anyway."""
        return self.root.name or str(self.root)

    @property
    def container(self) -> Container:
        """The container every workspace read goes through, with the policy attached."""
        return Container(self.root, LABEL, LABEL, allow=self.check)

    def walker(
        self,
        *,
        deadline: float | None = None,
        max_entries: int | None = None,
        sizes: bool = True,
    ) -> Walker:
        """A walk of this workspace under its rules, for one tool call (at most
        `max_entries` entries, MAX_WALK_ENTRIES by default)."""
        from skillchat.workspace.walk import MAX_WALK_ENTRIES, Walker

        limit = MAX_WALK_ENTRIES if max_entries is None else max_entries
        return Walker(str(self.root), deadline=deadline, max_entries=limit, sizes=sizes)

    def check(self, rel: str, *, walker: Walker | None = None, is_dir: bool = False) -> None:
        """Refuse (FileAccessError) a hidden or git-ignored relative path."""
        if (segment := hidden_segment(rel)) is not None:
            raise FileAccessError(
                "PERMISSION_DENIED",
                f"File '{rel}' is hidden ('{segment}' starts with '.'); hidden files and "
                "folders of the workspace are not readable",
            )
        ignore = (walker or self.walker()).ignore
        try:
            ignored = ignore.ignored(rel, is_dir=is_dir)
        except IgnoreFileError as exc:
            folder = f"'{exc.folder}/'" if exc.folder else "the workspace"
            raise FileAccessError(
                "PERMISSION_DENIED",
                f"File '{rel}' cannot be served: the workspace's '{exc.file}' cannot be read "
                f"({exc.reason}), so nothing in {folder} is served until it can be",
            ) from None
        if ignored:
            raise FileAccessError(
                "PERMISSION_DENIED",
                f"File '{rel}' is ignored by the workspace's .gitignore; ignored files "
                "are not readable",
            )

    def entries(self, folder: str) -> list[str]:
        """The readable-looking names in `folder` ('' for the root), sorted, folders
        with a trailing '/': what `@path` completion offers. Hidden and ignored
        entries and links leading out are left out; a folder the rules refuse has
        none."""
        walker = self.walker(max_entries=MAX_ENTRIES)
        try:
            rel = normalise_relative_path(folder, self.container) if folder.strip("/") else ""
            if rel:
                self.check(rel, walker=walker, is_dir=True)
            return [e.name + ("/" if e.is_dir else "") for e in walker.folder(rel)]
        except (FileAccessError, OSError):
            return []

    def read(
        self, rel: object, *, limit: int, offset: int = 0, walker: Walker | None = None
    ) -> FileText:
        """The text of `rel` under every rule, at most `limit` bytes of it from `offset`;
        a walk passes its walker so each `.gitignore` is read once for all its reads."""
        return read_contained(self._container(walker), rel, limit=limit, offset=offset)

    def read_any(
        self, rel: object, *, limit: int, offset: int = 0, images: ImageLimits
    ) -> FileText | Image:
        """`read`, an image (PNG, JPEG, GIF, WebP by its bytes) read as one."""
        container = self._container(None)
        return read_text_or_image(container, rel, limit=limit, offset=offset, images=images)

    def _container(self, walker: Walker | None) -> Container:
        allow = self.check if walker is None else functools.partial(self.check, walker=walker)
        return Container(self.root, LABEL, LABEL, allow=allow)

    def relative(self, path: str | Path) -> str:
        """A user-typed path (absolute, `~`, or relative to the workspace) as the
        workspace-relative path to read. Absolute paths must lie inside the workspace:
        only the user may name files that way, never the model."""
        given = Path(path).expanduser()
        if not given.is_absolute():
            return str(path)
        # The folders resolved (the workspace's own path may go through a link), the
        # file's name kept: a symlinked file is judged by read_contained, as the link.
        real = os.path.join(os.path.realpath(given.parent), given.name)
        if not is_inside(real, str(self.root)):
            raise FileAccessError(
                "PATH_TRAVERSAL", f"'{path}' is outside the workspace ({self.root})"
            )
        return os.path.relpath(real, self.root).replace(os.sep, "/")
