"""Discovery: scan the skill directories once and build the immutable registry.

The registry is built at start-up (and on `/reload`) from every configured
directory, so it is on the path of every command: it reads only frontmatter
(see frontmatter.py), lists each directory once with `os.scandir`, and resolves a
real path only where a symlink makes it necessary.

Rules, in order:

1. Directories are scanned in precedence order; a missing one is skipped, one that
   cannot be listed is skipped and noted in `Registry.problems`, and so is one named
   a level too high (`--skills-dir ~/proj` for `~/proj/skills`: no skill folder in
   it, skill folders in a folder below it), with where they are.
2. Each non-hidden child folder holding a SKILL.md (else skill.md) is a skill;
   children are taken in name order so every run gives the same result.
3. A skill whose frontmatter breaks a required rule is `Excluded("invalid")`. Unless
   `strict`, a description over 1,024 characters or a `name` that differs from its
   folder only warns, as other clients load such skills (see validation.py); the
   folder name is then the skill's name.
4. Only *usable* skills claim a name: the first one wins, later ones with the same
   (NFKC) name are `Excluded("shadowed")`. An invalid skill shadows nothing, so a
   broken project-level copy does not hide a working user-level one.
5. A skill named in `disabled` (`[skills] disabled`, `/skills disable`) is
   `Excluded("disabled")`, every folder of that name: the user turned the name off.
6. Past `max_skills` usable skills, the rest are `Excluded("over-limit")`, and their
   SKILL.md is not read (its YAML parse is most of discovery's cost: 10,000 skills
   cost ten times 1,000): a folder past the limit is known by its name, which a
   usable skill's must equal, so it is still reported as shadowed or disabled, and
   a broken one as over the limit rather than invalid.
7. The folders `hidden` names in a directory are not looked at: skillchat's own
   test fixtures among its bundled skills are not a user's skills.
8. A directory that is a folder already scanned under another path (the same
   device and inode: `~/.agents/skills` as the project's folder when run from the
   home folder, or a symlinked `~/.claude/skills`) is not scanned again: its skills
   are counted once, where it first came, and shadow nothing.

Codex's `agents/openai.yaml` beside a SKILL.md is read here too (skills/vendor.py),
as what it says decides whether the model may see the skill.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.skills import frontmatter_cache
from skillchat.skills.folders import SkillDir, list_skill_dirs
from skillchat.skills.frontmatter import SKILL_MD_NAMES
from skillchat.skills.model import Excluded, Problem, Skill
from skillchat.skills.stamps import Stamp, folder_stamps
from skillchat.skills.validation import inspect_skill
from skillchat.skills.vendor import read_codex_policy

if TYPE_CHECKING:
    from skillchat.skills.overrides import Chosen


@dataclass(frozen=True)
class Registry:
    """The usable skills by name (sorted), plus everything left out and why.

    `problems` holds directory-level trouble (a skills directory that exists but
    cannot be listed, or holds its skills a level down); per-skill trouble is in
    `excluded` and `Skill.warnings`. `stamps` are the folders' stamps taken just
    before `discover` read them (skills/stamps.py): what the next turn's check
    compares against.
    """

    skills: dict[str, Skill]
    excluded: tuple[Excluded, ...] = ()
    directories: tuple[Path, ...] = ()
    problems: tuple[Problem, ...] = ()
    stamps: dict[str, Stamp] | None = field(default=None, compare=False, repr=False)
    # The user's lasting overrides by skill name (skills/overrides.py `apply`), kept
    # so the skills MCP servers serve later get them too.
    overrides: Mapping[str, Chosen] = field(default_factory=dict, compare=False, repr=False)

    def changed(self) -> bool:
        """Whether a skill folder or SKILL.md changed since this registry was read;
        never for one made without reading folders (no stamps)."""
        return self.stamps is not None and folder_stamps(self.directories) != self.stamps

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def names(self) -> list[str]:
        return sorted(self.skills)

    def model_names(self) -> list[str]:
        """The skills the model may see and load (not hidden from it by their author)."""
        return [name for name in sorted(self.skills) if self.skills[name].model_invocable]

    def left_out(self) -> list[Excluded]:
        """Skills the user may expect but does not get: invalid or over `max_skills`.
        Shadowed and disabled ones are left out by the user's own setup."""
        return [e for e in self.excluded if e.reason in ("invalid", "over-limit")]


def _load_one(found: SkillDir, source_dir: Path, strict: bool) -> Skill | Excluded | None:
    """Inspect one candidate folder: a Skill, an invalid Excluded, or None (no SKILL.md)."""
    inspection = inspect_skill(
        found.real, dir_name=found.name, shown_dir=found.path, strict=False, lenient=not strict
    )
    if inspection is None:
        return None
    if not inspection.ok or inspection.name is None or inspection.description is None:
        return Excluded(Path(found.path), "invalid", inspection.name, inspection.problems)
    root = Path(found.real)
    implicit, warning = read_codex_policy(found.real)
    warnings = inspection.problems if warning is None else (*inspection.problems, warning)
    return Skill(
        name=inspection.name,
        description=inspection.description,
        root=root,
        skill_md=root / inspection.filename,
        source_dir=source_dir,
        frontmatter=inspection.frontmatter,
        warnings=warnings,
        implicit=implicit,
    )


def _holds_skill_md(found: SkillDir) -> bool:
    """Whether a folder has a SKILL.md (or skill.md), without reading it."""
    for name in SKILL_MD_NAMES:
        try:
            os.lstat(f"{found.real}/{name}")
            return True
        except OSError:
            continue
    return False


