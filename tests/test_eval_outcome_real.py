"""`skillchat eval --outcome` on a real skill whose script needs packages: anthropic's
skill-creator, its `quick_validate.py` with PyYAML (from the config's [packages], as
tests/test_envs_real.py has it), installed in the sandbox and graded by a verifier
written here. With the real index only when `REAL_INDEX_DIR` is set (as
tests/test_envs_real.py); the environment's place is checked against a local index
everywhere: one environment in the user's store, shared by every trial."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

import pytest
from envs_helpers import local_index, write_wheel
from helpers import NO_SHARED, REAL_SKILLS_SCRIPTS, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from outcome_fixture import writable_copy
from sandbox_helpers import require_sandbox

CREATOR = REAL_SKILLS_SCRIPTS / "anthropics-skills" / "skills" / "skill-creator"
VALIDATE = "python /skills/skill-creator/scripts/quick_validate.py draft > verdict.txt"
# The verifier: the agent's verdict file says what quick_validate says of a valid
# skill, and the draft it was given is still there, unchanged.
VERIFIER = """import pathlib, sys
out = pathlib.Path(sys.argv[1])
verdict = (out / "verdict.txt").read_text() if (out / "verdict.txt").is_file() else ""
draft = (out / "draft" / "SKILL.md").read_text()
sys.exit(0 if verdict.strip() == "Skill is valid!" and draft.startswith("---") else 1)
"""
DRAFT = "---\nname: draft\ndescription: A draft skill to check.\n---\n# Draft\n"


def creator_with_evals(tmp_path: Path) -> Path:
    """A copy of the real skill-creator (write bits back: the corpus has none) with
    an evals/ written here; the skills folder."""
    if not CREATOR.is_dir():
        pytest.skip(NO_SHARED)
    skills = tmp_path / "skills"
    writable_copy(CREATOR, skills / "skill-creator")
    task = {
        "id": "validate",
        "prompt": "TASK-VALIDATE: is the skill in ./draft valid? write verdict.txt",
        "files": ["evals/files/draft"],
        "verifier": "evals/check_verdict.py",
    }
    write_files(
        skills / "skill-creator" / "evals",
        {
            "evals.json": json.dumps({"skill_name": "skill-creator", "evals": [task]}),
            "check_verdict.py": VERIFIER,
            "files/draft/SKILL.md": DRAFT,
        },
    )
    return skills


def script_validator(server: ScriptedServer) -> None:
    """With the skill the agent runs its validator; without it, it guesses."""
    server.when(
        "TASK-VALIDATE",
        reply(calls=[call("get_skill", {"skill_name": "skill-creator"})]),
        reply(calls=[call("run_command", {"command": VALIDATE, "skill_name": "skill-creator"})]),
        reply("checked"),
        system='"name": "skill-creator"',
    )
    server.when(
        "TASK-VALIDATE",
        reply(calls=[call("run_command", {"command": "echo ok > verdict.txt"})]),
        reply("ok"),
    )


def run_eval(server: ScriptedServer, tmp_path: Path, data: str, package: str) -> dict[str, Any]:
    """The outcome eval of the validate task, chats and environments in `data`,
    the skill's missing declaration (PyYAML) given as `package` in [packages]."""
    skills = creator_with_evals(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[storage]\npath = "{data}/chats.db"\n\n[packages]\nskill-creator = ["{package}"]\n'
    )
    script_validator(server)
    out = tmp_path / "ws"
    argv = [
        "eval", str(skills / "skill-creator/evals/evals.json"), "--outcome",
        "--model", "openai/test-model", "--api-base", server.base_url,
        "--skills-dir", str(skills), "--config", str(config), "--out", str(out),
        "--allow-run", "--allow-install", "--trials", "2", "--jobs", "2", "--yes", "--json",
    ]  # fmt: skip
    done = skillchat(*argv, timeout=900)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["models"][0]["tasks"]
    return cast(dict[str, Any], row)


def test_a_real_skill_installs_its_packages_and_a_verifier_grades_it(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    folder = os.environ.get("REAL_INDEX_DIR")
    if not folder:
        pytest.skip("REAL_INDEX_DIR is not set: the real package index is not used")
    row = run_eval(server, tmp_path, folder, "pyyaml")
    assert row["delta"] == 1.0, row
    verdict = tmp_path / "ws/iteration-1/eval-validate/with_skill/run-1/outputs/verdict.txt"
    assert verdict.read_text() == "Skill is valid!\n"


def test_the_skills_packages_are_installed_once_in_the_users_store(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trial has a chat database and scratch folder of its own, not an
    environment store of its own: the package is installed once, where the user's
    chats keep their environments, and every with-skill trial uses it."""
    require_sandbox()
    wheels = tmp_path / "wheels"
    # A stand-in yaml with what quick_validate uses, from a local index.
    write_wheel(
        wheels,
        "yaml",
        code="class YAMLError(Exception):\n    pass\n\n"
        "def safe_load(text):\n"
        "    return dict(line.split(': ', 1) for line in text.strip().splitlines())\n",
    )
    local_index(monkeypatch, wheels)
    data = tmp_path / "data"
    row = run_eval(server, tmp_path, str(data), "yaml")
    assert row["delta"] == 1.0, row
    envs = [p for p in (data / "envs").iterdir() if p.is_dir() and p.name != "locks"]
    assert len(envs) == 1 and (envs[0] / "skillchat-env.json").is_file()
