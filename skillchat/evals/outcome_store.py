"""The results store of outcome evals: one JSON file per finished trial, named by a
content key (the skill's digest as the agent sees it, the task's digest, model,
arm (`old` with its baseline's digest), trial number), so a run stopped by Ctrl-C
or a crash loses no finished trial and running the same command again runs only
what is missing (Inspect's `eval-set` semantics). Editing the skill or a task changes its key: those
trials run again, the others are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from skillchat.evals.outcome_trial import TrialJob, TrialResult


class ResultStore:
    """`<out>/.results/<key>.json`, written atomically (a rename)."""

    def __init__(self, root: Path, skill_digest: str, old_digest: str | None = None) -> None:
        self.root = root / ".results"
        self.skill_digest = skill_digest
        self.old_digest = old_digest

    def key(self, job: TrialJob) -> str:
        arm = f"old:{self.old_digest}" if job.arm == "old" else job.arm
        parts = [self.skill_digest, job.task.digest, job.model, arm, str(job.trial)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]

    def get(self, job: TrialJob) -> TrialResult | None:
        """The stored result of `job`, or None (never run, or unreadable: run again)."""
        try:
            data: dict[str, Any] = json.loads((self.root / f"{self.key(job)}.json").read_text())
            return TrialResult(**data)
        except (OSError, ValueError, TypeError):
            return None

    def put(self, job: TrialJob, result: TrialResult) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{self.key(job)}.json"
        part = path.with_suffix(".part")
        part.write_text(json.dumps(result.as_json()), encoding="utf-8")
        os.replace(part, path)
