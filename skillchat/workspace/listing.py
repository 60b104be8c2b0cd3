"""`list_files`' engine: the entries of a workspace folder, or the files a glob selects.

    listing = list_files(workspace, path="src", glob="**/*.py")
    listing.entries        # [Listed("src/cart.py", False, 1834), ...] sorted, capped
    listing.total          # how many matched in all (more than shown when cut)

Without a glob it is one folder's entries (folders with a trailing '/'), like `ls`;
with one, every file below the folder that the glob selects, like `rg --files -g`.
Paths are workspace-relative: what `read_file` takes. Everything hidden, ignored
or leading out is left out by the walk (walk.py), which also bounds the cost: a
folder of 100,000 files is read at most `MAX_WALK_ENTRIES` entries deep, and the
listing says when it was cut and why.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from skillchat.workspace.files import Workspace
from skillchat.workspace.scope import compile_glob, folder_error, resolve_folder

MAX_LISTED = 500
LIST_SECONDS = 10.0


@dataclass(frozen=True)
class Listed:
    """One entry shown: `path` ends with '/' for a folder."""

    path: str
    is_dir: bool
    size: int


@dataclass
class Listing:
    folder: str  # '' for the root
    glob: str | None
    entries: list[Listed]
    total: int
    notes: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return self.total > len(self.entries) or any(n.startswith("stopped") for n in self.notes)


def list_files(
    workspace: Workspace, path: object = None, glob: object = None, *, limit: int = MAX_LISTED
) -> Listing:
    """The listing; FileAccessError (with a tool error code) for bad arguments."""
    walker = workspace.walker(deadline=time.monotonic() + LIST_SECONDS)
    selects = compile_glob(glob, walker)
    folder = resolve_folder(workspace, walker, path)
    base = f"{folder}/" if folder else ""
    real = os.path.join(workspace.root, folder)
    found: list[Listed] = []
    try:
        if os.path.isfile(real) and not os.path.islink(real):
            size = os.stat(real).st_size
            found = [Listed(folder, False, size)] if selects is None else []
        elif selects is None:
            found = [
                Listed(e.rel + "/" * e.is_dir, e.is_dir, e.size) for e in walker.folder(folder)
            ]
        else:
            found = [
                Listed(e.rel, False, e.size)
                for e in walker.files(folder)
                if selects(e.rel[len(base) :])
            ]
    except OSError as exc:
        raise folder_error(exc, folder) from None
    found.sort(key=lambda e: e.path)
    return Listing(
        folder,
        glob if isinstance(glob, str) and glob else None,
        found[:limit],
        len(found),
        walker.report.notes(),
    )
