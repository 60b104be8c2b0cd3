"""Trust: which skills' `allowed-tools` may pre-approve commands.

A skill in a project folder (`./skills`, `./.agents/skills`, `./.claude/skills`, or
any other directory given with `--skills-dir` or in the config) came with whatever
the user cloned or downloaded, so it starts **untrusted**: it is listed and read
like any text, but its `allowed-tools` pre-approve nothing and every command it
asks for needs a yes. Skills in the user-level folders (`~/.agents/skills`,
`~/.claude/skills`, `<user config dir>/skills`) were put there by the user and are
always trusted. Why every non-user folder and not only those under the current
directory: a folder named on the command line is as likely a fresh download as a
clone is; trusting it is one command.

Trust is bound to content: `skillchat skills trust NAME` records the SHA-256 of the
skill folder; any later change (an edited script, a new file, a changed symlink
target, a file made executable) makes the state "changed since trusted", which
counts as untrusted until trusted again.

**What the hash covers**: every entry under the skill's real root, not only
SKILL.md and `scripts/`, because a command may run or import any file of the folder
(`python -m scripts.x` imports siblings, templates are rendered, `references/` may
hold code). Entries are taken depth-first in name order; a regular file contributes
its path, its executable bit and its bytes; a symlink its path and target text;
anything else (a FIFO, a socket) its path and kind, without being opened.

**Symlinks** must stay inside the skill's folder: each one is followed component by
component (every `..`, every further link) and must never step out of the folder;
then what it points to is an entry of the folder, hashed at its own path, so editing
it is a change. A link that leaves the folder (an absolute target, or one that
climbs out, even to a sibling skill in the same skills folder) makes the skill
impossible to trust (`TrustError`: "untrusted", or "changed since trusted" when it
was trusted before). Why refuse rather than hash the target: in the sandbox each
skill is mounted alone at /skills/NAME, so a link out of it resolves there to
whatever is mounted under that path (another skill, maybe a different folder than
on the host, or nothing). The host file's hash would not vouch for what runs.

**Installed skills** (`skillchat skills add`) are also checked against the lock they
were installed with (skills/lock.py), wherever they are: one that no longer matches
its locked digest is `DRIFTED` ("changed since installed"), untrusted even in a
user-level folder, until the user accepts it as it is now with `skills trust NAME`
(bound to that content and to that lock entry) or reinstalls it.

Bounded: past `MAX_ENTRIES` entries or `MAX_BYTES` bytes a folder cannot be
trusted (`TrustError`), and a trusted folder that grows past them reads as changed.
A `__pycache__` written by running a script on the host is a change too.

**Skills served over MCP** (skills/remote.py) start untrusted too; their trust is
bound to the server's label, the skill's URI and the digest of its manifest (every
file's URI and `sha256:` digest, as the server lists them): a server that changes,
adds or removes a file makes the state "changed since trusted".

**The store** is `<user data dir>/trust.json` (`{"version": 1, "skills": {root:
{"name", "sha256", "trusted_at"}}}`, keyed by the skill's real path so a same-named
skill elsewhere is not trusted by accident), private (0600), replaced atomically.
A store that is unreadable, not ours, writable by others or not what we wrote
means "nothing trusted": one line in `TrustStore.problem`, never a crash, and the
next `trust` rewrites it.

**Speed**: `skills list` shows the state of every skill, so only project-level
skills that have an entry in the store are hashed; the rest need no I/O at all.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from skillchat.config import BUNDLED_SKILLS, user_data_dir, user_skill_dirs
from skillchat.errors import TrustError
from skillchat.skills.model import Skill
from skillchat.skills.records import skill_records

MAX_ENTRIES = 2_000
MAX_BYTES = 50_000_000
MAX_STORE_BYTES = 5_000_000
STORE_VERSION = 1
_CHUNK = 1 << 16


class TrustState(StrEnum):
    """A skill's trust, as `skills list` prints it in plain and JSON form."""

    USER = "user-level"  # in a user-level folder: always trusted
    BUNDLED = "bundled"  # ships with skillchat: trusted as skillchat itself is
    TRUSTED = "trusted"  # trusted by the user, unchanged since
    UNTRUSTED = "untrusted"  # project-level, never trusted
    CHANGED = "changed"  # trusted once, but the folder changed since: untrusted
    DRIFTED = "drifted"  # installed with a lock, changed since: untrusted (skills/lock.py)

    @property
    def trusted(self) -> bool:
        return self in (TrustState.USER, TrustState.BUNDLED, TrustState.TRUSTED)

    def describe(self) -> str:
        """The state in words, for tables and messages."""
        return {
            TrustState.USER: "trusted (user-level)",
            TrustState.BUNDLED: "trusted (bundled)",
            TrustState.TRUSTED: "trusted",
            TrustState.UNTRUSTED: "untrusted",
            TrustState.CHANGED: "changed since trusted",
            TrustState.DRIFTED: "changed since installed",
        }[self]


