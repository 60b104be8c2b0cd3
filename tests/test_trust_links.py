"""Trust and symlinks: a link that stays inside the skill folder is trusted with what
it points to (an edit there is a change), a link that leaves it makes the skill
impossible to trust, and the policy stops pre-approving the moment that happens."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import skill_folder, skillchat, write_files

from skillchat.config import Settings
from skillchat.errors import TrustError
from skillchat.sandbox.setup import skill_policy
from skillchat.sections import RunSettings
from skillchat.skills.content_hash import content_hash
from skillchat.skills.registry import discover
from skillchat.skills.trust import TrustState, TrustStore
from skillchat.tools.base import ToolContext

RUN = "python3 /skills/filler/scripts/run.py"


def linked_skill(skills: Path, target: str) -> Path:
    """`skills/filler`, whose `scripts/run.py` is a symlink to `target`, next to a
    `skills/common` folder and the skill's own `lib/run.py`."""
    write_files(skills / "common", {"scripts/run.py": "print('common')\n"})
    allowed = "allowed-tools: Bash(python3 scripts/run.py:*)\n"
    folder = skill_folder(skills, "filler", f"name: filler\ndescription: d\n{allowed}")
    write_files(folder, {"lib/run.py": "print('lib')\n"})
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").symlink_to(target)
    return folder


def verdict(skills: Path) -> str:
    """What the run_command policy of a chat over `skills` says about RUN."""
    chat = ToolContext(Settings(), discover([skills]))
    policy = skill_policy(RunSettings, lambda: chat.registry, "/workspace", lambda: chat)
    return policy("filler", RUN, chat).kind


def test_a_link_inside_the_folder_covers_its_target(tmp_path: Path) -> None:
    folder = linked_skill(tmp_path / "skills", "../lib/run.py")
    store = TrustStore.load()
    skill = discover([tmp_path / "skills"]).skills["filler"]
    store.trust(skill)
    assert store.state(skill) is TrustState.TRUSTED
    (folder / "lib" / "run.py").write_text("print('evil')\n")
    assert store.state(skill) is TrustState.CHANGED


@pytest.mark.parametrize(
    "target",
    [
        "../../common/scripts/run.py",  # a sibling in the same skills folder
        "../../filler/lib/run.py",  # out and back in: in the sandbox it is /skills/filler
        "/etc/hostname",
        "{folder}/lib/run.py",  # absolute, even to the skill's own file
        "run.py",  # a loop
        "up/../common/scripts/run.py",  # through a link to the folder's top
    ],
)
def test_a_link_that_leaves_the_folder_cannot_be_trusted(tmp_path: Path, target: str) -> None:
    skills = tmp_path / "skills"
    folder = linked_skill(skills, target.format(folder=tmp_path / "skills" / "filler"))
    (folder / "scripts" / "up").symlink_to("..")  # the top of the folder: inside
    with pytest.raises(TrustError, match=r"scripts/run.py: a symlink to .* does not stay inside"):
        content_hash(folder)


def test_through_the_cli_a_link_out_is_refused_and_a_retargeted_link_is_changed(
    tmp_path: Path,
) -> None:
    skills = tmp_path / "skills"
    folder = linked_skill(skills, "../../common/scripts/run.py")
    dirs = ("--skills-dir", str(skills))
    refused = skillchat("skills", "trust", "filler", *dirs)
    assert refused.returncode == 1
    assert "filler: not trusted: " in refused.stderr and "does not stay inside" in refused.stderr
    assert "trust: untrusted" in skillchat("skills", "show", "filler", *dirs).stdout.splitlines()
    assert verdict(skills) == "ask"

    link = folder / "scripts" / "run.py"
    link.unlink()
    link.symlink_to("../lib/run.py")
    assert skillchat("skills", "trust", "filler", *dirs).returncode == 0
    assert "trust: trusted" in skillchat("skills", "show", "filler", *dirs).stdout.splitlines()
    assert verdict(skills) == "approved"

    link.unlink()
    link.symlink_to("../../common/scripts/run.py")  # trusted code swapped for outside code
    shown = skillchat("skills", "show", "filler", *dirs).stdout.splitlines()
    assert "trust: changed since trusted" in shown
    assert verdict(skills) == "ask"
