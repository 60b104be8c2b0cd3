"""The data a skill scan produces: skills, problems, and the skills left out.

Plain frozen dataclasses so the registry, the tools, the prompt and the CLI all
share one vocabulary and nothing downstream can mutate a scan's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """One finding about one skill: where, what, and how bad."""

    path: Path
    message: str
    severity: Severity = "error"
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class Skill:
    """A usable skill. `root` is the real path of its folder: the only place
    skillchat will ever read its files from."""

    name: str
    description: str
    root: Path
    skill_md: Path
    source_dir: Path
    frontmatter: dict[str, Any] = field(hash=False, compare=False)
    warnings: tuple[Problem, ...] = ()

    @property
    def allowed_tools(self) -> str | None:
        value = self.frontmatter.get("allowed-tools")
        return value if isinstance(value, str) else None


ExclusionReason = Literal["invalid", "shadowed", "over-limit"]


@dataclass(frozen=True)
class Excluded:
    """A skill folder that was found but is not usable, and why."""

    path: Path
    reason: ExclusionReason
    name: str | None = None
    problems: tuple[Problem, ...] = ()
    shadowed_by: Path | None = None

    def summary(self) -> str:
        if self.reason == "shadowed":
            return f"name '{self.name}' already taken by {self.shadowed_by}"
        if self.reason == "over-limit":
            return "over the max_skills limit"
        errors = [p.message for p in self.problems if p.severity == "error"]
        return "; ".join(errors) or "invalid"
