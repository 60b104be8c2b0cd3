"""`skillchat skills validate [PATH...]`: every skill under the given paths, checked.

What a path may be (a skill folder, a folder of skills, a project's root, a
SKILL.md) and how each becomes reports is its own concern, apart from the rules
one SKILL.md is checked against (skills/validation.py), which discovery applies
too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skillchat.skills.folders import SkillDir, list_skill_dirs
from skillchat.skills.frontmatter import SKILL_MD_NAMES
from skillchat.skills.model import Problem
from skillchat.skills.validation import Inspection, inspect_skill

# The project skill folders discovery reads, relative to a project's root.
PROJECT_SKILL_DIRS = ("skills", ".agents/skills", ".claude/skills")


@dataclass(frozen=True)
class SkillReport:
    """Every problem found in one skill folder (or one path that holds no skill).

    `path` is the skill folder as the user would recognise it (not resolved);
    `name` is the frontmatter name when it could be read; each Problem carries the
    file, the line when known, a one-line message and its severity.
    """

    path: Path
    name: str | None
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        return not self.errors


def _report(inspection: Inspection, folder: Path) -> SkillReport:
    return SkillReport(folder, inspection.name, inspection.problems)


def _path_problem(path: Path, message: str) -> SkillReport:
    return SkillReport(path, None, (Problem(path, message),))


def _validate_folder(folder: Path, *, strict: bool, missing_ok: bool) -> list[SkillReport]:
    """A skill folder gives one report; a folder of skills gives one per skill."""
    dir_name = Path(os.path.abspath(folder)).name
    one = inspect_skill(str(folder), dir_name=dir_name, shown_dir=str(folder), strict=strict)
    if one is not None:
        return [_report(one, folder)]
    try:
        children = list_skill_dirs(str(folder))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        return [_path_problem(folder, f"cannot list folder: {reason}")]
    reports = _skills_of(children, strict=strict)
    if not reports:  # a project's root (`validate .`): its skills folders, if any
        for sub in PROJECT_SKILL_DIRS:
            if os.path.isdir(folder / sub):
                reports += _validate_folder(folder / sub, strict=strict, missing_ok=True)
    for child in children if not reports else ():  # a collection of skills directories
        reports += _skills_below(Path(child.path), strict=strict, levels=2)
    if not reports and not missing_ok:
        return [_path_problem(folder, "no skills found: no SKILL.md here or in a subfolder")]
    return reports


def _skills_of(children: list[SkillDir], *, strict: bool) -> list[SkillReport]:
    """The reports of the folders among `children` that hold a SKILL.md."""
    reports = []
    for child in children:
        found = inspect_skill(child.path, dir_name=child.name, shown_dir=child.path, strict=strict)
        if found is not None:
            reports.append(_report(found, Path(child.path)))
    return reports


def _skills_below(folder: Path, *, strict: bool, levels: int) -> list[SkillReport]:
    """The skills among `folder`'s folders, else among theirs, down to `levels`: the
    skills of a collection (`real-skills/SOURCE/SKILL`, `SOURCE/skills/SKILL`), which
    discovery finds one level below a directory named too high, and says so."""
    try:
        children = list_skill_dirs(str(folder))
    except (OSError, ValueError):
        return []  # a folder below the one named: not a skill, so not reported
    reports = _skills_of(children, strict=strict)
    if reports or levels == 1:
        return reports
    for child in children:
        reports += _skills_below(Path(child.path), strict=strict, levels=levels - 1)
    return reports


def validate_paths(
    paths: Iterable[str | os.PathLike[str]], *, strict: bool = False, missing_ok: bool = False
) -> list[SkillReport]:
    """Check every skill under `paths` and report every problem: the engine of
    `skillchat skills validate [PATH...] [--strict]`.

    Each path may be:

    * a skill folder (holds a SKILL.md, or skill.md): one report;
    * a folder of skills, such as a skills directory or `.`: one report per
      non-hidden immediate subfolder holding a SKILL.md, exactly the folders
      discovery would load (nested skills below that are not looked at); a folder
      with none, such as a repository's root, is checked through the project skill
      folders it holds (`skills/`, `.agents/skills/`, `.claude/skills/`), and one
      with none of those either, such as a collection, through the skills one or
      two levels below it (`SOURCE/SKILL`, `SOURCE/skills/SKILL`);
    * a SKILL.md (or skill.md) file: the report of its folder.

    `strict=False` applies discovery's rules: a report with no errors is a skill
    discovery will load (its warnings are kept on the Skill). `strict=True` makes
    unknown keys and badly typed optional fields errors too, as skills-ref does.

    A path that does not exist, a folder holding no skill, and any other file are
    reported as an error (a report with `name=None`), unless `missing_ok`, which
    drops the first two silently: for validating configured directories, some of
    which need not exist. Reports come in the order of `paths`, then by folder
    name; a skill reached twice is reported once. Nothing raises on bad input.

    The caller's exit status is simply `any(not r.ok for r in reports)`.
    """
    reports: list[SkillReport] = []
    for given in paths:
        path = Path(given).expanduser()
        if os.path.isdir(path):
            reports.extend(_validate_folder(path, strict=strict, missing_ok=missing_ok))
        elif path.name in SKILL_MD_NAMES and os.path.isfile(path):
            reports.extend(_validate_folder(path.parent, strict=strict, missing_ok=False))
        elif os.path.lexists(path):
            reports.append(_path_problem(path, "not a skill folder or a SKILL.md file"))
        elif not missing_ok:
            reports.append(_path_problem(path, "path does not exist"))
    return _dedupe(reports)


def _dedupe(reports: list[SkillReport]) -> list[SkillReport]:
    seen: set[str] = set()
    unique = []
    for report in reports:
        key = os.path.realpath(report.path)
        if key not in seen:
            seen.add(key)
            unique.append(report)
    return unique
