"""`skillchat skills update`: fetch the newest commit of each installed skill's ref,
say what changed, and on a yes swap it in.

What changed is said in the terms a user weighs before trusting new code: files
added, removed and edited (from the lock's per-file hashes), scripts that are new,
and `allowed-tools` before and after. A skill edited in place since it was installed
is said too, as the update replaces those edits. The swap renames the old folder
aside and the new one in under the skills folder's lock, then saves the lock; if
anything fails before the lock is saved, the old folder is put back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillchat.errors import InstallError, TrustError
from skillchat.skills.content_hash import content_hash
from skillchat.skills.install import Prepared, folder_lock, prepare
from skillchat.skills.lock import Lock, lock_path, record_for
from skillchat.skills.staged import Candidate
from skillchat.skills.sync import source_of


@dataclass
class Update:
    name: str
    old_commit: str
    prepared: Prepared
    changes: list[str]

    @property
    def skill(self) -> Candidate:
        return self.prepared.skills[0]


def _allowed_tools(root: Path) -> str | None:
    from skillchat.skills.validation import inspect_skill

    found = inspect_skill(str(root), dir_name=root.name, shown_dir=root.name, strict=False)
    return found.frontmatter.get("allowed-tools") if found is not None else None


def changes(here: Path, record: dict[str, Any], new: Candidate) -> list[str]:
    """What the update changes, one line each."""
    old_files: dict[str, str] = record["files"]
    out = [f"+ {p}" for p in sorted(set(new.files_sha) - set(old_files))]
    out += [f"- {p}" for p in sorted(set(old_files) - set(new.files_sha))]
    out += [
        f"~ {p}"
        for p in sorted(set(new.files_sha) & set(old_files))
        if new.files_sha[p] != old_files[p]
    ]
    out += [f"new script: {s}" for s in new.scripts if s not in old_files]
    # a folder swapped for a link (a clone can hold one) is not read: it may point
    # at a folder of the user's, which the summary must not show
    folder = here.is_dir() and not here.is_symlink()
    before = _allowed_tools(here) if folder else None
    if before != new.allowed_tools:
        out.append(f"allowed-tools: {before or 'none'} -> {new.allowed_tools or 'none'}")
    try:
        edited = not folder or content_hash(here) != record["digest"]
    except TrustError:  # a link out of it, or over the bounds: edited too
        edited = True
    if edited:
        out.append("edited here since installed: those edits are replaced")
    return out


def plan(target: Path, names: list[str], work: Path) -> tuple[list[Update], list[str]]:
    """Fetch each named (default: every) locked skill at its ref's newest commit;
    the updates to make, and a line for each skill already up to date."""
    lock = Lock.load(lock_path(target))
    unknown = [n for n in names if n not in lock.skills]
    if unknown:
        raise InstallError(f"not installed in {target} by skillchat: {', '.join(unknown)}")
    updates, current = [], []
    for i, name in enumerate(names or sorted(lock.skills)):
        record = lock.skills[name]
        if not record["commit"]:
            current.append(f"{name}: from a local folder; remove and add it again to update")
            continue
        (sub := work / str(i)).mkdir()
        prepared = prepare(source_of(record, record["ref"]), sub, [], False)
        skill = prepared.skills[0]
        if skill.refusals:
            raise InstallError(f"{name}: {skill.refusals[0]}")
        if prepared.commit == record["commit"] and skill.digest == record["digest"]:
            current.append(f"{name}: up to date ({record['commit'][:12]})")
            continue
        updates.append(
            Update(name, record["commit"], prepared, changes(target / name, record, skill))
        )
    return updates, current


def apply(target: Path, updates: list[Update]) -> None:
    """Swap each updated skill in and save the lock; the old folders are put back
    if anything fails first."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with folder_lock(target):
        lock = Lock.load(lock_path(target))
        staging = Path(tempfile.mkdtemp(dir=target, prefix=".skillchat-update-"))
        swapped: list[str] = []
        try:
            for u in updates:
                shutil.copytree(u.skill.staged, staging / "new" / u.name, symlinks=True)
                old = lock.skills[u.name]
                lock.skills[u.name] = record_for(
                    staging / "new" / u.name,
                    source=old["source"],
                    ref=old["ref"],
                    commit=u.prepared.commit,
                    path=old["path"],
                    installed_at=now,
                )
            (staging / "old").mkdir()
            for u in updates:
                if os.path.lexists(target / u.name):
                    os.rename(target / u.name, staging / "old" / u.name)
                swapped.append(u.name)
                os.rename(staging / "new" / u.name, target / u.name)
            lock.save()
        except BaseException:
            for name in swapped:
                shutil.rmtree(target / name, ignore_errors=True)
                if os.path.lexists(staging / "old" / name):
                    os.rename(staging / "old" / name, target / name)
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
