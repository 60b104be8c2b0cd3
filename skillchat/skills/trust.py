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

**What the hash covers** is skills/content_hash.py's: every entry of the folder,
symlinks that stay inside it, bounded. A trusted project skill whose `[packages]`
entry in the config changes (a package added, a version moved) is "changed since
trusted" too: what it runs with is part of what was trusted.

**Installed skills** (`skillchat skills add`) are also checked against the lock they
were installed with (skills/lock.py), wherever they are: one that no longer matches
its locked digest is `DRIFTED` ("changed since installed"), untrusted even in a
user-level folder, until the user accepts it as it is now with `skills trust NAME`
(bound to that content and to that lock entry) or reinstalls it.

**Skills served over MCP** (skills/remote.py) start untrusted too; their trust is
bound to the server's label, the skill's URI and the digest of its entry (the
frontmatter as listed, and every file's URI and `sha256:` digest): a server that
changes, adds or removes a file, or changes only the listed frontmatter (an
`allowed-tools` added), makes the state "changed since trusted". In a chat, a
served skill counts as trusted only while its content is the one the chat
activated (`trusted_as_activated`): a resumed chat's skill that changed since is
not, until the model reads it again.

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from skillchat.errors import TrustError
from skillchat.safe_io.write import replace_atomically
from skillchat.sections import BUNDLED_SKILLS, user_data_dir, user_skill_dirs
from skillchat.skills.content_hash import content_hash, packages_digest
from skillchat.skills.model import Skill
from skillchat.skills.records import skill_records

MAX_STORE_BYTES = 5_000_000
STORE_VERSION = 1


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


@dataclass
class TrustStore:
    """The user's trusted skills. Load it, ask `state`, change it with `trust` /
    `revoke`, then `save`. `problem` is set when the file on disk was unusable."""

    path: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)
    problem: str | None = None
    # The config's `[packages]` (skill name -> requirements): trust covers them too.
    packages: Mapping[str, Sequence[str]] = field(default_factory=dict)
    _user_dirs: frozenset[str] = field(
        default_factory=lambda: frozenset(_real(d) for d in user_skill_dirs()), repr=False
    )
    _is_user: dict[Path, bool] = field(default_factory=dict, repr=False)

    @classmethod
    def load(
        cls, path: Path | None = None, packages: Mapping[str, Sequence[str]] | None = None
    ) -> TrustStore:
        """Read the store; a missing file is empty, a bad one is empty plus a problem.
        `packages` is the config's `[packages]`, part of what a skill's trust covers."""
        store = cls._read(path or default_store_path())
        store.packages = packages or {}
        return store

    @classmethod
    def _read(cls, path: Path) -> TrustStore:
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
        if record.get("packages_sha256", packages_digest(())) != self._packages(skill):
            return False  # the config's [packages] entry for it changed since
        try:
            return _content_of(skill) == record["sha256"]
        except TrustError:
            return False

    def _packages(self, skill: Skill) -> str:
        return packages_digest(self.packages.get(skill.name, ()))

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
        entry["packages_sha256"] = self._packages(skill)
        if drift_of(skill) is not None and (locked := locked_record(skill)) is not None:
            entry["accepted_lock"] = locked["digest"]
        self.entries[_key(skill)] = entry
        return sha

    def revoke(self, skill: Skill) -> bool:
        """Forget the skill's trust; False when it had none."""
        return self.entries.pop(_key(skill), None) is not None

    def save(self) -> None:
        """Write the store atomically, private to the user (0600 in a 0700 folder)."""
        doc = {"version": STORE_VERSION, "skills": dict(sorted(self.entries.items()))}
        data = json.dumps(doc, indent=1, ensure_ascii=False).encode()
        replace_atomically(self.path, data, TrustError, "cannot save trust")
        self.problem = None


def _key(skill: Skill) -> str:
    """The store's key: the real folder, or for a served skill its server and URI
    (its folder is a session's cache)."""
    if skill.remote is not None:
        return f"{skill.remote.origin} {skill.remote.uri}"
    return str(skill.root)


def _content_of(skill: Skill) -> str:
    """What trust is bound to: the folder's hash, or a served skill's entry's digest."""
    return skill.remote.digest if skill.remote is not None else content_hash(skill.root)


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


def trusted_as_activated(store: TrustStore, skill: Skill, activated: Mapping[str, str]) -> bool:
    """Whether `skill` is trusted in a chat whose served skills were activated with
    the digests `activated` (name -> digest): a served skill only while its content
    is what the chat read when it activated it, and the store trusts it."""
    if skill.remote is not None and activated.get(skill.name) != skill.remote.digest:
        return False
    return store.is_trusted(skill)


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
