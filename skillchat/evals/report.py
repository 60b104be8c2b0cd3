"""The eval report: the runs summed up per skill and model, as data (`--json`) that
the terminal table (ui/eval_table.py) is drawn from.

    report = build_report(plan, outcomes, runs=3, min_trigger_rate=0.8, interrupted=False)
    report.ok        # False: some skill under the minimum, or a run that failed
    report.as_json() # what `skillchat eval --json` prints

Per skill and model: the trigger rate (triggered runs / finished should-trigger runs),
the false-trigger rate (the same over should-not runs), the queries that went wrong
in any run with what was activated instead, mean tokens and cost per run, and how
the catalog showed the skill (whole, shortened, cut). Runs that failed (provider
error, tool-round limit) count toward no rate: they are listed with their error, and
make the report not ok, since they say nothing about the description.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillchat.evals.runner import CatalogState, Job, RunOutcome

CATALOG_ORDER: tuple[CatalogState, ...] = ("full", "shortened", "cut")


@dataclass
class QueryResult:
    """One query on one model: its finished runs."""

    job: Job  # the query and model (its `run` is the first run's)
    outcomes: list[RunOutcome] = field(default_factory=list)

    @property
    def wrong(self) -> list[RunOutcome]:
        return [o for o in self.outcomes if not o.correct]

    def as_json(self) -> dict[str, Any]:
        q = self.job.query
        return {
            "id": q.id,
            "skill": q.skill,
            "model": self.job.model,
            "query": q.query,
            "should_trigger": q.should_trigger,
            "runs": [_run_json(o) for o in self.outcomes],
        }


@dataclass
class SkillResult:
    """One skill on one model: its queries' runs summed up."""

    skill: str
    model: str
    queries: list[QueryResult] = field(default_factory=list)

    def _finished(self, should: bool) -> list[RunOutcome]:
        return [
            o
            for r in self.queries
            if r.job.query.should_trigger == should
            for o in r.outcomes
            if o.error is None
        ]

    @property
    def outcomes(self) -> list[RunOutcome]:
        return [o for r in self.queries for o in r.outcomes]

    @property
    def trigger_rate(self) -> float | None:
        runs = self._finished(True)
        return sum(o.triggered for o in runs) / len(runs) if runs else None

    @property
    def false_trigger_rate(self) -> float | None:
        runs = self._finished(False)
        return sum(o.triggered for o in runs) / len(runs) if runs else None

    @property
    def has_should_trigger(self) -> bool:
        return any(r.job.query.should_trigger for r in self.queries)

    @property
    def errors(self) -> int:
        return sum(o.error is not None for o in self.outcomes)

    @property
    def catalog(self) -> CatalogState:
        """The worst the catalog did to the skill in any run."""
        seen = {o.catalog for o in self.outcomes} or {"full"}
        return max(seen, key=CATALOG_ORDER.index)

    @property
    def mean_tokens(self) -> float | None:
        used = [o.usage.total_tokens for o in self.outcomes if o.usage is not None]
        return sum(used) / len(used) if used else None

    @property
    def mean_cost(self) -> float | None:
        costs = [o.usage.cost for o in self.outcomes if o.usage and o.usage.cost is not None]
        return sum(costs) / len(costs) if costs else None

    @property
    def failed(self) -> list[QueryResult]:
        return [r for r in self.queries if r.wrong]

    def below(self, minimum: float | None) -> bool:
        """Whether the trigger rate misses `minimum` (no finished run misses it too)."""
        if minimum is None or not self.has_should_trigger:
            return False
        rate = self.trigger_rate
        return rate is None or rate < minimum

    def as_json(self, minimum: float | None) -> dict[str, Any]:
        should, should_not = self._finished(True), self._finished(False)
        return {
            "skill": self.skill,
            "model": self.model,
            "catalog": self.catalog,
            "trigger_rate": self.trigger_rate,
            "triggered_runs": sum(o.triggered for o in should),
            "should_trigger_runs": len(should),
            "false_trigger_rate": self.false_trigger_rate,
            "false_trigger_runs": sum(o.triggered for o in should_not),
            "should_not_trigger_runs": len(should_not),
            "errors": self.errors,
            "mean_tokens": self.mean_tokens,
            "mean_cost": self.mean_cost,
            "below_min_trigger_rate": self.below(minimum),
            "failed": [_failed_json(r) for r in self.failed],
        }


