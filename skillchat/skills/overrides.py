"""Per-skill overrides that last: how the user wants a skill shown to the model.

    skillchat skills pin|name-only|manual|off|reset NAME [--project]   (and /skills ...)

With many skills the catalog is shortened to fit (prompt.py `build_catalog`); an
override is the user's say over one skill, kept across sessions:

- `pin`: its whole description, first in the catalog, whatever the others lose;
- `name-only`: listed by its name alone (search_skills still finds its description);
- `manual`: as its author's `disable-model-invocation: true` (Claude Code's key): not
  in the catalog, not in search_skills or list_skills, get_skill refuses it; the
  user's `/name` still loads it (and the model may then read it, as for the key);
- `off`: not loadable at all, `Excluded("off")` like a disabled skill: no `/name`,
  no completion, no tool finds it.

**Where.** The user's, `<user config dir>/overrides.toml`, and a project's,
`<project>/.skillchat/overrides.toml` (the project as workspace/project.py finds it:
a git work tree, or a folder in the config's `projects`), one TOML table each:
`[overrides]` then `NAME = "pin"`. The project's wins, with one exception: a project
cannot show the model more than the user allowed, so where the user said `off` the
skill stays off, and where the user said `manual` the project may only make it
`off`. Overrides never bring back a skill left out otherwise (`[skills] disabled`,
`/skills disable`, invalid, shadowed) nor show the model one its author hid.

**Reading** is bounded and never fails a command: a file over `MAX_BYTES`, not a
regular file, not UTF-8 TOML, or not the table above is one warning (a registry
`Problem`) and ignored whole; entries that are no override are ignored with one
line for the file. The project's file is read through no link (neither
`.skillchat` nor the file may be one): a cloned repository could otherwise point it
at another file. **Writing** is the command's alone, whole or not at all
(safe_io/write.py), the file read again under a `flock` of its folder; a file that
cannot be read is not rewritten (its entries would be lost): the command says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from skillchat.errors import SkillError, UsageError
from skillchat.safe_io.read import read_bytes_at
from skillchat.safe_io.write import PRIVATE_DIR, replace_atomically
from skillchat.skills.model import Excluded, Problem
from skillchat.skills.overrides_files import project_file, user_file

if TYPE_CHECKING:
    from skillchat.skills.registry import Registry

Kind = Literal["pin", "name-only", "manual", "off"]
KINDS: tuple[Kind, ...] = get_args(Kind)
Scope = Literal["user", "project"]
TABLE = "overrides"
# Thousands of entries fit; more is no overrides file, and is not read into memory.
MAX_BYTES = 256 * 1024
# How much a kind hides from the model: a project's override applies only where it
# hides at least as much as the user's own (`merged`).
_HIDING = {"manual": 1, "off": 2}
_BY_NAME: dict[str, Kind] = {kind: kind for kind in KINDS}


@dataclass(frozen=True)
class Chosen:
    """One skill's override, and whose file set it."""

    kind: Kind
    scope: Scope

    def shown(self) -> str:
        """As `skills list` shows it: `pin`, or `pin (project)`."""
        return self.kind if self.scope == "user" else f"{self.kind} (project)"


@dataclass(frozen=True)
class OverridesFile:
    """One scope's file: its entries, or why it was not read (`problem`)."""

    path: Path
    scope: Scope
    entries: dict[str, Kind]
    problem: Problem | None = None
    ignored: bool = False  # the whole file: unreadable (`problem` says why)


def _unusable(path: Path, why: str) -> Problem:
    return Problem(path, f"overrides file ignored: {why}", "warning")


def _ignored(path: Path, scope: Scope, problem: Problem) -> OverridesFile:
    return OverridesFile(path, scope, {}, problem, ignored=True)


