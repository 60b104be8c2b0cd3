"""`skillchat eval --outcome EVALS_JSON`: does the skill help? Every task of a
skill's evals/evals.json runs with and without the skill (the two arms), `--trials`
times on each `--model`, is graded deterministically, and the report gives the
paired difference per task and its mean with a 95% interval (docs/eval.md).

Exit codes: 0 when every trial finished and, with `--min-delta D`, the interval's
lower bound is at least D on every model; 1 when it is not, or a trial failed;
2 for a bad command line or tasks file, or when the run is not confirmed;
130 on Ctrl-C, after the report of what finished (kept: a re-run resumes).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.evals.outcome_arms import Arm, Arms
    from skillchat.evals.outcome_judge import Judge
    from skillchat.evals.outcome_pairwise import PairVerdict
    from skillchat.evals.outcome_store import ResultStore
    from skillchat.evals.outcome_tasks import Tasks
    from skillchat.evals.outcome_trial import TrialJob, TrialResult, TrialSetup
    from skillchat.ui.console import Consoles


@dataclass(frozen=True)
class OutcomeOptions:
    """The command line of an outcome eval, besides the session's settings."""

    models: list[str]
    trials: int
    k: int | None
    jobs: int
    min_delta: float | None
    yes: bool
    out: Path | None
    allow_run: bool
    json_out: bool
    verifier_timeout_s: float
    judge_model: str | None = None  # grades expectations, compares pairs
    pairwise: bool = False
    html: Path | None = None
    baseline: Path | None = None  # the old arm: a snapshot folder of the skill
    baseline_ref: str | None = None  # ... or its folder at this git commit
    shard: tuple[int, int] | None = None  # (I, N): run the I-th of N shares
    save_chats: bool = False  # each finished trial's chat into the user's store


def outcome_eval(
    consoles: Consoles,
    tasks_file: Path,
    settings: Settings,
    by_model: dict[str, Settings],
    options: OutcomeOptions,
) -> None:
    """Plan, confirm, run (resuming), report; exit as the report says."""
    from skillchat.evals.outcome_arms import arm_registries
    from skillchat.evals.outcome_judged import judge_for, judge_line
    from skillchat.evals.outcome_run import (
        estimate,
        iteration_folder,
        measured_line,
        model_slug,
        plan_trials,
    )
    from skillchat.evals.outcome_shard import conditions, in_shard
    from skillchat.evals.outcome_store import ResultStore
    from skillchat.evals.outcome_tasks import load_tasks
    from skillchat.evals.outcome_trial import TrialSetup
    from skillchat.sandbox.detect import probe
    from skillchat.session_settings import load_registry

    k = options.k if options.k is not None else min(3, options.trials)
    if k > options.trials:
        raise UsageError(f"--k {k} is more than --trials {options.trials}")
    registry = load_registry(settings)
    tasks = load_tasks(tasks_file, {name: s.root for name, s in registry.skills.items()})
    judged = options.judge_model is not None
    need = "the LLM judge: --judge-model MODEL"
    ungraded = [
        f"evals.json: task {t.id}: nothing deterministic grades it"
        + (f" (its expectations need {need})" if t.expectations else "")
        + "; run, not graded"
        for t in tasks.tasks
        if not t.graded and not (t.expectations and judged)
    ] + [
        f"evals.json: task {t.id}: its expectations are not graded ({need})"
        for t in tasks.tasks
        if t.graded and t.expectations and not judged
    ]
    for problem in [*tasks.problems, *ungraded]:
        consoles.err.print(
            f"warning: {problem}", style="warning", markup=False, highlight=False, soft_wrap=True
        )
    if options.html is not None and not options.html.parent.is_dir():
        raise UsageError(f"--html {options.html}: no folder {options.html.parent} to write it in")
    if options.save_chats:  # an unusable chat store stops the run before any request
        from skillchat.session_settings import open_store

        open_store(settings.storage).close()
    out = options.out or Path(f"{tasks.skill}-workspace")
    status = probe()
    with tempfile.TemporaryDirectory(prefix="skillchat-outcome-") as stage:
        root = registry.skills[tasks.skill].root
        baseline = _baseline(root, options, Path(stage))
        arms = arm_registries(registry, tasks.skill, Path(stage), baseline)
        base = {m: out / model_slug(m) if len(options.models) > 1 else out for m in options.models}
        folders = {m: iteration_folder(base[m], arms.digest) for m in options.models}
        store = ResultStore(out, arms.digest, arms.old_digest)
        plan = plan_trials(tasks.tasks, options.models, options.trials, folders, arms.names)
        held = {
            m: conditions(
                by_model[m],
                arms.registries["with"],
                tasks.skill,
                status.available,
                options.allow_run,
                options.verifier_timeout_s,
            )
            for m in options.models
        }
        _write_manifest(out, tasks, arms, plan, store, folders, held, options, k)
        plan = [job for job in plan if in_shard(store.key(job), options.shard)]
        done = {job: r for job in plan if (r := store.get(job)) is not None}
        todo = [job for job in plan if job not in done]
        judge = judge_for(tasks.tasks, by_model, options.judge_model, options.pairwise)
        setup = TrialSetup(
            tasks.skill,
            root,
            arms.registries,
            by_model,
            options.allow_run,
            status.tools if status.available else None,
            options.verifier_timeout_s,
            judge,
        )
        if todo:  # a resumed run with nothing left loads no token counter
            planned = estimate(todo, arms.registries, by_model, tasks.skill)
            line = planned.line(len(done))
            if judge is not None:
                line += "\n" + judge_line(judge, todo, options.pairwise)
            _confirm(consoles, line, options.yes)
        # The first trial alone: its real usage makes the estimate of the others.
        results, interrupted = _run(consoles, todo[:1], setup, store, options)
        if len(todo) > 1 and not interrupted:
            if results[0].tokens and not results[0].error:
                consoles.err.print(
                    measured_line(results[0], planned), markup=False, highlight=False
                )
            more, interrupted = _run(consoles, todo[1:], setup, store, options)
            results += more
        results = [*done.values(), *results]
        verdicts: list[PairVerdict] = []
        if judge is not None and options.pairwise and not interrupted:
            verdicts, interrupted = _compare(
                consoles, results, tasks, folders, judge, store, options
            )
    verdicts_of = (judge, verdicts)
    report(consoles, results, tasks, folders, options, k, interrupted, arms.names, verdicts_of)


