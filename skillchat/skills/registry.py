"""Discovery: scan skill directories once and build the immutable registry.

(STUB: being implemented. The interface below is the contract.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillchat.skills.model import Excluded, Skill


@dataclass(frozen=True)
class Registry:
    """The usable skills by name (sorted), plus everything left out and why."""

    skills: dict[str, Skill]
    excluded: tuple[Excluded, ...] = ()
    directories: tuple[Path, ...] = ()

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def names(self) -> list[str]:
        return sorted(self.skills)


def discover(directories: Sequence[Path], *, max_skills: int = 200) -> Registry:
    raise NotImplementedError