def _read_raw(path: Path, scope: Scope) -> bytes | None:
    """The file's bytes (at most MAX_BYTES + 1), None when it does not exist; the
    file itself is never opened through a link, nor a project's `.skillchat` folder."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    if scope == "project":
        flags |= os.O_NOFOLLOW
    try:
        folder = os.open(path.parent, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if scope == "project" and os.path.islink(path.parent):
            raise OSError(exc.errno, f"{path.parent.name} is a link") from None
        raise
    try:
        data, _ = read_bytes_at(folder, path.name, limit=MAX_BYTES)
    except FileNotFoundError:
        return None
    finally:
        os.close(folder)
    return data


def _why(exc: OSError, path: Path) -> str:
    if os.path.islink(path):
        return "it is a link"
    return str(exc.strerror or exc)


def read_file(path: Path, scope: Scope) -> OverridesFile:
    """One scope's overrides; never raises for what is on disk."""
    try:
        raw = _read_raw(path, scope)
    except OSError as exc:
        return _ignored(path, scope, _unusable(path, _why(exc, path)))
    if raw is None:
        return OverridesFile(path, scope, {})
    if len(raw) > MAX_BYTES:
        return _ignored(path, scope, _unusable(path, f"over {MAX_BYTES:,} bytes"))
    import tomllib  # only where a file exists: not on every start's path

    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return _ignored(path, scope, _unusable(path, "not UTF-8 TOML"))
    table = doc.get(TABLE, {})
    if not isinstance(table, dict):
        return _ignored(path, scope, _unusable(path, f"[{TABLE}] is not a table"))
    entries: dict[str, Kind] = {}
    bad = []
    for name, kind in table.items():
        if kind in KINDS and name.isprintable():
            entries[name] = kind
        else:
            bad.append(name)
    problem = None
    if bad:
        kinds = ", ".join(KINDS)
        problem = Problem(
            path,
            f"{len(bad)} override(s) ignored, e.g. {bad[0]!r}: each is one of {kinds}",
            "warning",
        )
    return OverridesFile(path, scope, entries, problem)


def merged(user: Mapping[str, Kind], project: Mapping[str, Kind]) -> dict[str, Chosen]:
    """Each skill's override: the project's, unless the user's hides the skill more
    (a project cannot bring back what the user turned off or made manual)."""
    out = {name: Chosen(kind, "user") for name, kind in user.items()}
    for name, kind in project.items():
        mine = user.get(name)
        if mine is None or _HIDING.get(kind, 0) >= _HIDING.get(mine, 0):
            out[name] = Chosen(kind, "project")
    return out


@dataclass(frozen=True)
class Overrides:
    """The user's file and the project's (None outside a project), read once."""

    user: OverridesFile
    project: OverridesFile | None

    @classmethod
    def load(cls, project: Path | None) -> Overrides:
        # The user's file may be a link (a dotfiles manager's): read and written where
        # it leads, so the link stays. A project's never is (`_read_raw`).
        user = read_file(Path(os.path.realpath(user_file())), "user")
        if project is None:
            return cls(user, None)
        return cls(user, read_file(project_file(project), "project"))

    def chosen(self) -> dict[str, Chosen]:
        return merged(self.user.entries, self.project.entries if self.project else {})

    def problems(self) -> tuple[Problem, ...]:
        files = [self.user, self.project]
        return tuple(f.problem for f in files if f is not None and f.problem is not None)


def apply(registry: Registry, chosen: Mapping[str, Chosen]) -> Registry:
    """`registry` with `chosen` applied: `off` skills moved to `excluded`, the rest
    marked (`Skill.override`), read by the catalog and the tools. Idempotent, so the
    served skills joining later (`with_served`) get the same."""
    skills = dict(registry.skills)
    excluded = list(registry.excluded)
    for name, choice in chosen.items():
        skill = skills.get(name)
        if skill is None:
            continue
        if choice.kind == "off":
            del skills[name]
            excluded.append(Excluded(skill.root, "off", name))
        elif skill.override != choice.kind:
            skills[name] = replace(skill, override=choice.kind)
    return replace(registry, skills=skills, excluded=tuple(excluded), overrides=dict(chosen))