def _baseline(root: Path, options: OutcomeOptions, stage: Path) -> Path | None:
    """The old version's snapshot, staged, when `--baseline` or `--baseline-ref` asks."""
    from skillchat.evals.outcome_baseline import snapshot_folder, snapshot_ref

    target = stage / "baseline" / root.name
    if options.baseline is not None:
        snapshot_folder(options.baseline, target)
    elif options.baseline_ref is not None:
        snapshot_ref(root, options.baseline_ref, target)
    else:
        return None
    return target


def _write_manifest(
    out: Path,
    tasks: Tasks,
    arms: Arms,
    plan: list[TrialJob],
    store: ResultStore,
    folders: dict[str, Path],
    held: dict[str, dict[str, Any]],
    options: OutcomeOptions,
    k: int,
) -> None:
    """The run's manifest (outcome_shard.py), after refusing a store made under
    other conditions (`held`, by model)."""
    from skillchat.evals.outcome_shard import Manifest, check_resume, task_entries, write_manifest

    manifest = Manifest(
        skill=tasks.skill,
        digest=arms.digest,
        old_digest=arms.old_digest,
        arms=list(arms.names),
        tasks=task_entries(tasks.tasks),
        models=options.models,
        trials=options.trials,
        k=k,
        conditions=held,
        plan=[[store.key(j), j.task.id, j.model, j.arm, j.trial] for j in plan],
        shard=list(options.shard) if options.shard else None,
        workspaces={m: str(f.relative_to(out)) for m, f in folders.items()},
    )
    check_resume(out, manifest)
    write_manifest(out, manifest)


def _confirm(consoles: Consoles, line: str, yes: bool) -> None:
    """Say what will run; ask unless `--yes`; refuse without a terminal to ask on."""
    consoles.err.print(line, markup=False, highlight=False)
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError("not confirmed: add --yes to run without asking (no terminal to ask on)")
    if not typer.confirm("Run them?", default=False, err=True):
        raise UsageError("not run")


def _run(
    consoles: Consoles,
    todo: list[TrialJob],
    setup: TrialSetup,
    store: ResultStore,
    options: OutcomeOptions,
) -> tuple[list[TrialResult], bool]:
    """Run `todo`, each result stored as it finishes; Ctrl-C keeps the finished."""
    from skillchat.evals.outcome_trial import run_trial
    from skillchat.evals.runner import Evaluation
    from skillchat.redact import redact

    def one(job: TrialJob) -> TrialResult:
        if not options.save_chats:
            return finish(job, None)
        with tempfile.TemporaryDirectory(prefix="skillchat-trial-chat-") as chats:
            return finish(job, Path(chats))

    def finish(job: TrialJob, chats: Path | None) -> TrialResult:
        result = run_trial(job, setup, chats)
        if result.error:
            result.error = redact(result.error)
        store.put(job, result)  # before it counts as finished: Ctrl-C loses nothing
        if chats is not None:  # after: a re-run, which skips it, saves it only once
            _save_chat(consoles, chats, job, setup)
        return result

    evaluation = Evaluation(todo, options.jobs, one)
    try:
        if sys.stderr.isatty() and not options.json_out:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            columns = (TextColumn("trials"), BarColumn(), MofNCompleteColumn())
            with Progress(*columns, console=consoles.err, transient=True) as progress:
                bar = progress.add_task("trials", total=len(todo))

                def finished(result: TrialResult) -> None:
                    _say_error(consoles, result)
                    progress.advance(bar)

                evaluation.run(on_outcome=finished)
        else:
            evaluation.run(on_outcome=lambda r: _say_error(consoles, r))
    except KeyboardInterrupt:
        return list(evaluation.outcomes), True
    return list(evaluation.outcomes), False


