"""The two arms of an outcome eval, and what keeps them honest.

`with`: the skill as the agent may use it: a copy of its folder without `evals/`
(the expected outputs, assertions and verifier code), so neither get_skill,
read_file_in_skill nor a command at /skills/<name> can read the answers.
`without`: the skill is not in the registry at all: not in the catalog, not
loadable, not mounted in the sandbox. Every other skill, tool, budget and sandbox
rule is the same in both arms.

The registries are built without stamps (`Registry.changed()` is then never true):
a live reload would read the skills directories again and put the skill back.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

from skillchat.errors import UsageError
from skillchat.skills.content_hash import content_hash
from skillchat.skills.registry import Registry, discover

Arm = Literal["with", "without"]
ARMS: tuple[Arm, ...] = ("with", "without")
HIDDEN = "evals"  # the skill's folder of answers: never in the copy the agent sees


def arm_folder(arm: str) -> str:
    """The guide's folder name of an arm."""
    return f"{arm}_skill"


def arm_registries(registry: Registry, skill: str, stage: Path) -> tuple[dict[Arm, Registry], str]:
    """The registry of each arm and the digest of the skill as the agent sees it
    (the copy in `stage`, without `evals/`): what the results store is keyed by."""
    original = registry.skills[skill]
    copy = stage / "skills" / original.root.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(
        original.root,
        copy,
        symlinks=True,  # a link into evals/ then points at nothing in the copy
        ignore=lambda folder, _names: [HIDDEN] if Path(folder) == original.root else [],
    )
    staged = discover([copy.parent]).skills.get(skill)
    if staged is None:
        raise UsageError(f"skill '{skill}': its copy without evals/ is not a usable skill")
    others = {name: s for name, s in registry.skills.items() if name != skill}
    arms: dict[Arm, Registry] = {
        "with": Registry(skills=dict(sorted({**others, skill: staged}.items()))),
        "without": Registry(skills=others),
    }
    return arms, content_hash(copy)
