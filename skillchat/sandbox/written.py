"""Which files a run wrote: a cheap before/after look at the writable folders.

Only the scratch folder (and the workspace, when writes were allowed) can change,
so only they are walked. A command decides what is in them, so the walk is
iterative (1,500 nested folders must not hit Python's recursion limit) and bounded:
at most `max_entries` entries looked at in each folder given, at most `max_depth`
folders deep. Past a bound, files are simply not listed and the snapshot says it is
partial; a huge or deep tree costs a bounded time and never fails the run.
The same walk adds up the disk space the scratch folder uses: it is kept with the
chat, so past `Limits.scratch_mb` the result tells the model (nothing is deleted).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.mounts import WORKSPACE_MOUNT
from skillchat.sandbox.layout import PROTECTED, Limits

MAX_LISTED = 200


def snapshot(roots: list[Path], limits: Limits) -> Snapshot:
    """The snapshot of `roots` within the bounds of `limits`."""
    return Snapshot.take(roots, max_entries=limits.scan_entries, max_depth=limits.scan_depth)


def notes(after: Snapshot, written: list[str], scratch: Path, limits: Limits) -> list[str]:
    """What the model and the user should know beyond the output: a listing cut
    short, a scratch folder over its size (said, not enforced by deleting: it is
    the user's data), files written deeper in the workspace under a name the host
    runs code from (`sub/.git/config`: only the top-level ones are read-only)."""
    out = []
    planted = [
        path
        for path in written
        if path.startswith(f"{WORKSPACE_MOUNT}/") and PROTECTED.keys() & set(path.split("/"))
    ]
    if planted:
        out.append(
            "wrote where git, editors or direnv may run code from, check before using "
            "them: " + ", ".join(planted[:5])
        )
    if after.partial:
        out.append(
            f"files_written may be incomplete: past {limits.scan_entries} entries "
            f"or {limits.scan_depth} folders deep, files are not looked at"
        )
    used_mb = after.disk_bytes.get(scratch, 0) / (1024 * 1024)
    if used_mb > limits.scratch_mb:
        out.append(
            f"/scratch uses {used_mb:.0f} MiB, over its {limits.scratch_mb} MiB limit"
            f"{' (at least: not all of it was measured)' if after.partial else ''}: "
            "delete what is no longer needed"
        )
    return out


@dataclass(frozen=True)
class Snapshot:
    """(size, mtime) of the regular files seen under some folders, the disk space
    they use (allocated blocks, per folder given), and whether a bound was hit."""

    files: dict[str, tuple[int, int]]
    disk_bytes: dict[Path, int] = field(default_factory=dict)
    partial: bool = False

    @classmethod
    def take(cls, roots: list[Path], *, max_entries: int, max_depth: int) -> Snapshot:
        files: dict[str, tuple[int, int]] = {}
        disk: dict[Path, int] = {}
        partial = False
        for root in roots:
            used, cut = _walk(root, files, max_entries, max_depth)
            disk[root] = used
            partial = partial or cut
        return cls(files, disk, partial)

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


def _walk(
    root: Path, files: dict[str, tuple[int, int]], max_entries: int, max_depth: int
) -> tuple[int, bool]:
    """Add the regular files under `root` to `files` (symlinks are not followed);
    the bytes allocated to what was seen, and whether a bound cut the walk short."""
    used = 0
    seen = 0
    cut = False
    stack = [(str(root), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > max_entries:
                    return used, True
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                used += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    if depth + 1 < max_depth:
                        stack.append((entry.path, depth + 1))
                    else:
                        cut = True
                elif stat.S_ISREG(st.st_mode):
                    files[entry.path] = (st.st_size, st.st_mtime_ns)
    return used, cut