@dataclass
class Report:
    """The whole evaluation: per skill and model, in the order the file names them."""

    skills: list[SkillResult]
    models: list[str]
    runs: int
    planned: int
    min_trigger_rate: float | None
    interrupted: bool
    # The user's overrides that shaped the catalog (skills/overrides.py `applied`).
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        return sum(len(s.outcomes) for s in self.skills)

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.skills)

    @property
    def ok(self) -> bool:
        """Every skill meets the minimum and no run failed."""
        return self.errors == 0 and not any(s.below(self.min_trigger_rate) for s in self.skills)

    def as_json(self) -> dict[str, Any]:
        return {
            "models": self.models,
            "runs_per_query": self.runs,
            "planned_runs": self.planned,
            "finished_runs": self.finished,
            "interrupted": self.interrupted,
            "min_trigger_rate": self.min_trigger_rate,
            "ok": self.ok,
            "overrides": self.overrides,
            "skills": [s.as_json(self.min_trigger_rate) for s in self.skills],
            "queries": [r.as_json() for s in self.skills for r in s.queries],
        }


def build_report(
    plan: Sequence[Job],
    outcomes: Sequence[RunOutcome],
    *,
    runs: int,
    min_trigger_rate: float | None,
    interrupted: bool,
    overrides: dict[str, str] | None = None,
) -> Report:
    """Group `outcomes` by the queries of `plan` (queries with no finished run stay
    listed, with none): skills and models in the order they first appear."""
    skills: dict[tuple[str, str], SkillResult] = {}
    queries: dict[tuple[str, str, str, str], QueryResult] = {}
    for job in plan:
        q = job.query
        key = (q.skill, job.model, q.id, q.query)
        if key not in queries:
            queries[key] = QueryResult(job)
            skill = skills.setdefault((q.skill, job.model), SkillResult(q.skill, job.model))
            skill.queries.append(queries[key])
    for outcome in sorted(outcomes, key=lambda o: o.job.run):
        q = outcome.job.query
        queries[(q.skill, outcome.job.model, q.id, q.query)].outcomes.append(outcome)
    models = list(dict.fromkeys(job.model for job in plan))
    ordered = sorted(skills.values(), key=lambda s: models.index(s.model))
    return Report(ordered, models, runs, len(plan), min_trigger_rate, interrupted, overrides or {})


def _run_json(outcome: RunOutcome) -> dict[str, Any]:
    usage = outcome.usage
    return {
        "run": outcome.job.run,
        "triggered": outcome.triggered,
        "correct": outcome.correct,
        "activated": list(outcome.activated),
        "files_read": list(outcome.files_read),
        "tokens": usage.total_tokens if usage else None,
        "cost": usage.cost if usage else None,
        "catalog": outcome.catalog,
        "error": outcome.error,
    }


def _failed_json(result: QueryResult) -> dict[str, Any]:
    q = result.job.query
    return {
        "id": q.id,
        "query": q.query,
        "should_trigger": q.should_trigger,
        "wrong_runs": len(result.wrong),
        "runs": len(result.outcomes),
        "activated_instead": activated_instead(result),
        "errors": [o.error for o in result.wrong if o.error],
    }


def activated_instead(result: QueryResult) -> list[str]:
    """The other skills its wrong runs activated, each once, in order."""
    target = result.job.query.skill
    names = (n for o in result.wrong for n in o.activated if n != target)
    return list(dict.fromkeys(names))
