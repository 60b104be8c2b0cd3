"""Which files a run wrote: a cheap before/after look at the writable folders.

Only the scratch folder (and the workspace, when writes were allowed) can change,
so only they are walked; a walk stops at `MAX_ENTRIES` so a huge workspace costs a
bounded time (files past it are simply not listed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MAX_ENTRIES = 20_000
MAX_LISTED = 200


@dataclass(frozen=True)
class Snapshot:
    """(size, mtime) of every regular file under some folders."""

    files: dict[str, tuple[int, int]]

    @classmethod
    def take(cls, roots: list[Path]) -> Snapshot:
        files: dict[str, tuple[int, int]] = {}
        for root in roots:
            for dirpath, dirnames, filenames in os.walk(root):
                for name in filenames:
                    path = os.path.join(dirpath, name)
                    try:
                        st = os.lstat(path)
                    except OSError:
                        continue
                    files[path] = (st.st_size, st.st_mtime_ns)
                if len(files) > MAX_ENTRIES:
                    dirnames.clear()
        return cls(files)

    def changed_since(self, before: Snapshot, mounts: dict[Path, str]) -> list[str]:
        """New or changed files, named as the command saw them (`/scratch/out.txt`)."""
        changed = sorted(p for p, sig in self.files.items() if before.files.get(p) != sig)
        out = []
        for path in changed[:MAX_LISTED]:
            for host, inside in mounts.items():
                rel = os.path.relpath(path, host)
                if not rel.startswith(".."):
                    out.append(f"{inside}/{rel}")
                    break
        return out