def _save_chat(consoles: Consoles, chats: Path, job: TrialJob, setup: TrialSetup) -> None:
    """`--save-chats`: the trial's chat into the user's store; a store that fails
    is said in one line, and the trial's result stands."""
    from skillchat.errors import SkillchatError
    from skillchat.evals.outcome_chats import save_trial_chat

    try:
        save_trial_chat(chats, job, setup.skill, setup.settings[job.model])
    except SkillchatError as exc:
        _warn(consoles, f"eval-{job.task.id} {job.arm} run-{job.trial}: chat not saved: {exc}")


def _compare(
    consoles: Consoles,
    results: list[TrialResult],
    tasks: Tasks,
    folders: dict[str, Path],
    judge: Judge,
    store: ResultStore,
    options: OutcomeOptions,
) -> tuple[list[PairVerdict], bool]:
    """`--pairwise`: the judge compares every finished pair; Ctrl-C keeps the
    compared ones (stored) and the report counts them."""
    from skillchat.evals.outcome_judged import PAIRWISE_FOLDER, compare_all, pairs
    from skillchat.redact import redact

    def say(line: str) -> None:
        consoles.err.print(
            redact(line), style="warning", markup=False, highlight=False, soft_wrap=True
        )

    todo = pairs(results, tasks.tasks, folders)
    return compare_all(judge, todo, store.root / PAIRWISE_FOLDER, options.jobs, say)


def _say_error(consoles: Consoles, result: TrialResult) -> None:
    """A trial's error, one line as it happens (the run goes on)."""
    if result.error:
        _warn(consoles, f"eval-{result.task} {result.arm} run-{result.trial}: {result.error}")


def _warn(consoles: Consoles, line: str) -> None:
    consoles.err.print(line, style="warning", markup=False, highlight=False, soft_wrap=True)


def report(
    consoles: Consoles,
    results: list[TrialResult],
    tasks: Tasks,
    folders: dict[str, Path],
    options: OutcomeOptions,
    k: int,
    interrupted: bool,
    arms: tuple[Arm, Arm],
    judged: tuple[Judge | None, list[PairVerdict]],
) -> None:
    """The report of `results` (a run's, or merged shards'); exit as it says."""
    from skillchat.evals.outcome_judged import add_judge_json
    from skillchat.evals.outcome_report import meets, summarize, summary_json
    from skillchat.evals.outcome_run import write_benchmarks

    ids = [t.id for t in tasks.tasks]
    summaries = summarize(results, ids, options.models, k, arms)
    write_benchmarks(summaries, results, folders, tasks.skill, options.trials)
    document = summary_json(summaries, options.min_delta)
    add_judge_json(document, results, judged[1], judged[0], tasks.tasks)
    document["interrupted"] = interrupted
    document["workspaces"] = {m: str(f) for m, f in folders.items()}
    if options.html is not None:
        from skillchat.ui.outcome_html import write_html

        write_html(options.html, document, tasks, results, folders)
    if options.json_out:
        from skillchat.ui.safe import json_text

        sys.stdout.write(json_text(document, indent=2) + "\n")
    else:
        from skillchat.ui.outcome_table import print_judge, print_outcome

        print_outcome(summaries, options.min_delta, consoles.out)
        print_judge(document, consoles.out)
        for model, folder in folders.items():
            consoles.out.print(f"workspace ({model}): {folder}", markup=False, highlight=False)
        if options.html is not None:
            consoles.out.print(
                f"report: {options.html}", markup=False, highlight=False, soft_wrap=True
            )
    if interrupted:
        consoles.err.print(
            "interrupted: finished trials are kept; run the same command again to resume",
            style="warning",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(130)
    failed = any(r.error for r in results)
    if failed or any(meets(s, options.min_delta) is False for s in summaries):
        raise typer.Exit(1)
