"""One trial of an outcome eval: a task, on a model, in an arm, the n-th time.

Each trial is a fresh chat (the real prompt, catalog, tools and loop, as eval's
trigger runs) over a fresh workspace: the task's `files` copied into the trial's
`outputs/` folder, which the agent's commands may write (it is a throwaway copy),
with a scratch folder of its own. The final answer is written beside what the
agent wrote as `answer.md`, then graded (outcome_grade.py).

A with-skill trial in which the skill was never loaded (no successful get_skill,
no `/name`) is *not measured*: it says nothing about the skill, so it counts toward
no rate, never as a tie. A without-skill trial that loaded it would mean the arm
leaked: an error, never a result.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skillchat.config import Settings
from skillchat.errors import SkillchatError
from skillchat.evals.outcome_arms import Arm
from skillchat.evals.outcome_grade import grade
from skillchat.evals.outcome_judge import Judge, judge_trial
from skillchat.evals.outcome_tasks import Task
from skillchat.evals.runner import Tally, eval_consent
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.runner import NOBODY
from skillchat.skills.registry import Registry


@dataclass(frozen=True)
class TrialJob:
    task: Task
    model: str
    arm: Arm
    trial: int  # 1-based
    folder: Path  # the guide's run folder: outputs/ and grading.json go in it


@dataclass
class TrialResult:
    """What one trial gave, as the results store keeps it. `passed` is None when
    the trial is not graded: not measured, an error, or nothing grades the task."""

    task: str
    model: str
    arm: str
    trial: int
    passed: bool | None
    loaded: bool
    measured: bool
    checks: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    tool_calls: int = 0
    error: str | None = None
    judge_tokens: int = 0  # the judge's, apart from the arm's (outcome_judge.py)
    judge_cost: float | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrialSetup:
    """What every trial shares: the skill, each arm's registry, each model's settings."""

    skill: str
    skill_root: Path  # the original folder: the task's files and verifier
    registries: dict[Arm, Registry]
    settings: dict[str, Settings]
    allow_run: bool
    sandbox: Tools | None
    verifier_timeout_s: float
    judge: Judge | None = None  # grades `expectations`; None: they are not graded


def run_trial(job: TrialJob, setup: TrialSetup) -> TrialResult:
    """Run and grade `job`; a SkillchatError becomes the result's `error`."""
    from skillchat.session import Session
    from skillchat.workspace.files import Workspace

    outputs = job.folder / "outputs"
    shutil.rmtree(job.folder, ignore_errors=True)  # a trial cut short before: anew
    outputs.mkdir(parents=True)
    for name in job.task.files:
        source = setup.skill_root / name
        target = outputs / Path(name).name
        if source.is_dir():
            shutil.copytree(source, target, ignore=_links)
        else:
            shutil.copyfile(source, target)
    _writable_in_sandbox(outputs)
    tally = Tally()
    result = TrialResult(job.task.id, job.model, job.arm, job.trial, None, False, False)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="skillchat-trial-") as state:
        given = setup.settings[job.model]
        settings = given.replaced(
            storage_path=str(Path(state) / "chats.db"),  # its own scratch folder
            envs_path=str(given.storage.envs_folder()),  # the skills' packages, installed once
            run_allow_write=True,
        )
        session = None
        answer = ""
        try:
            consent = eval_consent(setup.allow_run)
            session = Session(
                settings,
                registry=setup.registries[job.arm],
                listeners=[tally],
                workspace=Workspace.open(outputs),
                consent=lambda: consent,
            )
            turn = session.send(_prompt(job, setup.skill))
            answer = turn.answer
            result.tool_calls = len(turn.tool_calls)
        except SkillchatError as exc:
            result.error = str(exc)
        finally:
            if session is not None:
                session.close()
        result.seconds = round(time.monotonic() - started, 3)
        if tally.usage is not None:
            result.tokens, result.cost = tally.usage.total_tokens, tally.usage.cost
        if session is not None:
            result.loaded = setup.skill in (*session.chat.activated, *tally.forked)
    (outputs / "answer.md").write_text(answer, encoding="utf-8")
    if job.arm == "without" and result.loaded:
        result.error = result.error or "the skill was loaded in the without arm"
    result.measured = result.error is None and (job.arm == "without" or result.loaded)
    judged = setup.judge is not None and bool(job.task.expectations)
    if result.measured and (job.task.graded or judged):
        try:
            checks = grade(
                job.task,
                outputs,
                answer,
                setup.skill_root,
                setup.sandbox,
                setup.verifier_timeout_s,
            )
            if setup.judge is not None and judged and all(c.passed for c in checks):
                checks += judge_trial(setup.judge, job.task, answer, outputs, result)
        except SkillchatError as exc:
            result.error = str(exc)
        else:
            result.checks = [c.as_json() for c in checks]
            result.passed = all(c.passed for c in checks)
    _write_grading(job.folder, result)
    return result


def _prompt(job: TrialJob, skill: str) -> str:
    """The task as the arm sends it: a prompt that starts with `/<skill>` loads the
    skill with the message; without the skill there is no such command, so that arm
    gets the rest of the message, the same request asked of an agent without it."""
    prompt = job.task.prompt
    head, _, rest = prompt.partition(" ")
    if job.arm == "without" and head == f"/{skill}":
        return rest.strip() or prompt
    return prompt


def _links(folder: str, names: list[str]) -> list[str]:
    """The links in a copied folder of `files`, left out: followed, one could copy
    any file of the host (a key, a `.env`) into what the agent reads."""
    return [n for n in names if os.path.islink(os.path.join(folder, n))]


def _writable_in_sandbox(outputs: Path) -> None:
    """As root, the sandbox runs commands as nobody (sandbox/runner.py): the trial's
    copy is handed to it, as the scratch folder is; otherwise the sandbox maps the
    user to its own user, who owns the copy already."""
    if os.geteuid() != 0:
        return
    for path in (outputs, *outputs.rglob("*")):
        os.lchown(path, NOBODY, NOBODY)


def _write_grading(folder: Path, result: TrialResult) -> None:
    """The guide's grading.json of one run."""
    passed = sum(1 for c in result.checks if c["passed"])
    total = len(result.checks)
    grading = {
        "expectations": result.checks,
        "summary": {
            "passed": passed,
            "failed": total - passed,
            "total": total,
            "pass_rate": passed / total if total else None,
        },
        "skill_loaded": result.loaded,
        "measured": result.measured,
        "error": result.error,
    }
    (folder / "grading.json").write_text(json.dumps(grading, indent=2) + "\n", encoding="utf-8")