def default_store_path() -> Path:
    return user_data_dir() / "trust.json"


def content_hash(root: Path, files: dict[str, str] | None = None) -> str:
    """SHA-256 of a skill folder's entries (see the module doc for what counts).

    With `files`, also fills it with each regular file's own SHA-256 by relative
    path, read in the same pass: the lock of installed skills (skills/lock.py)
    records both, so its folder digest is this very function's.
    Raises TrustError when the folder is over the bounds or cannot be read.
    """
    import hashlib  # here, not at the top: `skills list` hashes only trusted skills

    digest = hashlib.sha256(b"skillchat-trust-1\0")
    budget = {"entries": MAX_ENTRIES, "bytes": MAX_BYTES}

    pending = [(str(root), b"")]  # folders still to hash, deepest-first (no recursion limit)
    while pending:
        folder, rel = pending.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            raise TrustError(f"{folder}: cannot list: {exc.strerror or exc}") from None
        subfolders = []
        for entry in entries:
            budget["entries"] -= 1
            if budget["entries"] < 0:
                raise TrustError(f"{root}: more than {MAX_ENTRIES:,} files to hash")
            name = rel + os.fsencode(entry.name)
            try:
                if entry.is_symlink():
                    target = os.fsencode(os.readlink(entry.path))
                    if not _stays_inside(str(root), os.fsdecode(name)):
                        raise TrustError(
                            f"{entry.path}: a symlink to {os.fsdecode(target)!r} does not stay "
                            "inside the skill folder; trust covers only the skill's own files"
                        )
                    digest.update(b"L\0" + name + b"\0" + target + b"\0")
                elif entry.is_dir(follow_symlinks=False):
                    digest.update(b"D\0" + name + b"\0")
                    subfolders.append((entry.path, name + b"/"))
                elif entry.is_file(follow_symlinks=False):
                    own = _hash_file(entry.path, name, digest, budget)
                    if files is not None:
                        files[os.fsdecode(name)] = own
                else:
                    digest.update(b"O\0" + name + b"\0")
            except OSError as exc:  # it changed or vanished while being read
                raise TrustError(f"{entry.path}: cannot read: {exc.strerror or exc}") from None
        pending.extend(reversed(subfolders))
    return digest.hexdigest()


def _stays_inside(root: str, link: str, max_links: int = 40) -> bool:
    """Whether the path `link` (relative to `root`) resolves without ever leaving
    `root`: read as the kernel reads it, one component at a time, each symlink's
    target spliced in where the link was (at most `max_links` of them, as a loop
    must end). `..` at the top of `root` or an absolute target is leaving it."""
    here: list[str] = []  # real folders below root, where the walk stands
    pending = list(reversed(link.split("/")))
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if not here:
                return False
            here.pop()
            continue
        path = os.path.join(root, *here, name)
        if not os.path.islink(path):
            here.append(name)
            continue
        max_links -= 1
        target = os.readlink(path)
        if max_links < 0 or target.startswith("/"):
            return False
        pending.extend(reversed(target.split("/")))
    return True


