"""Planning and running an outcome eval: the trials (every task, in both arms, on
every model, K times, in passes so a partial run covers every task), their
folders in the guide's workspace layout, the estimate said before any request,
and what is written when trials finish.

    <out>/iteration-N/eval-<id>/{with_skill,without_skill}/run-<n>/outputs/
    <out>/iteration-N/eval-<id>/{with_skill,without_skill}/run-<n>/grading.json
    <out>/iteration-N/benchmark.json
    <out>/.results/               the results store (outcome_store.py)

With several models each gets its own `<out>/<model>/iteration-N/`, so every
iteration folder is the guide's layout for one executor model. The iteration is
the newest one made for the same skill digest (a re-run resumes it), else a new one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillchat.config import Settings
from skillchat.evals.outcome_arms import Arm, arm_folder
from skillchat.evals.outcome_report import ModelSummary, benchmark_json
from skillchat.evals.outcome_tasks import Task
from skillchat.evals.outcome_trial import TrialJob, TrialResult
from skillchat.skills.registry import Registry

DIGEST_FILE = ".skill-digest"
# A trial's requests: the task, often a get_skill or a command, then the answer.
ASSUMED_REQUESTS = 3
PRICED_TOKENS = 1_000_000  # prices are linear: asked once per model for this many


def model_slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


def iteration_folder(base: Path, digest: str) -> Path:
    """The newest iteration of `base` made for `digest`, else the next new one."""
    numbered = sorted(
        (int(p.name.removeprefix("iteration-")), p)
        for p in base.glob("iteration-*")
        if p.name.removeprefix("iteration-").isdigit()
    )
    for _, folder in reversed(numbered):
        try:
            if (folder / DIGEST_FILE).read_text().strip() == digest:
                return folder
        except OSError:
            continue
    folder = base / f"iteration-{numbered[-1][0] + 1 if numbered else 1}"
    folder.mkdir(parents=True)
    (folder / DIGEST_FILE).write_text(digest + "\n")
    return folder


def plan_trials(
    tasks: Sequence[Task],
    models: Sequence[str],
    trials: int,
    folders: dict[str, Path],
    arms: Sequence[Arm],
) -> list[TrialJob]:
    """Every (task, arm, model) `trials` times, in passes: the first covers all."""
    return [
        TrialJob(task, model, arm, n, run_folder(folders[model], task, arm, n))
        for n in range(1, trials + 1)
        for model in models
        for task in tasks
        for arm in arms
    ]


def run_folder(iteration: Path, task: Task, arm: Arm, trial: int) -> Path:
    return iteration / f"eval-{task.id}" / arm_folder(arm) / f"run-{trial}"


@dataclass(frozen=True)
class Estimate:
    trials: int
    tokens: int
    cost: float | None  # None: no price known for a model
    per_job: tuple[int, ...] = ()  # each job's tokens, in the jobs' order

    def line(self, skipped: int) -> str:
        cost = "cost unknown" if self.cost is None else f"about ${self.cost:,.2f}"
        done = f" ({skipped} already done, kept)" if skipped else ""
        return (
            f"{self.trials} trial(s) to run{done}: about {self.tokens:,} tokens, {cost} "
            f"(an estimate from the prompt, catalog and {ASSUMED_REQUESTS} requests a trial)"
        )


def estimate(
    jobs: Sequence[TrialJob],
    registries: dict[Arm, Registry],
    settings: dict[str, Settings],
    skill: str,
) -> Estimate:
    """What `jobs` may cost: each request carries the system prompt, catalog, tool
    schemas and the task (and, with the skill, its body once loaded)."""
    from skillchat.evals.cost import load_counter, skill_costs

    counter = load_counter()
    fixed: dict[tuple[str, Arm], int] = {}
    prices: dict[str, float | None] = {}  # of PRICED_TOKENS prompt tokens, per model
    per_job: list[int] = []
    cost: float | None = 0.0
    for job in jobs:
        key = (job.model, job.arm)
        if key not in fixed:
            report = skill_costs(settings[job.model], registries[job.arm], counter)
            mine = [s.activation for s in report.skills if s.name == skill]
            loaded = mine[0] if mine and job.arm != "without" else 0
            fixed[key] = report.total + loaded
        trial = ASSUMED_REQUESTS * (fixed[key] + counter.count(job.task.prompt))
        per_job.append(trial)
        if job.model not in prices:
            prices[job.model] = _price(settings[job.model], PRICED_TOKENS)
        price = prices[job.model]
        cost = None if cost is None or price is None else cost + price * trial / PRICED_TOKENS
    return Estimate(len(jobs), sum(per_job), cost, tuple(per_job))


def measured_line(first: TrialResult, planned: Estimate) -> str:
    """The estimate of the trials after the first, now from the first's real usage:
    each trial's estimate scaled by how the first's real tokens compare with its own
    (the catalog and prompts still tell the trials apart: an arm without the skill,
    a longer task). Its cost is the estimate's scaled alike, or else, where no price
    is known but the first reported its cost, that cost per token."""
    rest = planned.per_job[1:]
    ratio = first.tokens / planned.per_job[0] if planned.per_job[0] else 1.0
    tokens = round(sum(rest) * ratio)
    cost: float | None = None
    if planned.cost is not None and planned.tokens:
        cost = planned.cost * ratio * sum(rest) / planned.tokens
    elif first.cost is not None and first.tokens:
        cost = first.cost * tokens / first.tokens
    spent = "" if first.cost is None else f", ${first.cost:,.4f}"
    projected = "cost unknown" if cost is None else f"about ${cost:,.2f}"
    return (
        f"first trial: {first.tokens:,} tokens{spent} (estimated {planned.per_job[0]:,}); "
        f"the other {len(rest)} trial(s): about {tokens:,} tokens, {projected} "
        "(from the first trial's usage; Ctrl-C stops, keeping what finished)"
    )


def _price(settings: Settings, tokens: int) -> float | None:
    """What `tokens` prompt tokens cost on the model, when its backend knows prices
    (litellm's local map; the OpenAI-wire backend reports none)."""
    from skillchat.backend_table import backend_row

    if (
        backend_row(settings.model.name, settings.model.backend, settings.model.api_base).name
        != "litellm"
    ):
        return None
    from skillchat.engine.backends.litellm_backend import cost
    from skillchat.engine.events import Usage

    return cost(settings.model.name, Usage(prompt_tokens=tokens, total_tokens=tokens))


def write_benchmarks(
    summaries: Sequence[ModelSummary],
    results: Sequence[TrialResult],
    folders: dict[str, Path],
    skill: str,
    trials: int,
) -> None:
    for summary in summaries:
        document = benchmark_json(summary, results, skill, trials)
        path = folders[summary.model] / "benchmark.json"
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
