"""`skillchat eval QUERIES`: does the model pick the right skill?

Each query of the file goes through the real system prompt, catalog and loop, `--runs`
times on each `--model`, at most `--jobs` at once; the report says per skill and model
how often the skill triggered when it should and when it should not (evals/). Eval
chats are not saved: they would bury the user's own chats under hundreds of
throwaway ones, and the report keeps what matters of them.

Exit codes: 0 when every run finished and every skill meets `--min-trigger-rate`;
1 when one does not (or a run failed); 2 for a bad command line or query file;
130 on Ctrl-C, after the report of the runs that finished.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skillchat.cli.common import JsonOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.session_options import (
    AllowInstallOpt,
    SessionOptions,
    chosen_settings,
    session_command,
)
from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.evals.queries import EvalQuery
    from skillchat.evals.runner import Evaluation, Job, RunOutcome
    from skillchat.skills.registry import Registry
    from skillchat.ui.console import Consoles

QueriesArg = Annotated[
    Path,
    typer.Argument(
        help="eval_queries.json (a list of {query, should_trigger}) or a skill's evals/evals.json.",
        dir_okay=False,
        show_default=False,
    ),
]
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model", "-m", help="Model to evaluate; repeatable (default: the configured one)."
    ),
]
RunsOpt = Annotated[int, typer.Option("--runs", min=1, help="Runs of each query on each model.")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", min=1, help="Runs in flight at once.")]
SkillOpt = Annotated[
    str | None,
    typer.Option("--skill", help='The skill an eval_queries.json without "skill" keys is about.'),
]
MinRateOpt = Annotated[
    float | None,
    typer.Option(
        "--min-trigger-rate",
        min=0.0,
        max=1.0,
        metavar="R",
        help="Exit 1 when a skill's trigger rate is under R (0 to 1).",
    ),
]
OutcomeOpt = Annotated[
    bool,
    typer.Option(
        "--outcome",
        help="Grade the tasks of a skill's evals.json with and without the skill (docs/eval.md).",
    ),
]
TrialsOpt = Annotated[
    int, typer.Option("--trials", min=1, help="--outcome: trials per task, arm and model.")
]
KOpt = Annotated[
    int | None,
    typer.Option("--k", min=1, help="--outcome: the k of pass@k and pass^k (default 3)."),
]
MinDeltaOpt = Annotated[
    float | None,
    typer.Option(
        "--min-delta",
        min=-1.0,
        max=1.0,
        metavar="D",
        help="--outcome: exit 1 when the mean paired delta's 95% lower bound is under D.",
    ),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="--outcome: run without asking.")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", metavar="DIR", help="--outcome: the workspace (default ./SKILL-workspace)."
    ),
]
VerifierTimeoutOpt = Annotated[
    float,
    typer.Option("--verifier-timeout", min=1.0, help="--outcome: seconds a verifier may run."),
]

JudgeModelOpt = Annotated[
    str | None,
    typer.Option(
        "--judge-model",
        metavar="MODEL",
        help="--outcome: the model that grades expectations (none: they are not graded).",
    ),
]
PairwiseOpt = Annotated[
    bool,
    typer.Option(
        "--pairwise",
        help="--outcome: the judge also compares each with/without pair, blind, both orders.",
    ),
]
HtmlOpt = Annotated[
    Path | None,
    typer.Option(
        "--html", metavar="FILE", dir_okay=False, help="--outcome: also write an HTML report."
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        metavar="DIR",
        file_okay=False,
        help="--outcome: compare with this old copy of the skill (the old arm) instead of none.",
    ),
]
BaselineRefOpt = Annotated[
    str | None,
    typer.Option(
        "--baseline-ref",
        metavar="REF",
        help="--outcome: the old arm is the skill's folder at this git commit.",
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard", metavar="I/N", help="--outcome: run the I-th of N shares (eval merge)."
    ),
]


# The session options an eval run has no use for: `--model` (eval's own, repeatable),
# a saved chat to go on with (its runs are fresh and unsaved), a workspace and
# writing to it (a query comes with none), `--no-tools` (triggering is a get_skill
# call), a local model file (one is a [models.NAME] table with `gguf`, compared by
# its name), and a choice of MCP servers (the config's all with `--allow-mcp`, else
# none). The rest are a session's as `ask` takes them.
LEFT_OUT = (
    "model", "last", "chat_id", "workspace", "no_workspace", "allow_write", "no_tools",
    "gguf", "local", "chat_template", "mcp", "no_mcp",
)  # fmt: skip


@session_command(leave_out=LEFT_OUT)
def eval_cmd(
    ctx: typer.Context,
    queries_file: QueriesArg,
    model: ModelsOpt = None,
    runs: RunsOpt = 3,
    jobs: JobsOpt = 4,
    skill: SkillOpt = None,
    min_trigger_rate: MinRateOpt = None,
    json_out: JsonOpt = False,
    allow_install: AllowInstallOpt = False,
    outcome: OutcomeOpt = False,
    trials: TrialsOpt = 5,
    k: KOpt = None,
    min_delta: MinDeltaOpt = None,
    yes: YesOpt = False,
    out: OutOpt = None,
    verifier_timeout: VerifierTimeoutOpt = 60.0,
    judge_model: JudgeModelOpt = None,
    pairwise: PairwiseOpt = False,
    html: HtmlOpt = None,
    baseline: BaselineOpt = None,
    baseline_ref: BaselineRefOpt = None,
    shard: ShardOpt = None,
    *,
    options: SessionOptions,
) -> None:
    """Replay trigger queries through the real catalog and loop, and report per skill
    and model how often each skill was activated when it should and should not be."""
    from dataclasses import replace

    from skillchat.evals.queries import load_queries
    from skillchat.evals.runner import Evaluation, plan_runs, run_once

    # MCP servers only with --allow-mcp: each run is a session of its own, and
    # starting every server for every run to refuse its tools would be waste.
    options = replace(options, no_mcp=not options.allow_mcp)
    settings, sources = chosen_settings(ctx, options, allow_install=allow_install)
    _check_mode(outcome, skill, min_trigger_rate, min_delta, yes, out)
    if not outcome and (judge_model or pairwise or html):
        raise UsageError("--judge-model, --pairwise and --html are for --outcome evals")
    if pairwise and not judge_model:
        raise UsageError("--pairwise needs --judge-model MODEL: the model that compares answers")
    if not outcome and (baseline or baseline_ref or shard):
        raise UsageError("--baseline, --baseline-ref and --shard are for --outcome evals")
    if (baseline or baseline_ref) and (pairwise or html):
        raise UsageError("--pairwise and --html compare with and without: not with a baseline yet")
    if outcome:
        from skillchat.cli.eval_outcome import OutcomeOptions, outcome_eval

        chosen = list(dict.fromkeys(model or [settings.model.name]))
        wanted = OutcomeOptions(
            chosen, trials, k, jobs, min_delta, yes, out, options.allow_run, json_out,
            verifier_timeout, judge_model, pairwise, html,
            *_arms_and_shard(baseline, baseline_ref, shard, min_delta),
        )  # fmt: skip
        # The judge's backend is checked with the models': a missing key stops here.
        # No hooks: they would change what each trial measures (docs/hooks.md).
        named = list(dict.fromkeys([*chosen, *([judge_model] if judge_model else [])]))
        by_model = _model_settings(
            settings.replaced(tools=True, hooks_enabled=False), sources, named
        )
        outcome_eval(consoles_of(ctx), queries_file, settings, by_model, wanted)
        return
    # Triggering is a get_skill call. A query comes with no workspace, and eval
    # measures whether a description triggers: a skill with `paths` is listed. No
    # hooks: a prompt's added context would change what is measured (docs/hooks.md).
    settings = settings.replaced(tools=True, paths_gate=False, hooks_enabled=False)
    queries = load_queries(queries_file, skill)
    from skillchat.session_settings import load_registry

    registry = load_registry(settings)
    _check_skills(queries, registry, queries_file.name)
    models = list(dict.fromkeys(model or [settings.model.name]))
    by_model = _model_settings(settings, sources, models)
    plan = plan_runs(queries, models, runs)
    evaluation = Evaluation(
        plan,
        jobs,
        lambda job: _redacted(run_once(job, by_model[job.model], registry, options.allow_run)),
    )
    from skillchat.skills.overrides import applied

    _evaluate(consoles_of(ctx), evaluation, runs, min_trigger_rate, json_out, applied(registry))


def _check_mode(
    outcome: bool,
    skill: str | None,
    min_trigger_rate: float | None,
    min_delta: float | None,
    yes: bool,
    out: Path | None,
) -> None:
    """A flag of the other kind of eval is a mistake, not something to ignore: a
    CI gate on --min-delta without --outcome would never gate."""
    if outcome and (skill is not None or min_trigger_rate is not None):
        raise UsageError("--skill and --min-trigger-rate are for trigger evals, not --outcome")
    if not outcome and (min_delta is not None or yes or out is not None):
        raise UsageError("--min-delta, --yes and --out are for --outcome evals")


def _arms_and_shard(
    baseline: Path | None, ref: str | None, shard: str | None, min_delta: float | None
) -> tuple[Path | None, str | None, tuple[int, int] | None]:
    """The old arm's source (one at most) and the shard; a gate is for a whole run."""
    from skillchat.evals.outcome_shard import parse_shard

    if baseline is not None and ref is not None:
        raise UsageError("--baseline and --baseline-ref: give one old version, not two")
    if shard is not None and min_delta is not None:
        raise UsageError("--min-delta gates the whole run: give it to eval merge, not a shard")
    return baseline, ref, None if shard is None else parse_shard(shard)


