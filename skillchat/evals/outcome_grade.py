"""Grading one trial's outputs, deterministically: the task's verifier script (run
in the sandbox, exit 0 = pass) and the checks its entry states (`output_contains`,
`output_matches`, `files_exist`; outcome_tasks.py). A trial passes when every one
passes. Each becomes an entry of the guide's grading.json: `{text, passed, evidence}`.

The verifier sees the trial's outputs folder read-only at /workspace (its only
argument) and the skill's folder read-only at VERIFIER_MOUNT; it writes only to
RAM folders of `VERIFIER_MB` each and prints at most `stop_after_bytes`, no
network, for at most `timeout_s`. A verifier that breaks those bounds (hangs, floods,
cannot start) is a `SkillError` (the
skill's verifier gave no verdict): the trial is ungraded, with one line.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.errors import SandboxFailure, SkillError
from skillchat.evals.outcome_tasks import Task
from skillchat.sandbox.detect import Tools

VERIFIER_MOUNT = "/opt/skillchat/verifier"
VERIFIER_MB = 64
_INTERPRETERS = {".py": "python", ".sh": "sh", ".js": "node"}


@dataclass(frozen=True)
class Check:
    text: str
    passed: bool
    evidence: str

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text, "passed": self.passed, "evidence": self.evidence}


def grade(
    task: Task,
    outputs: Path,
    answer: str,
    skill_root: Path,
    tools: Tools | None,
    timeout_s: float,
) -> list[Check]:
    """Every deterministic check of `task` on a trial's `outputs` and `answer`."""
    checks = [
        Check(f"output contains {s!r}", s in answer, _quote(answer, answer.find(s), len(s)))
        for s in task.output_contains
    ]
    for pattern in task.output_matches:
        found = re.search(pattern, answer)
        evidence = _quote(answer, found.start(), found.end() - found.start()) if found else ""
        checks.append(Check(f"output matches {pattern!r}", found is not None, evidence))
    for name in task.files_exist:
        there = (outputs / name).is_file() and (outputs / name).resolve().is_relative_to(
            outputs.resolve()
        )
        checks.append(Check(f"file {name} exists", there, "found" if there else "missing"))
    if task.verifier is not None:
        checks.append(run_verifier(task.verifier, outputs, skill_root, tools, timeout_s))
    return checks


def _quote(text: str, at: int, length: int) -> str:
    """The found text with a little around it, or "" when not found."""
    if at < 0:
        return ""
    return text[max(0, at - 40) : at + length + 40]


def run_verifier(
    verifier: str, outputs: Path, skill_root: Path, tools: Tools | None, timeout_s: float
) -> Check:
    """The verifier's verdict on `outputs`; SkillError when it gives none."""
    from skillchat.sandbox.layout import Limits, SandboxSpec
    from skillchat.sandbox.runner import run_in_sandbox

    if tools is None:
        raise SkillError(f"verifier {verifier}: needs the sandbox, which is not available")
    script = f"{VERIFIER_MOUNT}/{verifier}"
    interpreter = _INTERPRETERS.get(Path(verifier).suffix)
    command = shlex.join([*([interpreter] if interpreter else []), script, "/workspace"])
    limits = Limits(
        timeout_s=timeout_s,
        max_output_bytes=2_000,
        stop_after_bytes=1_000_000,
        max_file_mb=VERIFIER_MB,
        tmp_mb=VERIFIER_MB,
        home_mb=VERIFIER_MB,
        shm_mb=VERIFIER_MB,
        scratch_mb=VERIFIER_MB,
    )
    with tempfile.TemporaryDirectory(prefix="skillchat-verifier-") as scratch:
        spec = SandboxSpec(
            scratch=Path(scratch),
            workspace=outputs,
            limits=limits,
            binds=((skill_root, VERIFIER_MOUNT, False),),
            tmpfs=(("/scratch", VERIFIER_MB),),  # over the on-disk scratch: bounded
        )
        try:
            outcome = run_in_sandbox(tools, spec, command, timeout_s=timeout_s)
        except SandboxFailure as exc:
            raise SkillError(f"verifier {verifier}: the sandbox did not start ({exc})") from None
    if outcome.stopped == "timeout":
        raise SkillError(f"verifier {verifier}: timed out after {timeout_s:g} s")
    if outcome.stopped is not None:
        raise SkillError(f"verifier {verifier}: stopped ({outcome.stopped.replace('_', ' ')})")
    tail = (outcome.stderr.strip() or outcome.stdout.strip()).splitlines()
    evidence = f"exit {outcome.exit_code}" + (f": {tail[-1][:200]}" if tail else "")
    return Check(f"verifier {verifier}", outcome.exit_code == 0, evidence)
