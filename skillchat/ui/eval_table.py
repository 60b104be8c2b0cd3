"""The terminal form of an eval report (evals/report.py): one table row per skill
and model, then the queries that went wrong, then notes on the catalog and on runs
that did not finish. Skill names, queries, model names and errors come from files
and providers: every one goes through ui/safe.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.evals.report import Report, SkillResult, activated_instead
from skillchat.ui import safe

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

QUERY_CHARS = 70


def _rate(rate: float | None, hits: int, runs: int) -> str:
    return "-" if rate is None else f"{rate:.0%} {hits}/{runs}"


def _cells(result: SkillResult, minimum: float | None) -> dict[str, Text]:
    """Every column's cell for one skill and model, by column name."""
    data = result.as_json(minimum)
    trigger = _rate(data["trigger_rate"], data["triggered_runs"], data["should_trigger_runs"])
    false = _rate(
        data["false_trigger_rate"], data["false_trigger_runs"], data["should_not_trigger_runs"]
    )
    tokens = "-" if result.mean_tokens is None else f"{result.mean_tokens:,.0f}"
    cost = "-" if result.mean_cost is None else f"${result.mean_cost:.4f}"
    catalog_style = {"full": "", "shortened": "warning", "cut": "error"}[result.catalog]
    return {
        "model": safe.text(result.model),
        "skill": safe.text(result.skill, "skill"),
        "triggered": safe.line((trigger, "error" if result.below(minimum) else "")),
        "false triggers": safe.line((false, "error" if data["false_trigger_runs"] else "")),
        "catalog": safe.line((result.catalog, catalog_style)),
        "errors": safe.line((str(result.errors), "error" if result.errors else "")),
        "tokens/run": safe.text(tokens),
        "cost/run": safe.text(cost),
    }


def _columns(report: Report) -> list[str]:
    """The columns worth a place: the model only with several, errors and cost only
    when there are some (an 80-column pipe fits the rest)."""
    columns = ["skill", "triggered", "false triggers", "catalog", "tokens/run"]
    if len(report.models) > 1:
        columns.insert(0, "model")
    if report.errors:
        columns.insert(-1, "errors")
    if any(s.mean_cost is not None for s in report.skills):
        columns.append("cost/run")
    return columns


def print_report(report: Report, console: Console) -> None:
    """The table, the failed queries and the notes, on `console`."""
    from rich.table import Table

    columns = _columns(report)
    table = Table(expand=False)
    for name in columns:
        left = name in ("model", "skill", "catalog")
        table.add_column(name, justify="left" if left else "right", no_wrap=name == "skill")
    for row in report.skills:
        cells = _cells(row, report.min_trigger_rate)
        table.add_row(*(cells[name] for name in columns))
    if len(report.models) == 1:
        console.print(safe.line("model: ", (report.models[0], "strong")))
    console.print(table)
    failed = [(s, r) for s in report.skills for r in s.failed]
    if failed:
        console.print(safe.line(("Queries that went wrong", "strong")))
    for skill, result in failed:
        q = result.job.query
        expected = "should trigger" if q.should_trigger else "should not trigger"
        parts: list[str | tuple[str, str]] = [
            "  ",
            (f"{skill.skill}", "skill"),
            f" on {skill.model} ({expected}) {len(result.wrong)}/{len(result.outcomes)} wrong: ",
            safe.one_line(q.query, QUERY_CHARS),
        ]
        instead = activated_instead(result)
        if instead:
            parts.append(("  activated instead: " + ", ".join(instead), "warning"))
        errors = {o.error for o in result.wrong if o.error}
        if errors:
            parts.append(("  error: " + safe.one_line(sorted(errors)[0], 200), "error"))
        console.print(safe.line(*parts), soft_wrap=True)
    for note in notes(report):
        console.print(safe.line(("note: ", "warning"), note), soft_wrap=True)


def notes(report: Report) -> list[str]:
    """Lines on the catalog's effect, unfinished runs and the minimum rate."""
    lines = []
    if report.overrides:
        chosen = ", ".join(f"{name} {shown}" for name, shown in report.overrides.items())
        lines.append(f"overrides applied (skillchat skills pin|name-only|manual|off): {chosen}")
    for s in report.skills:
        if s.skill in report.overrides and s.catalog != "full":
            lines.append(
                f"{s.skill}: {report.overrides[s.skill]} by the user's override, so the "
                "model saw less than the author wrote"
            )
        elif s.catalog == "shortened":
            lines.append(
                f"{s.skill}: its description was shortened in the catalog on {s.model} "
                "(catalog_max_chars): the model saw less than the author wrote"
            )
        elif s.catalog == "cut":
            lines.append(
                f"{s.skill}: left out of the catalog on {s.model} (catalog_max_chars): "
                "the model could find it only through list_skills, so a miss is the "
                "runner's budget, not the description"
            )
    if report.interrupted:
        lines.append(f"interrupted: {report.finished} of {report.planned} runs finished")
    if report.errors:
        lines.append(f"{safe.counted(report.errors, 'run')} failed and count toward no rate")
    minimum = report.min_trigger_rate
    below = [s for s in report.skills if s.below(minimum)]
    if below and minimum is not None:
        names = ", ".join(f"{s.skill} on {s.model}" for s in below)
        lines.append(f"under --min-trigger-rate {minimum:.0%}: {names}")
    return lines