def _model_settings(
    settings: Settings, sources: Mapping[str, str], models: list[str]
) -> dict[str, Settings]:
    """Each model's settings (a [models.NAME] brings its table, the command line
    wins), its backend checked now."""
    from skillchat.config import with_model

    given = {name for name, source in sources.items() if source in ("flag", "env")}
    by_model = {name: with_model(settings, name, given) for name in models}
    _check_backends(by_model)
    return by_model


def _check_skills(queries: list[EvalQuery], registry: Registry, where: str) -> None:
    """Every skill the file names is one skillchat found: a query about a skill the
    model cannot see would only measure the typo."""
    from skillchat.config import fixture_hint

    for query in queries:
        off = [e for e in registry.excluded if e.name == query.skill and e.reason == "off"]
        if off:
            raise UsageError(f"{where}: entry {query.id}: the skill {off[0].summary()}")
        if query.skill not in registry.skills:
            raise UsageError(
                f"{where}: entry {query.id}: no usable skill named '{query.skill}' in the "
                f"skills directories (skillchat skills list){fixture_hint(query.skill)}"
            )


def _check_backends(by_model: dict[str, Settings]) -> None:
    """Build each model's backend once now: a missing key stops eval before any run,
    not as the same error in every run."""
    from skillchat.engine.backends.base import Timeouts
    from skillchat.engine.backends.select import make_backend
    from skillchat.engine.resolve import asked, resolve

    for settings in by_model.values():
        make_backend(resolve(settings, asked(settings), probe=False), Timeouts.of(settings.model))


