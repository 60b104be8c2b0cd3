"""The terminal form of an outcome eval (evals/outcome_report.py): per model a table
of tasks (negative differences first) with each arm's pass rate, pass@k and pass^k
and the paired difference, a bar per task's difference, the mean difference with
its 95% interval, usage per arm, and the notes on what the numbers cannot carry.
Task ids and model names come from files: every one goes through ui/safe.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillchat.evals.outcome_arms import control
from skillchat.evals.outcome_report import ArmStats, ModelSummary, delta_of, meets
from skillchat.evals.outcome_stats import pass_at_k, pass_hat_k
from skillchat.ui import safe

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

BAR_HALF = 20  # characters of a bar for a difference of 100 points


def _rate(arm: ArmStats) -> str:
    if arm.rate is None:
        return "not measured" if arm.not_measured else "-"
    extra = f" ({arm.not_measured} n/m)" if arm.not_measured else ""
    return f"{arm.rate:.0%} {arm.passed}/{arm.graded}{extra}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _at(formula: Callable[[int, int, int], float | None], arm: ArmStats, k: int) -> str:
    return _pct(formula(arm.graded, arm.passed, k))


def _delta(delta: float | None) -> Text:
    if delta is None:
        return safe.line(("not measured", "warning"))
    style = "error" if delta < 0 else "success" if delta > 0 else ""
    return safe.line((f"{delta * 100:+.0f} pts", style))


def bar(delta: float) -> str:
    """A bar centred on 0: left of the axis for worse, right for better."""
    cells = round(abs(delta) * BAR_HALF)
    left = " " * (BAR_HALF - cells) + "█" * cells if delta < 0 else " " * BAR_HALF
    right = "█" * cells if delta > 0 else ""
    return f"{left}│{right}"


def print_outcome(
    summaries: Sequence[ModelSummary], min_delta: float | None, console: Console
) -> None:
    from rich.table import Table

    for summary in summaries:
        k = summary.rows[0].arms["with"].k if summary.rows else 1
        console.print(safe.line("model: ", (summary.model, "strong")))
        table = Table(expand=False)
        other = control(summary.rows[0].arms) if summary.rows else "without"
        short = "wo" if other == "without" else other
        columns = ["task", "with", other, f"pass@{k} w/{short}", f"pass^{k} w/{short}", "delta"]
        for name in columns:
            table.add_column(name, justify="left" if name == "task" else "right")
        for row in summary.rows:
            w, wo = row.arms["with"], row.arms[other]
            at = f"{_at(pass_at_k, w, k)}/{_at(pass_at_k, wo, k)}"
            hat = f"{_at(pass_hat_k, w, k)}/{_at(pass_hat_k, wo, k)}"
            table.add_row(
                safe.text(f"eval-{row.task}"),
                safe.text(_rate(w)),
                safe.text(_rate(wo)),
                safe.text(at),
                safe.text(hat),
                _delta(row.delta),
            )
        console.print(table)
        for row in summary.rows:
            interval = row.interval
            if interval is not None:
                style = "error" if interval.mean < 0 else "success"
                span = f" [{interval.low * 100:+.0f}, {interval.high * 100:+.0f}]"
                console.print(
                    safe.line(
                        f"  {safe.one_line(row.task, 24):>24} ", (bar(interval.mean), style), span
                    ),
                    soft_wrap=True,
                )
        interval = summary.mean_delta
        if interval is not None:
            verdict = meets(summary, min_delta)
            gate = ""
            if verdict is not None:
                gate = f"  ({'meets' if verdict else 'under'} --min-delta {min_delta:+.2f})"
            console.print(
                safe.line(
                    ("mean paired delta: ", "strong"),
                    f"{interval.mean * 100:+.1f} pts, 95% interval "
                    f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]{gate}",
                ),
                soft_wrap=True,
            )
        usage = summary.usage
        parts = []
        for key, form in (("tokens", "{:+,.0f}"), ("seconds", "{:+.1f}"), ("cost", "{:+.4f}")):
            d = delta_of(usage, key)
            if d is not None:
                mean = usage["with"][key]["mean"]
                parts.append(f"{key}/trial {mean:,.4g} with, delta {form.format(d)}")
        if parts:
            console.print(safe.text("; ".join(parts)), soft_wrap=True)
        for note in summary.notes:
            console.print(safe.line(("note: ", "warning"), note), soft_wrap=True)


def print_judge(document: dict[str, Any], console: Console) -> None:
    """Per model, the judge's line (what it graded, what it could not, what it
    cost, apart from the arms') and with --pairwise a line per task."""
    for entry in document["models"]:
        judge = entry.get("judge")
        if not judge:
            continue
        cost = "cost unknown" if judge["cost"] is None else f"${judge['cost']:.4f}"
        console.print(
            safe.line(
                ("judge ", "strong"),
                f"{judge['model']} on {entry['model']}: {judge['verdicts']} verdict(s), "
                f"{judge['not_graded']} trial(s) not graded, {judge['pairs_compared']} pair(s) "
                f"compared; {judge['tokens']:,} tokens, {cost} (not in the arms' usage)",
            ),
            soft_wrap=True,
        )
        for task in entry["tasks"]:
            counts = task.get("pairwise")
            if counts:
                console.print(
                    safe.line(
                        f"  pairwise eval-{safe.one_line(task['task'], 24)}: ",
                        f"with better {counts['with']}, without better {counts['without']}, "
                        f"tie {counts['tie']}, split by position {counts['split']}, "
                        f"not compared {counts['not_compared']}",
                    ),
                    soft_wrap=True,
                )
