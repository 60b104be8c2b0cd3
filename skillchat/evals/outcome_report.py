"""The report of an outcome eval: per task and arm the pass rate, pass@k and
pass^k; per task the paired difference with minus without; their mean over tasks
with a bootstrap 95% interval, per model; tokens, time and cost per arm and their
deltas. The same data makes `--json`, the terminal table and the guide's
`benchmark.json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillchat.evals.outcome_arms import ARMS, Arm, arm_folder, control
from skillchat.evals.outcome_stats import (
    MIN_TASKS_TO_CONCLUDE,
    MIN_TRIALS_TO_CONCLUDE,
    Interval,
    bootstrap_difference,
    bootstrap_mean,
    mean_stddev,
    pass_at_k,
    pass_hat_k,
)
from skillchat.evals.outcome_trial import TrialResult

USAGE_KEYS = ("tokens", "seconds", "cost")


@dataclass
class ArmStats:
    trials: int  # finished
    graded: int  # measured and graded: n of the formulas
    passed: int  # c
    not_measured: int
    errors: int
    k: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    def as_json(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "graded": self.graded,
            "passed": self.passed,
            "not_measured": self.not_measured,
            "errors": self.errors,
            "pass_rate": self.rate,
            "k": self.k,
            "pass_at_k": pass_at_k(self.graded, self.passed, self.k),
            "pass_hat_k": pass_hat_k(self.graded, self.passed, self.k),
        }


@dataclass
class TaskRow:
    task: str
    model: str
    arms: dict[str, ArmStats]

    @property
    def delta(self) -> float | None:
        """with - the control arm, when both arms have a graded trial."""
        w, wo = self.arms["with"].rate, self.arms[control(self.arms)].rate
        return None if w is None or wo is None else w - wo

    @property
    def interval(self) -> Interval | None:
        """The delta's bootstrap 95% interval over the task's trials."""
        w, wo = self.arms["with"], self.arms[control(self.arms)]
        return bootstrap_difference((w.passed, w.graded), (wo.passed, wo.graded))


@dataclass
class ModelSummary:
    model: str
    rows: list[TaskRow]  # negative deltas first, then unmeasured, then the rest
    mean_delta: Interval | None
    usage: dict[Arm, dict[str, dict[str, float | None]]]
    notes: list[str] = field(default_factory=list)


def _arm_stats(results: Sequence[TrialResult], k: int) -> ArmStats:
    graded = [r for r in results if r.passed is not None]
    return ArmStats(
        trials=len(results),
        graded=len(graded),
        passed=sum(1 for r in graded if r.passed),
        not_measured=sum(1 for r in results if not r.measured and r.error is None),
        errors=sum(1 for r in results if r.error is not None),
        k=k,
    )


def _order(row: TaskRow) -> tuple[int, float]:
    delta = row.delta
    if delta is None:
        return (1, 0.0)
    return (0 if delta < 0 else 2, delta)


def summarize(
    results: Sequence[TrialResult],
    tasks: Sequence[str],
    models: Sequence[str],
    k: int,
    arms: Sequence[Arm] = ARMS,
) -> list[ModelSummary]:
    """One summary per model, from the finished trials of `arms`."""
    summaries = []
    for model in models:
        mine = [r for r in results if r.model == model]
        rows = [
            TaskRow(
                task,
                model,
                {
                    arm: _arm_stats([r for r in mine if r.task == task and r.arm == arm], k)
                    for arm in arms
                },
            )
            for task in tasks
        ]
        rows.sort(key=_order)
        deltas = [row.delta for row in rows if row.delta is not None]
        usage = {
            arm: {
                "tokens": mean_stddev([r.tokens for r in mine if r.arm == arm]),
                "seconds": mean_stddev([r.seconds for r in mine if r.arm == arm]),
                "cost": mean_stddev([r.cost for r in mine if r.arm == arm and r.cost is not None]),
            }
            for arm in arms
        }
        summary = ModelSummary(model, rows, bootstrap_mean(deltas), usage)
        summary.notes = _notes(summary, len(deltas), k)
        summaries.append(summary)
    return summaries


def _notes(summary: ModelSummary, measured_tasks: int, k: int) -> list[str]:
    """What the numbers cannot carry, said plainly."""
    notes = []
    graded = [a.graded for row in summary.rows for a in row.arms.values() if a.graded]
    fewest = min(graded, default=0)
    if fewest < MIN_TRIALS_TO_CONCLUDE:
        notes.append(
            f"too few trials to conclude: a task arm has {fewest} graded trial(s) "
            f"(one trial moves its pass rate by {100 // max(fewest, 1)} points); "
            f"use --trials {MIN_TRIALS_TO_CONCLUDE} or more"
        )
    if measured_tasks < MIN_TASKS_TO_CONCLUDE:
        notes.append(
            f"too few tasks to conclude: {measured_tasks} with both arms measured "
            f"(the interval needs {MIN_TASKS_TO_CONCLUDE} or more)"
        )
    interval = summary.mean_delta
    if interval is not None and interval.low <= 0 <= interval.high:
        notes.append("the interval includes 0: no difference shown either way")
    for arm in ("with", "old"):
        unmeasured = sum(row.arms[arm].not_measured for row in summary.rows if arm in row.arms)
        if unmeasured:
            notes.append(f"{unmeasured} {arm}-skill trial(s) never loaded the skill: not measured")
    if any(a.graded < k for row in summary.rows for a in row.arms.values()):
        notes.append(f"pass@{k} and pass^{k} need {k} graded trials: blank where fewer")
    return notes


def delta_of(usage: dict[Arm, dict[str, dict[str, float | None]]], key: str) -> float | None:
    """with - the control arm of a usage mean, when both are known."""
    w, wo = usage["with"][key]["mean"], usage[control(usage)][key]["mean"]
    return None if w is None or wo is None else w - wo


def summary_json(summaries: Sequence[ModelSummary], min_delta: float | None) -> dict[str, Any]:
    """The `--json` document: what CI reads."""
    models = []
    for s in summaries:
        interval = s.mean_delta
        models.append(
            {
                "model": s.model,
                "tasks": [
                    {
                        "task": row.task,
                        "delta": row.delta,
                        "delta_ci95": _bounds(row.interval),
                        **{arm_folder(arm): stats.as_json() for arm, stats in row.arms.items()},
                    }
                    for row in s.rows
                ],
                "mean_delta": None
                if interval is None
                else {"mean": interval.mean, "low": interval.low, "high": interval.high},
                "usage": s.usage,
                "usage_delta": {key: delta_of(s.usage, key) for key in USAGE_KEYS},
                "notes": s.notes,
                "meets_min_delta": meets(s, min_delta),
            }
        )
    return {"models": models, "min_delta": min_delta}


def _bounds(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def meets(summary: ModelSummary, min_delta: float | None) -> bool | None:
    """Whether the interval's lower bound is at least `min_delta` (None: not asked)."""
    if min_delta is None:
        return None
    return summary.mean_delta is not None and summary.mean_delta.low >= min_delta


