"""`skillchat skills add`: fetch, look, then install atomically and lock.

Three steps, so that the user sees everything before anything is written:

1. `prepare` fetches the source into a private temporary folder (skills/gitfetch.py:
   nothing of the repository runs), finds its skills (every folder with a SKILL.md
   under the requested path, none inside another), checks the bounds from git's own
   sizes before writing a byte, writes the chosen skills there, and `scan`s each
   (skills/staged.py): what the summary shows and what makes it impossible to install.
2. The CLI shows the summary and asks (skills_add_cmd.py).
3. `install` moves each skill into the skills folder with a rename (a skill is
   there whole or not at all), under an exclusive lock of that folder (two installs
   at once are one after the other), refuses a name already there or in the lock,
   and writes the lock (skills/lock.py) last. Interrupted before the lock is saved,
   every folder it moved in is taken out again.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unicodedata
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillchat.errors import InstallError
from skillchat.skills.content_hash import MAX_BYTES, MAX_ENTRIES
from skillchat.skills.frontmatter import SKILL_MD_NAMES
from skillchat.skills.gitfetch import Source, TreeEntry, clean_path, is_dot_git
from skillchat.skills.lock import Lock, lock_path, record_for
from skillchat.skills.plugins import manifest_of
from skillchat.skills.staged import Candidate, scan

MAX_FILE_BYTES = 10_000_000


@dataclass
class Prepared:
    source: Source
    commit: str | None
    skills: list[Candidate]
    skipped: list[str]  # entries left out of the fetch (submodules), to show
    plugin: Any = None  # a plugin (skills/plugins.py): installed whole, servers and all


def project_skills_dir(root: Path) -> Path:
    """`root/.agents/skills`, where a project's installs go, refused when `.agents` or
    `.agents/skills` is a symlink or not a folder: a clone can hold a link (git keeps
    them) to the user's own skills folder, and what a project sync put there would be
    trusted user-level skills. With neither a link, the folder is inside `root`."""
    target = root / ".agents" / "skills"
    for step in (target.parent, target):
        if os.path.islink(step):
            raise InstallError(
                f"{step} is a symlink (to {os.readlink(step)}): a project's skills stay "
                "in the project; nothing changed"
            )
        if os.path.lexists(step) and not os.path.isdir(step):
            raise InstallError(f"{step} is not a folder: nothing changed")
    return target


def find_skill_folders(paths: list[str]) -> list[str]:
    """The folders (relative, "" for the top) that hold a SKILL.md, outermost only."""
    folders = sorted({os.path.dirname(p) for p in paths if os.path.basename(p) in SKILL_MD_NAMES})
    outer: dict[str, None] = {}  # a folder's ancestors sort before it: each is looked up
    for folder in folders:
        parts = folder.split("/")
        if not any("/".join(parts[:i]) in outer for i in range(len(parts))):
            outer[folder] = None
    return list(outer)


def _choose(folders: list[str], names: list[str], all_: bool) -> list[str]:
    """The folders to install: the named ones, or all. A name two folders share (a
    skill is installed under its folder's name) is refused: which one is meant?"""
    if not folders:
        raise InstallError("no skill (a folder with a SKILL.md) in the source")
    by_name: dict[str, list[str]] = {}
    for f in folders:
        by_name.setdefault(unicodedata.normalize("NFKC", os.path.basename(f)), []).append(f)
    if names:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise InstallError(
                f"no skill named {', '.join(missing)} in the source; it has: {_some(by_name)}"
            )
    elif len(folders) > 1 and not all_:
        raise InstallError(
            f"the source holds {len(folders)} skills ({_some(by_name)}):"
            " name the ones to install, or give --all"
        )
    chosen = [by_name[n] for n in dict.fromkeys(names)] if names else list(by_name.values())
    for twins in chosen:
        if len(twins) > 1:
            raise InstallError(
                f"more than one skill named '{os.path.basename(twins[0])}' in the source "
                f"({', '.join(twins)}): give --path to the one to install"
            )
    return [twins[0] for twins in chosen]


def _some(names: dict[str, list[str]], most: int = 20) -> str:
    """The first `most` names, sorted, for a line a repository of thousands can fill."""
    shown = sorted(names)
    return ", ".join(shown[:most]) + (
        f", … ({len(shown) - most} more)" if len(shown) > most else ""
    )


def _check_bounds(entries: list[TreeEntry]) -> None:
    """Refuse, before writing anything, a fetch over the limits trust can hash."""
    if len(entries) > MAX_ENTRIES:
        raise InstallError(f"more than {MAX_ENTRIES:,} files: over the limit")
    total = 0
    for e in entries:
        clean_path(e.path)  # a `..` or `.git` in a tree someone crafted
        total += e.size or 0
        if (e.size or 0) > MAX_FILE_BYTES:
            raise InstallError(f"{e.path}: {e.size:,} bytes, over the {MAX_FILE_BYTES:,} limit")
    if total > MAX_BYTES:
        raise InstallError(f"{total:,} bytes in all, over the {MAX_BYTES:,} limit")


def _dot_git(folder: str, names: list[str]) -> list[str]:
    """What a copy of a local folder leaves out: a `.git` (its checkout's history)."""
    return [n for n in names if is_dot_git(n)]


def _copy_local(src: Path, dest: Path) -> None:
    """Copy a local folder (its `.git` left out, links kept as links); a named pipe,
    a socket or an unreadable file in it is one line naming it, nothing installed."""
    try:
        shutil.copytree(src, dest, symlinks=True, ignore=_dot_git)
    except shutil.Error as exc:
        where, _, why = exc.args[0][0]
        raise InstallError(f"{where}: cannot be copied ({why})") from None
    except OSError as exc:
        raise InstallError(f"{exc.filename or src}: cannot be copied ({exc.strerror})") from None


def prepare(source: Source, work: Path, names: list[str], all_: bool) -> Prepared:
    """Fetch `source` into `work` (a fresh private folder) and stage the chosen skills."""
    from skillchat.skills import gitfetch

    stage = work / "stage"
    stage.mkdir()
    skipped: list[str] = []
    if source.local is not None:
        top = source.local / source.path if source.path else source.local
        if top.is_symlink() or not top.is_dir():
            raise InstallError(f"{top}: not a folder")
        listed = [
            str(p.relative_to(top))
            for p in top.rglob("*")
            if not any(is_dot_git(part) for part in p.parts)
        ]
        if (manifest := manifest_of(listed)) is not None:
            _copy_local(top, work / "plugin")
            return _plugin(source, None, work / "plugin", manifest, stage, names)
        chosen = _choose(find_skill_folders(listed), names, all_)
        skills = []
        for folder in chosen:
            dest = stage / (os.path.basename(folder) or top.name)
            _copy_local(top / folder, dest)
            skills.append(Candidate(f"{source.path}/{folder}".strip("/"), dest))
        commit = None
    else:
        repo = work / "repo"
        repo.mkdir()
        commit = gitfetch.fetch_commit(source, repo)
        entries = gitfetch.list_tree(repo, commit, source.path)
        skipped = [f"{e.path} (a submodule, not fetched)" for e in entries if e.kind == "commit"]
        blobs = [e for e in entries if e.kind == "blob"]
        if (manifest := manifest_of([e.path for e in blobs])) is not None:
            _check_bounds(blobs)
            gitfetch.write_blobs(repo, blobs, work / "plugin")
            return _plugin(source, commit, work / "plugin", manifest, stage, names, skipped)
        chosen = _choose(find_skill_folders([e.path for e in blobs]), names, all_)
        skills = []
        for folder in chosen:
            last = os.path.basename(source.path or (source.url or "").rstrip("/"))
            name = os.path.basename(folder) or last.removesuffix(".git")
            inside = [e for e in blobs if folder == "" or e.path.startswith(folder + "/")]
            cut = len(folder) + 1 if folder else 0
            mine = [TreeEntry(e.path[cut:], e.mode, e.kind, e.oid, e.size) for e in inside]
            try:
                _check_bounds(inside)
                gitfetch.write_blobs(repo, mine, stage / name)
            except InstallError as exc:
                raise InstallError(f"{name}: {exc}") from None
            skills.append(Candidate(f"{source.path}/{folder}".strip("/"), stage / name))
    for candidate in skills:
        scan(candidate)
    return Prepared(source, commit, skills, skipped)


def _plugin(
    source: Source,
    commit: str | None,
    root: Path,
    manifest: str,
    stage: Path,
    names: list[str],
    skipped: list[str] | None = None,
) -> Prepared:
    """A plugin staged at `root`, its skills staged and scanned as any skill's."""
    from skillchat.skills.plugin_install import stage as stage_plugin

    if names:
        raise InstallError("the source is a plugin, installed whole: name no skills")
    plugin, skills = stage_plugin(root, manifest, stage, source.path)
    for candidate in skills:
        scan(candidate)
    return Prepared(source, commit, skills, skipped or [], plugin)


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock of the skills folder for the length of an install."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def install(
    prepared: Prepared,
    target: Path,
    ref: str | None,
    *,
    relock: dict[str, dict[str, Any]] | None = None,
    as_locked: Collection[str] = (),
) -> list[Path]:
    """Move every staged skill into `target` and lock them; the folders installed.
    A name in `relock` (`skills sync`) may already be in the lock: it keeps that
    record's source, ref, commit, path and install time. A name in `as_locked`
    keeps its record whole: its files differ from it, and the lock goes on saying
    what was locked (the skill is "changed since installed", so untrusted)."""
    relock = relock or {}
    target.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with folder_lock(target):
        lock = Lock.load(lock_path(target))
        for c in prepared.skills:
            if os.path.lexists(target / c.name) or (c.name in lock.skills and c.name not in relock):
                raise InstallError(f"'{c.name}' is already installed in {target}: nothing changed")
        moved: list[Path] = []
        staging = Path(tempfile.mkdtemp(dir=target, prefix=".skillchat-add-"))
        try:
            records: dict[str, dict[str, Any]] = {}
            for c in prepared.skills:
                shutil.copytree(c.staged, staging / c.name, symlinks=True)
                fields = {
                    "source": prepared.source.shown,
                    "ref": ref,
                    "commit": prepared.commit,
                    "path": c.folder,
                    "installed_at": now,
                }
                kept = relock.get(c.name, {})
                fields.update({k: kept[k] for k in fields if k in kept})
                record = record_for(staging / c.name, **fields)
                if record["digest"] != c.digest:
                    raise InstallError(f"{c.name}: changed while being installed")
                if c.name not in as_locked:
                    records[c.name] = record
            for c in prepared.skills:
                os.rename(staging / c.name, target / c.name)
                moved.append(target / c.name)
            lock.skills.update(records)
            lock.save()
        except BaseException:
            for path in moved:
                shutil.rmtree(path, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return moved


def remove(target: Path, name: str) -> None:
    """Take an installed skill out: its lock entry first (so an interrupted remove
    leaves an unlocked folder, never a lock entry pointing at half a folder), then
    the folder, moved aside by rename before it is deleted."""
    if not target.is_dir():
        raise InstallError(f"'{name}' was not installed in {target} by skillchat")
    with folder_lock(target):
        lock = Lock.load(lock_path(target))
        if name not in lock.skills:
            raise InstallError(f"'{name}' was not installed in {target} by skillchat")
        del lock.skills[name]
        lock.save()
        here = target / name
        if os.path.lexists(here):
            aside = Path(tempfile.mkdtemp(dir=target, prefix=".skillchat-remove-"))
            os.rename(here, aside / name)
            shutil.rmtree(aside, ignore_errors=True)
