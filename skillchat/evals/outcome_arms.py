"""The arms of an outcome eval, and what keeps them honest. Two run at once: `with`
and a control, `without` or (with a baseline) `old`.

`with`: the skill as the agent may use it: a copy of its folder without `evals/`
(the expected outputs, assertions and verifier code), so neither get_skill,
read_file_in_skill nor a command at /skills/<name> can read the answers.
`without`: the skill is not in the registry at all: not in the catalog, not
loadable, not mounted in the sandbox. Every other skill, tool, budget and sandbox
rule is the same in both arms.
`old`: a snapshot of the skill before an edit (outcome_baseline.py), staged and
stripped of `evals/` as `with` is, in the skill's place; what it declares about its
environment must equal the current version's (outcome_baseline.drift).

The registries are built without stamps (`Registry.changed()` is then never true):
a live reload would read the skills directories again and put the skill back.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillchat.errors import UsageError
from skillchat.skills.content_hash import content_hash
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry, discover

Arm = Literal["with", "without", "old"]
ARMS: tuple[Arm, Arm] = ("with", "without")  # the arms without a baseline
HIDDEN = "evals"  # the skill's folder of answers: never in the copy the agent sees


def arm_folder(arm: str) -> str:
    """The guide's folder name of an arm."""
    return f"{arm}_skill"


def control(arms: Collection[str]) -> Arm:
    """The arm of `arms` that `with` is compared with (`without` or `old`)."""
    return "old" if "old" in arms else "without"


@dataclass(frozen=True)
class Arms:
    """Each arm's registry, and the digests of the skill's versions as the agent
    sees them (without `evals/`): what the results store is keyed by."""

    registries: dict[Arm, Registry]
    digest: str
    old_digest: str | None = None  # the baseline's, when there is one

    @property
    def names(self) -> tuple[Arm, Arm]:
        """`with`, then the control arm it is compared with."""
        return ("with", "old" if self.old_digest is not None else "without")


def arm_registries(
    registry: Registry, skill: str, stage: Path, baseline: Path | None = None
) -> Arms:
    """The arms of `skill`; `baseline` is a snapshot of its old version."""
    original = registry.skills[skill]
    staged, digest = _staged(original.root, stage / "skills" / original.root.name, skill)
    others = {name: s for name, s in registry.skills.items() if name != skill}
    registries: dict[Arm, Registry] = {
        "with": Registry(skills=dict(sorted({**others, skill: staged}.items())))
    }
    if baseline is None:
        registries["without"] = Registry(skills=others)
        return Arms(registries, digest)
    from skillchat.evals.outcome_baseline import drift

    old, old_digest = _staged(baseline, stage / "old" / original.root.name, skill)
    differs = drift(staged, old)
    if differs is not None:
        raise UsageError(
            f"the baseline differs from '{skill}' in {differs}: only the skill's instructions "
            "and files may differ between arms (docs/eval.md)"
        )
    registries["old"] = Registry(skills=dict(sorted({**others, skill: old}.items())))
    return Arms(registries, digest, old_digest)


def _staged(root: Path, copy: Path, skill: str) -> tuple[Skill, str]:
    """A copy of the skill folder `root` at `copy`, without `evals/`, as a skill."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(
        root,
        copy,
        symlinks=True,  # a link into evals/ then points at nothing in the copy
        ignore=lambda folder, _names: [HIDDEN] if Path(folder) == root else [],
    )
    staged = discover([copy.parent]).skills.get(skill)
    if staged is None:
        raise UsageError(f"skill '{skill}': its copy without evals/ is not a usable skill")
    return staged, content_hash(copy)