def _misnamed_skill_md(found: SkillDir) -> Problem | None:
    """A folder with no SKILL.md but a `Skill.md` (or `SKILL.MD`...): said, since a
    case-insensitive filesystem or another client would have loaded it."""
    try:
        names = os.listdir(found.real)
    except OSError:
        return None
    for name in sorted(names):
        if name.lower() == "skill.md" and name not in SKILL_MD_NAMES:
            return Problem(
                Path(found.path) / name,
                "not loaded: the file must be named SKILL.md (or skill.md); rename it",
                "warning",
            )
    return None


def _skills_below(directory: Path, children: Sequence[SkillDir]) -> Problem | None:
    """For a directory none of whose folders is a skill: its folders that hold skill
    folders (the directory was named one level too high), said as one warning. Only
    asked then, so a directory of skills costs nothing more."""
    below = []
    for child in children:
        try:
            if any(_holds_skill_md(grandchild) for grandchild in list_skill_dirs(child.path)):
                below.append(child.path)
        except (OSError, ValueError):
            continue
    if not below:
        return None
    where = ", ".join(below[:3]) + (" …" if len(below) > 3 else "")
    return Problem(
        directory,
        f"no skill folders here, but skills were found one level below, in {where}: "
        "pass that folder to --skills-dir (or [skills] directories)",
        "warning",
    )


def _list(directory: Path) -> tuple[list[SkillDir], Problem | None]:
    """The candidate folders of one directory, in name order."""
    try:
        return list_skill_dirs(str(directory)), None
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        return [], Problem(directory, f"cannot list skills directory: {reason}")


def _once(dirs: Sequence[Path]) -> list[Path]:
    """`dirs` without a folder seen before under another path (`~/.agents/skills` is
    also `./.agents/skills` when run from the home folder; `~/.claude/skills` may be
    a link to it): one folder, scanned at its first, highest-precedence, place, so
    none of its skills shadows itself. A missing folder is kept (listing it says so)."""
    seen: set[tuple[int, int]] = set()
    out = []
    for directory in dirs:
        try:
            st = os.stat(directory)
        except (OSError, ValueError):
            out.append(directory)
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            out.append(directory)
    return out


def discover(
    directories: Sequence[Path | str],
    *,
    max_skills: int = 1000,
    disabled: Collection[str] = (),
    strict: bool = False,
    hidden: Mapping[Path, Collection[str]] | None = None,
) -> Registry:
    """Scan `directories` (highest precedence first) and return the registry.

    Never raises for anything found on disk: every skill folder ends up either in
    `skills` or in `excluded` with its reason. `~` in a directory is expanded.
    """
    dirs = tuple(Path(d).expanduser() for d in directories)
    stamps = folder_stamps(dirs)  # before reading: an edit made meanwhile is seen next turn
    usable: dict[str, Skill] = {}
    listed_at: dict[str, str] = {}
    excluded: list[Excluded] = []
    problems: list[Problem] = []
    for directory in _once(dirs):
        children, problem = _list(directory)
        if problem is not None:
            problems.append(problem)
        skip = (hidden or {}).get(directory, ())
        skill_folders = 0
        for child in children:
            if child.name in skip:
                continue
            path = child.path
            if len(usable) >= max_skills:  # full: the folder's name stands for its skill's
                if not _holds_skill_md(child):
                    continue
                skill_folders += 1
                item: Skill | Excluded | None = None
                name = unicodedata.normalize("NFKC", child.name)
            else:
                item = _load_one(child, directory, strict)
                if item is None:
                    if (misnamed := _misnamed_skill_md(child)) is not None:
                        problems.append(misnamed)
                    continue
                skill_folders += 1
                if isinstance(item, Excluded):
                    excluded.append(item)
                    continue
                name = item.name
            if name in disabled:
                excluded.append(Excluded(Path(path), "disabled", name))
            elif name in usable:
                winner = Path(listed_at[name])
                excluded.append(Excluded(Path(path), "shadowed", name, shadowed_by=winner))
            elif not isinstance(item, Skill):  # past max_skills: known by its name
                excluded.append(Excluded(Path(path), "over-limit", name))
            else:
                usable[name] = item
                listed_at[name] = path
        if not skill_folders and children and (higher := _skills_below(directory, children)):
            problems.append(higher)
    skills = {name: usable[name] for name in sorted(usable)}
    frontmatter_cache.save()  # the next start parses no YAML for these skills
    return Registry(skills, tuple(excluded), dirs, tuple(problems), stamps)


def with_served(
    registry: Registry, served: Sequence[Skill], disabled: Collection[str] = ()
) -> Registry:
    """`registry` plus the skills MCP servers serve (mcp/skills.py): a local skill of
    the same name wins, and so does an earlier server's; the loser is listed as
    shadowed, never silently dropped."""
    usable = dict(registry.skills)
    excluded = list(registry.excluded)
    for skill in served:
        if skill.name in disabled:
            excluded.append(Excluded(skill.root, "disabled", skill.name))
        elif (winner := usable.get(skill.name)) is not None:
            excluded.append(Excluded(skill.root, "shadowed", skill.name, shadowed_by=winner.root))
        else:
            usable[skill.name] = skill
    skills = {name: usable[name] for name in sorted(usable)}
    served_registry = replace(registry, skills=skills, excluded=tuple(excluded))
    if not registry.overrides:
        return served_registry
    from skillchat.skills.overrides import apply

    return apply(served_registry, registry.overrides)