def _hash_file(path: str, name: bytes, digest: Any, budget: dict[str, int]) -> str:
    """One regular file: its name, executable bit, size, and exactly that many bytes
    (opened without following a link or blocking on a FIFO swapped in meanwhile).
    Returns the SHA-256 of the file's bytes alone."""
    import hashlib

    own = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TrustError(f"{path}: changed while being hashed")
        budget["bytes"] -= info.st_size
        if budget["bytes"] < 0:
            raise TrustError(f"{path}: the skill folder is over {MAX_BYTES:,} bytes to hash")
        mode = b"x" if info.st_mode & 0o111 else b"-"
        digest.update(b"F\0" + name + b"\0" + mode + str(info.st_size).encode() + b"\0")
        left = info.st_size
        while left > 0 and (chunk := fh.read(min(_CHUNK, left))):
            digest.update(chunk)
            own.update(chunk)
            left -= len(chunk)
        if left:
            raise TrustError(f"{path}: changed while being hashed")
    return own.hexdigest()


@dataclass
class TrustStore:
    """The user's trusted skills. Load it, ask `state`, change it with `trust` /
    `revoke`, then `save`. `problem` is set when the file on disk was unusable."""

    path: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)
    problem: str | None = None
    _user_dirs: frozenset[str] = field(
        default_factory=lambda: frozenset(_real(d) for d in user_skill_dirs()), repr=False
    )
    _is_user: dict[Path, bool] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, path: Path | None = None) -> TrustStore:
        """Read the store; a missing file is empty, a bad one is empty plus a problem."""
        path = path or default_store_path()
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            return cls(path, problem=_unusable(path, exc.strerror or str(exc)))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STORE_BYTES:
                return cls(path, problem=_unusable(path, "not a trust store"))
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return cls(path, problem=_unusable(path, "not private to you"))
            with os.fdopen(fd, "rb", closefd=False) as fh:
                raw = fh.read(MAX_STORE_BYTES + 1)
        finally:
            os.close(fd)
        entries = _parse(raw)
        if entries is None:
            return cls(path, problem=_unusable(path, "corrupt"))
        return cls(path, entries)

    def is_user_level(self, skill: Skill) -> bool:
        """Whether the skill was found in one of the user-level skills directories."""
        if skill.source_dir not in self._is_user:
            self._is_user[skill.source_dir] = _real(str(skill.source_dir)) in self._user_dirs
        return self._is_user[skill.source_dir]

    def state(self, skill: Skill) -> TrustState:
        """The skill's trust now; hashes the folder only when there is a record.
        An installed skill that no longer matches its lock is untrusted wherever it
        is, unless the user accepted its content as it is now (`skills trust`)."""
        from skillchat.skills.lock import drift_of, locked_record

        if skill.remote is not None:  # served over MCP: bound to its manifest's digest
            if _key(skill) not in self.entries:
                return TrustState.UNTRUSTED
            return TrustState.TRUSTED if self._same_as_record(skill) else TrustState.CHANGED
        if _real(str(skill.source_dir)) == _real(str(BUNDLED_SKILLS)):  # came with skillchat
            return TrustState.BUNDLED
        if drift_of(skill) is not None:
            locked = locked_record(skill)
            record = self.entries.get(str(skill.root), {})
            accepted = locked is not None and record.get("accepted_lock") == locked["digest"]
            return (
                TrustState.TRUSTED
                if accepted and self._same_as_record(skill)
                else (TrustState.DRIFTED)
            )
        if self.is_user_level(skill):
            return TrustState.USER
        if str(skill.root) not in self.entries:
            return TrustState.UNTRUSTED
        return TrustState.TRUSTED if self._same_as_record(skill) else TrustState.CHANGED

    def _same_as_record(self, skill: Skill) -> bool:
        record = self.entries.get(_key(skill))
        if record is None:
            return False
        try:
            return _content_of(skill) == record["sha256"]
        except TrustError:
            return False

    def has_record(self, skill: Skill) -> bool:
        """Whether the user trusted it once (whatever it is now)."""
        return _key(skill) in self.entries

    def is_trusted(self, skill: Skill) -> bool:
        return self.state(skill).trusted

    def trust(self, skill: Skill) -> str:
        """Record the skill's current content as trusted; returns its hash. For an
        installed skill that drifted from its lock, this accepts the change, for
        that lock entry only: a lock edited afterwards is not accepted with it."""
        from datetime import UTC, datetime

        from skillchat.skills.lock import drift_of, locked_record

        sha = _content_of(skill)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        entry = {"name": skill.name, "sha256": sha, "trusted_at": now}
        if drift_of(skill) is not None and (locked := locked_record(skill)) is not None:
            entry["accepted_lock"] = locked["digest"]
        self.entries[_key(skill)] = entry
        return sha

    def revoke(self, skill: Skill) -> bool:
        """Forget the skill's trust; False when it had none."""
        return self.entries.pop(_key(skill), None) is not None

    def save(self) -> None:
        """Write the store atomically, private to the user (0600 in a 0700 folder)."""
        import tempfile

        doc = {"version": STORE_VERSION, "skills": dict(sorted(self.entries.items()))}
        data = json.dumps(doc, indent=1, ensure_ascii=False).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise TrustError(f"{self.path}: cannot save trust: {exc.strerror or exc}") from None
        self.problem = None


