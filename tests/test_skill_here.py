"""A skill's command copied from its SKILL.md (`python scripts/x.py`, `python -m
scripts.x`, `node skills/NAME/scripts/x.mjs`) runs from /scratch without a
workspace: the skill's top-level entries are shown there read-only, what the chat
wrote wins, outputs land in the scratch folder, and no mount point is left."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_files
from openai_server import ScriptedServer
from sandbox_helpers import require_sandbox
from test_envs import ask_run, demo_skill

WRITE = "import pathlib\npathlib.Path('out.txt').write_text('made')\nprint('ran', __name__)\n"


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


def scratch_folders() -> list[Path]:
    from skillchat.sections import user_data_dir

    return [p for p in (user_data_dir() / "scratch").iterdir() if p.is_dir()]


def test_relative_paths_of_the_skill_run_and_write_to_scratch(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = demo_skill(
        tmp_path,
        {"scripts/w.py": WRITE, "scripts/__init__.py": "", "top.sh": 'echo top "$PWD"\n'},
    )
    _, result = ask_run(server, skills, "python scripts/w.py && cat out.txt")
    assert result["stdout"] == "ran __main__\nmade", result
    assert result["files_written"] == ["/scratch/out.txt"]
    _, result = ask_run(server, skills, "python -m scripts.w && bash top.sh")
    assert result["stdout"] == "ran __main__\ntop /scratch\n", result
    _, result = ask_run(server, skills, "python skills/demo/scripts/w.py && touch scripts/x")
    assert result["stdout"] == "ran __main__\n"
    assert "Read-only file system" in result["stderr"]
    for scratch in scratch_folders():  # no mount point is left behind
        assert sorted(p.name for p in scratch.iterdir()) == ["out.txt"]


def test_what_the_chat_wrote_wins_over_the_skill(tmp_path: Path) -> None:
    from skillchat.sandbox.protect import remove_mount_points
    from skillchat.sandbox.skill_here import skill_entries

    root = write_files(tmp_path / "demo", {"scripts/w.py": "", "LICENSE": "x", ".git/x": ""})
    scratch = write_files(tmp_path / "scratch", {"scripts/mine.py": "", "LICENSE": ""})
    binds, made = skill_entries("demo", root, scratch)
    assert [(str(h.relative_to(tmp_path)), d) for h, d, _ in binds] == [
        ("demo/LICENSE", "/scratch/LICENSE"),  # an empty file a stopped run left
        ("demo", "/scratch/skills/demo"),
    ]
    assert made == [scratch / "skills" / "demo", scratch / "skills"]
    remove_mount_points(made)
    assert sorted(p.name for p in scratch.iterdir()) == ["LICENSE", "scripts"]


def test_a_workspace_is_left_as_it_is(server: ScriptedServer, tmp_path: Path) -> None:
    skills = demo_skill(tmp_path, {"scripts/w.py": WRITE})
    project = tmp_path / "project"
    project.mkdir()
    _, result = ask_run(server, skills, "python scripts/w.py", "--workspace", str(project))
    assert result["exit_code"] == 2
    assert "/workspace/scripts/w.py" in result["stderr"]
    assert list(project.iterdir()) == []
