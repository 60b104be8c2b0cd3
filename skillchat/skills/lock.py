"""The lock of installed skills, and the check that what is installed is what runs.

`skillchat skills add` (skills/install.py) writes a `skills.lock` beside the skills
folder it installs into: `~/.agents/skills.lock` for `~/.agents/skills`, and
`.agents/skills.lock` for a project's `.agents/skills` (meant to be committed). It
is JSON, one record per skill name:

    {"version": 1, "skills": {"pdf": {
        "source": "https://github.com/owner/repo", "ref": "v1.2",
        "commit": "<40 hex>", "path": "skills/pdf",
        "digest": "<sha256 of the folder>", "files": {"SKILL.md": "<sha256>", ...},
        "installed_at": "2026-11-26T15:00:00+00:00"}}}

`digest` is trust's own `content_hash` (skills/content_hash.py), so the lock and the trust
store speak of the same bytes; `files` names what changed when it differs.

**Checked at every load.** Every time a skill's trust is asked (`skills list`,
`show`, `ask`, the REPL, `/reload`), a skill found in a folder with a lock entry of
its name is compared with it. Hashing every installed skill on every start would
cost what a `skills list` costs many times over, so a fingerprint of the folder's
entries (path, size, mode, inode, mtime and ctime: a file rewritten with its old
mtime still moves its ctime, which no user can set) is kept with the digest it had
in `<user cache dir>/lock-stat.json`; the folder is hashed again only when the
fingerprint moved. A drifted skill is untrusted (`TrustState.DRIFTED`) and its one
line is in `Registry.problems`.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillchat.errors import LockError, TrustError
from skillchat.safe_io import user_cache
from skillchat.safe_io.write import replace_atomically
from skillchat.skills.model import Problem, Skill
from skillchat.skills.records import skill_records
from skillchat.skills.validation import good_name

if TYPE_CHECKING:
    from skillchat.skills.registry import Registry

LOCK_VERSION = 1
MAX_LOCK_BYTES = 5_000_000
_RECORD_KEYS = ("source", "ref", "commit", "path", "digest", "files", "installed_at")


def lock_path(skills_dir: Path) -> Path:
    """The lock beside `skills_dir`: `X/skills` → `X/skills.lock`."""
    return skills_dir.parent / f"{skills_dir.name}.lock"


@dataclass
class Lock:
    """One lock file's records by skill name; `save` replaces it atomically."""

    path: Path
    skills: dict[str, dict[str, Any]]
    # Installed plugins (skills/plugin_install.py) by name: where each came from and
    # the skills and MCP servers it brought. Absent from a lock without plugins.
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Lock:
        """The lock at `path`; a missing one is empty; a bad one is a LockError."""
        try:
            # Non-blocking: a FIFO (a project's archive may hold one) would wait for a
            # writer, and this open runs at every start in the project.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW's answer: it may point anywhere
                raise LockError(f"{path}: the lock is a symlink, not a regular file") from None
            raise LockError(f"{path}: cannot read the lock: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise LockError(f"{path}: the lock is not a regular file")
            raw = fh.read(MAX_LOCK_BYTES + 1)
        skills = _parse(raw)
        if skills is None:
            raise LockError(f"{path}: not a skills lock skillchat can read (edited by hand?)")
        for name in skills:  # a name is a folder beside the lock: never a path
            if not good_name(name):
                raise LockError(
                    f"{path}: {json.dumps(name)} is not a skill name "
                    "(lowercase letters, digits and '-'): the lock cannot be used"
                )
        return cls(path, skills, _plugins(path, raw))

    def save(self) -> None:
        """Replace the lock file whole (safe_io/write.py), readable by all: a project's
        lock is meant to be committed; LockError when it cannot be written."""
        doc: dict[str, Any] = {"version": LOCK_VERSION, "skills": dict(sorted(self.skills.items()))}
        if self.plugins:
            doc["plugins"] = dict(sorted(self.plugins.items()))
        data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
        replace_atomically(self.path, data, LockError, "cannot write the lock", mode=0o644)
        _LOCKS.pop(str(self.path), None)


def _parse(raw: bytes) -> dict[str, dict[str, Any]] | None:
    """The records of a lock file, or None when it is not one skillchat wrote."""
    return skill_records(raw, LOCK_VERSION, _valid_record)


def _plugins(path: Path, raw: bytes) -> dict[str, dict[str, Any]]:
    """The lock's `plugins` records (its skills parsed already): each names its
    skills and servers as lists of strings, or the lock cannot be used."""
    from skillchat.skills.plugins import good_plugin_name

    plugins: dict[str, dict[str, Any]] = json.loads(raw).get("plugins", {})
    ok = isinstance(plugins, dict) and all(
        good_plugin_name(name)
        and isinstance(r, dict)
        and all(isinstance(r.get(k), list) for k in ("skills", "servers"))
        and all(isinstance(n, str) for k in ("skills", "servers") for n in r[k])
        for name, r in plugins.items()
    )
    if not ok:
        raise LockError(f"{path}: its plugins are not records skillchat wrote (edited by hand?)")
    return plugins


def _valid_record(record: dict[str, Any]) -> bool:
    """Every field of the type skillchat writes: a lock is read before anything of it
    is used, so a hand-made one fails here and not halfway through a sync."""
    return (
        set(record) == set(_RECORD_KEYS)
        and all(isinstance(record[k], str) for k in ("source", "path", "digest", "installed_at"))
        and all(record[k] is None or isinstance(record[k], str) for k in ("ref", "commit"))
        and isinstance(record["files"], dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in record["files"].items())
    )


def record_for(root: Path, **fields: Any) -> dict[str, Any]:
    """A lock record of the folder `root` as it is now, with `fields` (source, ref,
    commit, path, installed_at). TrustError when it cannot be hashed."""
    from skillchat.skills.content_hash import content_hash

    files: dict[str, str] = {}
    digest = content_hash(root, files)
    return {**fields, "digest": digest, "files": dict(sorted(files.items()))}


def changed_files(root: Path, record: dict[str, Any]) -> list[str]:
    """What differs from the lock, file by file: `+ new`, `- gone`, `~ edited`, or
    one line saying why the folder cannot be hashed at all (a link out of it)."""
    from skillchat.skills.content_hash import content_hash

    files: dict[str, str] = {}
    try:
        content_hash(root, files)
    except TrustError as exc:
        return [str(exc)]
    locked: dict[str, str] = record["files"]
    out = [f"+ {p}" for p in sorted(set(files) - set(locked))]
    out += [f"- {p}" for p in sorted(set(locked) - set(files))]
    out += [f"~ {p}" for p in sorted(set(files) & set(locked)) if files[p] != locked[p]]
    return out or ["a link, a folder or an executable bit changed"]


# --- the check at load time -------------------------------------------------------

_LOCKS: dict[str, tuple[tuple[int, int, int], Lock | LockError]] = {}
_VERDICTS: dict[str, tuple[str, str | None]] = {}


def _lock_of(skills_dir: Path) -> Lock | LockError | None:
    """The lock beside `skills_dir` (read again only when the file changed), None
    if there is none, its LockError if it cannot be read."""
    path = lock_path(skills_dir)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    key = (info.st_mtime_ns, info.st_size, info.st_ino)
    cached = _LOCKS.get(str(path))
    if cached is None or cached[0] != key:
        try:
            cached = (key, Lock.load(path))
        except LockError as exc:
            cached = (key, exc)
        _LOCKS[str(path)] = cached
    return cached[1]


def locked_record(skill: Skill) -> dict[str, Any] | None:
    """The lock record of `skill`, when it sits where the lock put it."""
    lock = _lock_of(skill.source_dir)
    if not isinstance(lock, Lock) or skill.name not in lock.skills:
        return None
    if Path(os.path.realpath(skill.source_dir / skill.name)) != skill.root:
        return None  # same name, another folder (a hand-made copy): not what was locked
    return lock.skills[skill.name]


def fingerprint(root: Path) -> str:
    """What changes when any entry of the folder changes: lstat of every entry,
    without opening a file. Cheap: no byte of content is read."""
    import hashlib

    digest = hashlib.sha256()
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return ""
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                return ""
            fields = (st.st_size, st.st_mode, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            digest.update(f"{entry.path}\0{fields}\n".encode())
            if stat.S_ISDIR(st.st_mode):
                pending.append(entry.path)
    return digest.hexdigest()


def drift_of(skill: Skill) -> str | None:
    """None when `skill` is not installed with a lock or matches it; else the one
    line saying it changed since it was installed. A lock that cannot be read
    (edited by hand, truncated) vouches for nothing: every skill beside it drifted,
    as the lock may have been broken to hide a change."""
    lock = _lock_of(skill.source_dir)
    if isinstance(lock, LockError):
        return f"{skill.name}: its lock cannot be read ({lock})"
    record = locked_record(skill)
    if record is None:
        return None
    print_ = fingerprint(skill.root)
    key = str(skill.root)
    cache = _stat_cache()
    seen = _VERDICTS.get(key)
    if seen is not None and seen[0] == print_ + record["digest"]:
        return seen[1]
    known = cache.get(key)
    if print_ and known == {"stat": print_, "digest": record["digest"]}:
        verdict: str | None = None
    else:
        from skillchat.skills.content_hash import content_hash

        try:
            same = content_hash(skill.root) == record["digest"]
        except TrustError:
            same = False
        verdict = None if same else f"{skill.name}: changed since installed"
        if same and print_:
            cache[key] = {"stat": print_, "digest": record["digest"]}
            _save_stat_cache(key, cache[key])
    _VERDICTS[key] = (print_ + record["digest"], verdict)
    return verdict


def lock_problems(skills: list[Skill]) -> list[Problem]:
    """One problem line per installed skill that drifted from its lock. Only the
    skills of a folder with a lock beside it are checked: one lstat per folder, not
    two per skill (234 skills and no lock: 2.5 ms of every start before)."""
    locked = {d for d in {s.source_dir for s in skills} if _lock_of(d) is not None}
    lines = ((s, drift_of(s)) for s in skills if s.source_dir in locked)
    return [
        Problem(s.root, f"{line}: untrusted until reinstalled or accepted (skills trust {s.name})")
        for s, line in lines
        if line is not None
    ]


_CACHE: dict[str, dict[str, str]] | None = None
STAT_CACHE = "lock-stat.json"


def _stat_cache() -> dict[str, dict[str, str]]:
    """Fingerprints of installed skills last seen matching their lock (the user
    cache's `lock-stat.json`); a cache only: unreadable means empty, and every skill
    is hashed once more."""
    global _CACHE
    if _CACHE is None:
        doc = user_cache.read(STAT_CACHE)
        _CACHE = doc if isinstance(doc, dict) else {}
    return _CACHE


def _save_stat_cache(key: str, entry: dict[str, str]) -> None:
    """Add `entry` to the file as it is now (another skillchat may have added its
    own); one that cannot be written costs a hash next time, nothing else."""
    user_cache.update(
        STAT_CACHE, lambda doc: {**(doc if isinstance(doc, dict) else {}), key: entry}
    )


def checked(registry: Registry) -> Registry:
    """`registry` with a problem line for each installed skill that drifted."""
    from dataclasses import replace

    drifted = lock_problems(list(registry.skills.values()))
    return replace(registry, problems=(*registry.problems, *drifted)) if drifted else registry