def _key(skill: Skill) -> str:
    """The store's key: the real folder, or for a served skill its server and URI
    (its folder is a session's cache)."""
    if skill.remote is not None:
        return f"{skill.remote.origin} {skill.remote.uri}"
    return str(skill.root)


def _content_of(skill: Skill) -> str:
    """What trust is bound to: the folder's hash, or a served skill's manifest digest."""
    return skill.remote.manifest_digest if skill.remote is not None else content_hash(skill.root)


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _unusable(path: Path, why: str) -> str:
    return f"{path}: trust store is {why}; no skill is trusted until you trust it again"


def _parse(raw: bytes) -> dict[str, dict[str, str]] | None:
    """The entries of a store file, or None when it is not one we wrote."""
    return skill_records(raw, STORE_VERSION, _valid_entry)


def _valid_entry(record: dict[str, Any]) -> bool:
    return isinstance(record.get("sha256"), str) and all(
        isinstance(v, str) for v in record.values()
    )


def needing_trust(store: TrustStore, skills: Iterable[Skill]) -> list[tuple[Skill, TrustState]]:
    """The skills (in the given order) that are not trusted now, with their state."""
    states = ((skill, store.state(skill)) for skill in skills)
    return [(skill, state) for skill, state in states if not state.trusted]


def apply_trust(store: TrustStore, skill: Skill, *, revoke: bool = False) -> str:
    """Trust (or, with `revoke`, untrust) one skill in `store`, not yet saved;
    returns the line to show. Raises TrustError when the folder cannot be hashed."""
    if store.state(skill) is TrustState.USER:
        return f"{skill.name}: user-level, always trusted"
    if store.state(skill) is TrustState.BUNDLED:
        return f"{skill.name}: bundled with skillchat, always trusted"
    if revoke:
        done = store.revoke(skill)
        return f"{skill.name}: " + ("trust revoked" if done else "was not trusted")
    before = store.state(skill)
    sha = store.trust(skill)
    verb = "already trusted" if before is TrustState.TRUSTED else "trusted"
    where = _key(skill) if skill.remote is not None else skill.root  # not the cache's folder
    return f"{skill.name}: {verb} (sha256 {sha[:12]}…, {where})"