def benchmark_json(
    summary: ModelSummary, results: Sequence[TrialResult], skill: str, trials: int
) -> dict[str, Any]:
    """The guide's benchmark.json of one model's iteration."""
    runs = [
        {
            "eval_id": r.task,
            "configuration": arm_folder(r.arm),
            "run_number": r.trial,
            "result": {
                "pass_rate": None if r.passed is None else float(r.passed),
                "passed": sum(1 for c in r.checks if c["passed"]),
                "failed": sum(1 for c in r.checks if not c["passed"]),
                "total": len(r.checks),
                "time_seconds": r.seconds,
                "tokens": r.tokens,
                "tool_calls": r.tool_calls,
                "errors": 0 if r.error is None else 1,
            },
            "expectations": r.checks,
            "skill_loaded": r.loaded,
            "measured": r.measured,
            "notes": [r.error] if r.error else [],
        }
        for r in sorted(results, key=lambda r: (r.task, r.arm, r.trial))
        if r.model == summary.model
    ]
    run_summary: dict[str, Any] = {}
    for arm in summary.usage:
        rates = [
            float(r.passed)
            for r in results
            if r.model == summary.model and r.arm == arm and r.passed is not None
        ]
        run_summary[arm_folder(arm)] = {
            "pass_rate": mean_stddev(rates),
            "time_seconds": summary.usage[arm]["seconds"],
            "tokens": summary.usage[arm]["tokens"],
            "cost": summary.usage[arm]["cost"],
        }
    w, wo = run_summary["with_skill"], run_summary[arm_folder(control(summary.usage))]
    run_summary["delta"] = {
        "pass_rate": _signed(w["pass_rate"]["mean"], wo["pass_rate"]["mean"], "{:+.2f}"),
        "time_seconds": _signed(w["time_seconds"]["mean"], wo["time_seconds"]["mean"], "{:+.1f}"),
        "tokens": _signed(w["tokens"]["mean"], wo["tokens"]["mean"], "{:+.0f}"),
    }
    interval = summary.mean_delta
    return {
        "metadata": {
            "skill_name": skill,
            "executor_model": summary.model,
            "evals_run": [row.task for row in summary.rows],
            "runs_per_configuration": trials,
        },
        "runs": runs,
        "run_summary": run_summary,
        "paired_delta": None
        if interval is None
        else {"mean": interval.mean, "ci95": [interval.low, interval.high]},
        "notes": summary.notes,
    }


def _signed(a: float | None, b: float | None, form: str) -> str | None:
    return None if a is None or b is None else form.format(a - b)
