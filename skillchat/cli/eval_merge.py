"""`skillchat eval merge SHARD... --out DIR`: the shards of one outcome eval
(`eval --outcome --shard I/N`, run on N machines or N jobs of a CI matrix)
combined into one results store, workspace and report, the same report one
machine running every trial prints (evals/outcome_shard.py). No request is sent.

Exit codes as `eval --outcome`'s: 0, or 1 when a trial failed or `--min-delta` is
not met; 2 when the folders are not every shard of one run, each once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skillchat.cli.common import JsonOpt
from skillchat.cli.eval_cmd import MinDeltaOpt
from skillchat.cli.invocation import consoles_of

if TYPE_CHECKING:
    from skillchat.evals.outcome_arms import Arm

ShardsArg = Annotated[
    list[Path],
    typer.Argument(
        help="The --out folders of the shards.", file_okay=False, exists=True, show_default=False
    ),
]
MergedOpt = Annotated[
    Path, typer.Option("--out", metavar="DIR", help="The merged workspace (made if missing).")
]


def eval_merge(
    ctx: typer.Context,
    shards: ShardsArg,
    out: MergedOpt,
    json_out: JsonOpt = False,
    min_delta: MinDeltaOpt = None,
) -> None:
    """Combine the shards of an outcome eval into one store and report."""
    from skillchat.cli.eval_outcome import OutcomeOptions, report
    from skillchat.evals.outcome_arms import control
    from skillchat.evals.outcome_run import iteration_folder, model_slug
    from skillchat.evals.outcome_shard import copy_trials, merge, write_manifest

    manifest, results = merge(shards, out)
    models = manifest.models
    base = {m: out / model_slug(m) if len(models) > 1 else out for m in models}
    folders = {m: iteration_folder(base[m], manifest.digest) for m in models}
    copy_trials(shards, manifest, folders)
    manifest.workspaces = {m: str(f.relative_to(out)) for m, f in folders.items()}
    write_manifest(out, manifest)
    options = OutcomeOptions(
        models, manifest.trials, manifest.k, 1, min_delta, True, out, False, json_out, 0.0
    )
    arms: tuple[Arm, Arm] = ("with", control(manifest.arms))
    consoles = consoles_of(ctx)
    tasks = manifest.task_list()
    # Pairwise verdicts stay in each shard's store: the merged report has the trials'.
    report(consoles, results, tasks, folders, options, manifest.k, False, arms, (None, []))
