"""The skill and scripted agent of the outcome-eval tests (tests/test_eval_outcome.py,
tests/hostile/test_hostile_eval.py): a skill whose evals/ holds answers and a
verifier, and a model that does better with the skill on two tasks, worse on one,
and never loads it on a fourth."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import skillchat, wait_for, write_files
from openai_server import ScriptedServer, call, reply

SKILL = "demo-skill"
# In evals/ only (expected output, expectations, verifier): never in a request.
SECRET = "SECRET-ANSWER-7f3a"
WITH = f'"name": "{SKILL}"'  # in the system prompt only when the skill is in the catalog

CHECK_REPORT = f"""import pathlib, sys
# {SECRET}
text = (pathlib.Path(sys.argv[1]) / "report.txt").read_text() if (
    pathlib.Path(sys.argv[1]) / "report.txt").exists() else ""
sys.exit(0 if "ok from input" in text else 1)
"""

TASKS = [
    {
        "id": "answer",
        "prompt": "TASK-ANSWER: what is the demo code?",
        "expected_output": f"the code, {SECRET}",
        "output_contains": "CODE-42",
        "expectations": [f"names the code {SECRET}"],
    },
    {
        "id": "report",
        "prompt": "TASK-REPORT: write report.txt from input.txt",
        "files": ["evals/files/input.txt"],
        "verifier": "evals/check_report.py",
        "files_exist": ["report.txt"],
    },
    {"id": "worse", "prompt": "TASK-WORSE: say it plainly", "output_matches": "^plain"},
    {"id": "noload", "prompt": "TASK-NOLOAD: anything", "output_contains": "fine"},
]


def demo_skill(root: Path, tasks: list[Any] | None = None) -> Path:
    """`root/skills/demo-skill` with its evals; the skills folder."""
    write_files(
        root / "skills" / SKILL,
        {
            "SKILL.md": f"---\nname: {SKILL}\ndescription: Answers the demo tasks.\n---\n"
            "Say CODE-42. Reports: copy input.txt to report.txt.\n",
            "evals/evals.json": json.dumps({"skill_name": SKILL, "evals": tasks or TASKS}),
            "evals/check_report.py": CHECK_REPORT,
            "evals/files/input.txt": "ok from input\n",
        },
    )
    return root / "skills"


def writable_copy(source: Path, target: Path) -> None:
    """A copy of a skill of the shared corpus, which has no write bits: the copy
    gets them back, or as a normal user a test could not add its evals/ to it (as
    root it could)."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    for folder in [target, *target.rglob("*")]:
        if folder.is_dir() and not folder.is_symlink():
            folder.chmod(0o755)


def evals_json(skills: Path) -> Path:
    return skills / SKILL / "evals" / "evals.json"


def loads() -> dict[str, Any]:
    return reply(calls=[call("get_skill", {"skill_name": SKILL})])


def script_agent(server: ScriptedServer) -> None:
    """With the skill: right on `answer` and `report`, wrong on `worse`, and on
    `noload` it never loads the skill. Without: wrong, wrong, right, right."""
    server.when("TASK-ANSWER", loads(), reply("the code is CODE-42"), system=WITH)
    copy = call("run_command", {"command": "cp input.txt report.txt"})
    server.when("TASK-REPORT", loads(), reply(calls=[copy]), reply("done"), system=WITH)
    server.when("TASK-WORSE", loads(), reply("a fancy answer"), system=WITH)
    server.when("TASK-ANSWER", reply("no idea"))
    server.when("TASK-REPORT", reply("I cannot"))
    server.when("TASK-WORSE", reply("plain answer"))
    server.when("TASK-NOLOAD", reply("fine"))


def outcome_argv(server: ScriptedServer, skills: Path, out: Path, *args: str) -> list[str]:
    return [
        "eval",
        str(evals_json(skills)),
        "--outcome",
        "--model",
        "openai/test-model",
        "--api-base",
        server.base_url,
        "--skills-dir",
        str(skills),
        "--out",
        str(out),
        "--allow-run",
        *args,
    ]


def run_outcome(
    server: ScriptedServer, skills: Path, out: Path, *args: str, **options: Any
) -> subprocess.CompletedProcess[str]:
    return skillchat(*outcome_argv(server, skills, out, *args), **options)


def interrupted(argv: list[str], held: Callable[[], bool]) -> tuple[int, str]:
    """Run `skillchat argv` as a real process, send it SIGINT once `held()` is
    true (a request in flight), and give its exit code and stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillchat", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        # A whole eval's start and its first trial come first: at load 30 that took
        # over wait_for's usual 30 s once.
        assert wait_for(held, timeout=120), "timed out waiting"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, err