def _evaluate(
    consoles: Consoles,
    evaluation: Evaluation[Job, RunOutcome],
    runs: int,
    min_trigger_rate: float | None,
    json_out: bool,
    overrides: dict[str, str],
) -> None:
    """Run it (a progress bar on a terminal), print the report, exit as it says;
    the report names the user's `overrides` that shaped the catalog."""
    from skillchat.evals.report import build_report

    plan = evaluation.plan
    interrupted = False
    try:
        if sys.stderr.isatty() and not json_out:
            _run_with_progress(consoles, evaluation)
        else:
            evaluation.run()
    except KeyboardInterrupt:
        interrupted = True
    report = build_report(
        plan,
        list(evaluation.outcomes),
        runs=runs,
        min_trigger_rate=min_trigger_rate,
        interrupted=interrupted,
        overrides=overrides,
    )
    if json_out:
        from skillchat.ui.safe import json_text

        sys.stdout.write(json_text(report.as_json(), indent=2) + "\n")
    else:
        from skillchat.ui.eval_table import print_report

        print_report(report, consoles.out)
    if interrupted:
        consoles.err.print("interrupted", style="warning", markup=False, highlight=False)
        raise typer.Exit(130)
    if not report.ok:
        raise typer.Exit(1)


def _redacted(outcome: RunOutcome) -> RunOutcome:
    """A run's error with any key or URL credential masked: a provider's error text
    may echo them, and the report goes to the screen and to CI logs."""
    from dataclasses import replace

    from skillchat.redact import redact

    return replace(outcome, error=redact(outcome.error)) if outcome.error else outcome


def _run_with_progress(consoles: Consoles, evaluation: Evaluation[Job, RunOutcome]) -> None:
    """`evaluation.run()` with a progress bar on stderr (a terminal only)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("eval"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=consoles.err, transient=True) as progress:
        task = progress.add_task("runs", total=len(evaluation.plan))
        evaluation.run(on_outcome=lambda _: progress.advance(task))