def applied(registry: Registry) -> dict[str, str]:
    """The overrides that took effect here, as shown (`pin`, `off (project)`): the
    ones of skills that are in `registry` or that their override turned off."""
    off = {e.name for e in registry.excluded if e.reason == "off"}
    return {
        name: chosen.shown()
        for name, chosen in sorted(registry.overrides.items())
        if name in registry.skills or name in off
    }


def known(registry: Registry, name: str) -> bool:
    """Whether `name` is a skill an override can be about: usable, or turned off."""
    return name in registry.skills or any(
        e.name == name and e.reason == "off" for e in registry.excluded
    )


def write(file: OverridesFile, name: str, kind: Kind | None) -> OverridesFile:
    """Set (or with None, remove) `name`'s override in `file`'s path, written
    atomically. The file is read again under an exclusive `flock` of its folder, so
    two commands at once lose neither's entry; one that cannot be read is left as it
    is (a SkillError says so)."""
    import fcntl

    folder = _folder_ready(file)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        file = read_file(file.path, file.scope)
        if file.ignored and file.problem is not None:
            raise SkillError(
                f"{file.path}: cannot change it, {file.problem.message}; fix or delete it"
            )
        entries = dict(file.entries)
        if kind is None:
            entries.pop(name, None)
        else:
            entries[name] = kind
        import tomli_w

        header = "# skillchat skills pin|name-only|manual|off|reset NAME writes this file.\n"
        data = (header + tomli_w.dumps({TABLE: dict(sorted(entries.items()))})).encode()
        replace_atomically(file.path, data, SkillError, "cannot write the overrides")
    finally:
        os.close(folder)  # and the flock with it
    return replace(file, entries=entries, problem=None)


def _folder_ready(file: OverridesFile) -> int:
    """The file's folder, made if missing, opened (for its lock). A project's
    `.skillchat` is refused if it is a link or not a folder: a cloned repository's
    link would send the write elsewhere."""
    folder = file.path.parent
    try:
        if file.scope == "user":
            folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        with contextlib.suppress(FileExistsError):  # a link there is refused by the open
            folder.mkdir(mode=PRIVATE_DIR | 0o055)
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        why = "it is a link" if os.path.islink(folder) else exc.strerror or str(exc)
        raise SkillError(f"{folder}: cannot write the overrides: {why}") from None


def parse_kind(action: str) -> Kind | None:
    """The override an action sets (`reset`: None); a UsageError for anything else."""
    if action == "reset":
        return None
    kind = _BY_NAME.get(action)
    if kind is not None:
        return kind
    raise UsageError(f"unknown override '{action}': use {', '.join(KINDS)} or reset")


def change(
    overrides: Overrides, registry: Registry, name: str, action: str, *, project: bool
) -> str:
    """`skills ACTION NAME` (`/skills ACTION NAME`): write the user's file (with
    `project`, the project's) and say in one line what the skill is now. A name that
    is no skill here is a SkillError, and so is a `reset` of a name the file lacks.
    Names are shown with `!r`: a control character in one is escaped, not printed."""
    kind = parse_kind(action)
    target = overrides.project if project else overrides.user
    if target is None:
        raise UsageError(
            "--project: not in a project (a git work tree, or a folder in the config's `projects`)"
        )
    if kind is None and name not in target.entries:
        raise SkillError(f"{name!r} has no override in {target.path}")
    if kind is not None and not known(registry, name):
        left = next((e for e in registry.excluded if e.name == name), None)
        if left is not None:  # disabled, invalid, shadowed: an override would not apply
            raise SkillError(f"{name!r} is left out: {left.summary()}")
        raise SkillError(f"no skill named {name!r} (see `skillchat skills list`)")
    written = write(target, name, kind)
    now = replace(overrides, project=written) if project else replace(overrides, user=written)
    said = f"{name!r}: {kind or 'no override'} in {target.path}"
    effective = now.chosen().get(name)
    if effective is not None and (effective.kind, effective.scope) != (kind, target.scope):
        said += f"; the {effective.scope}'s {effective.kind!r} applies"
    return said
