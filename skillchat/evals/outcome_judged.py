"""What the LLM judge adds to an outcome eval's run and report: the pairwise pass
over finished trials (outcome_pairwise.py), and per model the judge's own line
(verdicts given, trials it could not grade, its tokens and cost, apart from the
arms') and per task the pairwise counts, added to the `--json` document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillchat.config import Settings
from skillchat.evals.outcome_judge import JUDGE_PREFIX, Judge
from skillchat.evals.outcome_pairwise import Pair, PairVerdict, compare, tally
from skillchat.evals.outcome_run import run_folder
from skillchat.evals.outcome_tasks import Task
from skillchat.evals.outcome_trial import TrialJob, TrialResult

PAIRWISE_FOLDER = "pairwise"  # under the results store: one file per compared pair


def pairs(
    results: Sequence[TrialResult], tasks: Sequence[Task], folders: dict[str, Path]
) -> list[Pair]:
    """Every (task, model, trial) whose two arms both finished measured, no error."""
    by_id = {t.id: t for t in tasks}
    usable = {(r.task, r.model, r.trial, r.arm) for r in results if r.measured and r.error is None}
    found = []
    for task, model, trial, arm in sorted(usable):
        if arm != "with" or (task, model, trial, "without") not in usable or task not in by_id:
            continue
        found.append(
            Pair(
                by_id[task],
                model,
                trial,
                run_folder(folders[model], by_id[task], "with", trial),
                run_folder(folders[model], by_id[task], "without", trial),
            )
        )
    return found


def compare_all(
    judge: Judge,
    todo: Sequence[Pair],
    store: Path,
    jobs: int,
    say: Callable[[str], None],
) -> tuple[list[PairVerdict], bool]:
    """Every pair's verdict, `jobs` at a time, and whether Ctrl-C stopped them (the
    compared ones are kept); a pair the judge could not compare is said in one
    line (`say`) and the others go on."""
    from skillchat.evals.runner import Evaluation

    def told(verdict: PairVerdict) -> None:
        if verdict.problem:
            say(f"eval-{verdict.task} pair {verdict.trial}: {verdict.problem}")

    evaluation = Evaluation(list(todo), jobs, lambda pair: compare(judge, pair, store))
    try:
        evaluation.run(on_outcome=told)
    except KeyboardInterrupt:
        return list(evaluation.outcomes), True
    return list(evaluation.outcomes), False


def judge_failed(result: TrialResult) -> bool:
    """Whether the judge left this trial ungraded (its error is the judge's)."""
    return bool(result.error and result.error.startswith(JUDGE_PREFIX))


def add_judge_json(
    document: dict[str, Any],
    results: Sequence[TrialResult],
    verdicts: Sequence[PairVerdict],
    judge: Judge | None,
    tasks: Sequence[Task],
) -> None:
    """Each model of the `--json` document gets `judge` (None without one), and with
    `--pairwise` each of its tasks a `pairwise` tally."""
    expectations = {t.id: set(t.expectations) for t in tasks}
    for entry in document["models"]:
        model = entry["model"]
        mine = [r for r in results if r.model == model]
        compared = [v for v in verdicts if v.model == model]
        if judge is None:
            entry["judge"] = None
            continue
        costs = [r.judge_cost for r in mine if r.judge_cost is not None]
        costs += [v.cost for v in compared if v.cost is not None]
        entry["judge"] = {
            "model": judge.model,
            "verdicts": sum(
                1 for r in mine for c in r.checks if c["text"] in expectations.get(r.task, ())
            ),
            "not_graded": sum(1 for r in mine if judge_failed(r)),
            "pairs_compared": sum(1 for v in compared if v.winner is not None),
            "tokens": sum(r.judge_tokens for r in mine) + sum(v.tokens for v in compared),
            "cost": sum(costs) if costs else None,
        }
        if verdicts:
            for task in entry["tasks"]:
                asked = [v for v in compared if v.task == task["task"]]
                task["pairwise"] = tally(asked)
                # A trial number whose pair was never formed (an arm not measured,
                # an error): not compared either.
                trials = {r.trial for r in mine if r.task == task["task"]}
                task["pairwise"]["not_compared"] += len(trials - {v.trial for v in asked})


def judge_for(
    tasks: Sequence[Task], by_model: dict[str, Settings], model: str | None, pairwise: bool
) -> Judge | None:
    """The run's judge, when one is named and needed: a task has expectations, or
    pairs are compared."""
    if model is None or (not pairwise and not any(t.expectations for t in tasks)):
        return None
    return Judge(model, by_model[model])


def judge_line(judge: Judge, todo: Sequence[TrialJob], pairwise: bool) -> str:
    """What the judge will be asked, said with the estimate before any request."""
    graded = sum(1 for job in todo if job.task.expectations)
    asks = [f"up to {graded} request(s) to grade expectations"] if graded else []
    if pairwise:
        pairs_ = len({(j.task.id, j.model, j.trial) for j in todo})
        asks.append(f"up to {2 * pairs_} to compare with/without pairs (both orders)")
    return (
        f"judge {judge.model}: {' and '.join(asks) or 'nothing new to ask'}; "
        "its tokens and cost are reported apart from the arms'"
    )
