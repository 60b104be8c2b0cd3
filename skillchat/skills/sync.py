"""`skillchat skills sync`: install exactly what a lock says, into a skills folder
that does not have those skills yet (a teammate's clone of a project that commits
its `.agents/skills.lock`).

Each record is fetched at its locked commit (a local folder is copied again) and
its folder digest compared with the lock's. With `frozen`, a commit the source no
longer has, or bytes that hash differently, fail the whole sync before anything is
installed; without it, a missing commit falls back to the record's ref and a
different digest is said and installed, with the lock's record kept as it was: the
skill is "changed since installed", so untrusted, until `update` (which shows the
change and asks) or `skills trust`. A user-level skill is trusted by where it is,
and a source's new owner must not be trusted on a machine whose user never saw it.
A skill already in place with the locked digest is left alone; one in place that
differs is an error (`skills verify` says how; remove it to sync it again).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from skillchat.errors import InstallError
from skillchat.skills.content_hash import content_hash
from skillchat.skills.gitfetch import Source, clean_path, is_url, parse_source
from skillchat.skills.install import Prepared, install, prepare
from skillchat.skills.lock import Lock, lock_path

# What becomes of files that differ from the lock: the lock keeps saying what was
# locked, so the skill is changed since installed, untrusted (user-level ones too,
# trusted by where they are) until the user has seen them.
UNTRUSTED = (
    "installed as changed since installed, untrusted until `skillchat skills update` "
    "(which shows the change and asks) or `skills trust`"
)


def source_of(record: dict[str, Any], at: str | None) -> Source:
    """Where a lock record's skill comes from: a git URL, or a local folder (an
    absolute path, as `skills add` records one). Anything else is refused, as git
    would take a relative path for a folder relative to wherever it runs."""
    source = record["source"]
    if source.startswith("/"):
        return parse_source(source, path=record["path"])
    if not is_url(source):
        raise InstallError(f"{source!r} in the lock is neither a git URL nor a folder")
    return Source(source, None, clean_path(record["path"]), at)


def _check_inside(name: str, record: dict[str, Any], project: Path) -> None:
    """A project lock's source on this machine outside the project, a folder or a
    `file://` repository (the same folder to git): the lock came with the project,
    and copying a folder of the user's (their own private skills) into it, unasked,
    is not what a sync is for. (`update` shows what it would bring and asks.)"""
    source = source_of(record, None)
    if source.local is not None:
        where, folder = str(source.local), str(source.local / source.path)
    elif source.url is not None and urlsplit(source.url).scheme.lower() == "file":
        # As git reads it: the host is dropped, %-escapes are decoded.
        where = folder = unquote(urlsplit(source.url).path)
    else:
        return
    real, root = os.path.realpath(folder), os.path.realpath(project)
    if os.path.commonpath([real, root]) != root:
        raise InstallError(
            f"{name}: its source {where} is a folder outside the project; a project's "
            "lock copies only folders inside it (skills add it yourself if it is yours)"
        )


def _fetch(name: str, record: dict[str, Any], work: Path, frozen: bool) -> tuple[Prepared, str]:
    """The skill as the lock names it, staged under `work`; with a note when it
    is not what the lock says (never with `frozen`: that raises)."""
    note = ""
    try:
        prepared = prepare(source_of(record, record["commit"] or record["ref"]), work, [], False)
    except InstallError as exc:
        if frozen or not record["commit"]:
            raise InstallError(f"{name}: {exc}") from None
        shutil.rmtree(work)
        work.mkdir()
        prepared = prepare(source_of(record, record["ref"]), work, [], False)
        took = record["ref"] or "the default branch"
        note = f"commit {record['commit'][:12]} is gone from the source; took {took}"
    skill = prepared.skills[0]
    if skill.refusals:
        raise InstallError(f"{name}: {skill.refusals[0]}")
    if skill.digest != record["digest"]:
        if frozen:
            raise InstallError(f"{name}: the source's files hash differently from the lock")
        note = "; ".join(
            filter(None, [note, f"its files hash differently from the lock: {UNTRUSTED}"])
        )
    os.rename(skill.staged, skill.staged.with_name(name))
    skill.staged, skill.name = skill.staged.with_name(name), name
    return replace(prepared, skills=[skill]), note


def sync(target: Path, *, frozen: bool, project: Path | None = None) -> list[str]:
    """Install every locked skill missing from `target`; a line per skill. `project`:
    the lock is that project's, which may copy local folders inside it only."""
    lock = Lock.load(lock_path(target))
    lines: list[str] = []
    todo: dict[str, dict[str, Any]] = {}
    for name, record in sorted(lock.skills.items()):
        here = target / name
        if project is not None:
            _check_inside(name, record, project)
        if not os.path.lexists(here):
            todo[name] = record
        elif here.is_dir() and not here.is_symlink() and content_hash(here) == record["digest"]:
            lines.append(f"{name}: in place")
        else:
            raise InstallError(f"{here}: differs from the lock (remove it to sync it again)")
    with tempfile.TemporaryDirectory(prefix="skillchat-sync-") as tmp:
        fetched = []
        for i, (name, record) in enumerate(todo.items()):
            (work := Path(tmp) / str(i)).mkdir()
            fetched.append((name, record, *_fetch(name, record, work, frozen)))
        for name, record, prepared, note in fetched:  # all fetched and checked first
            kept = (
                dict(record)
                if not note
                else {"source": record["source"], "path": record["path"], "ref": record["ref"]}
            )
            differs = prepared.skills[0].digest != record["digest"]
            install(
                prepared,
                target,
                record["ref"],
                relock={name: kept},
                as_locked=[name] if differs else [],
            )
            lines.append(f"{name}: installed" + (f" ({note})" if note else ""))
    return lines
