"""`eval --outcome --html FILE`: the report as one self-contained HTML page, for
a user who would rather look than read: per model the chart of per-task paired
differences with their 95% intervals (inline SVG, negative tasks first, as in the
terminal), the table of pass rates, pass@k and pass^k, not-measured counts,
pairwise counts, usage and cost per arm and the judge's apart; then per task its
prompt, a sample answer of each arm and the judge's verdicts.

Made from the `--json` document (the same numbers) and the trials' folders.
Nothing in it loads anything: no script, no font, no image from anywhere, and a
Content-Security-Policy that forbids all of them, so the page shows the same
offline and a hostile string cannot make it fetch or run anything. Every string
that comes from outside skillchat (task ids and prompts, the model's answers, the
judge's evidence, model names, notes) goes through `html.escape`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillchat.errors import FileError, NotRegularFile
from skillchat.evals.outcome_arms import ARMS, arm_folder
from skillchat.evals.outcome_run import run_folder
from skillchat.evals.outcome_tasks import Task, Tasks
from skillchat.evals.outcome_trial import TrialResult
from skillchat.localfile import read_regular

ANSWER_CHARS = 4_000  # of a sample answer shown
ROW = 26  # px per task in the chart
LABEL = 180  # px for the task names left of the chart
HALF = 220  # px of a difference of 100 points
NEGATIVE, POSITIVE, NEUTRAL = "#c62828", "#2e7d32", "#9e9e9e"

POLICY = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; }
.neg { color: #c62828; } .pos { color: #2e7d32; } .nm { color: #9e9e9e; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 8px; max-height: 20em; overflow: auto; }
.note { color: #8a5a00; }
"""


def e(value: Any) -> str:
    """Anything, as text safe inside HTML (and inside a quoted attribute)."""
    return html.escape(str(value), quote=True)


def write_html(
    path: Path,
    document: dict[str, Any],
    tasks: Tasks,
    results: Sequence[TrialResult],
    folders: dict[str, Path],
) -> None:
    """Write the page; FileError when it cannot be written."""
    page = render(document, tasks, results, folders)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise FileError(f"--html {path}: cannot write it ({exc.strerror or exc})") from None


def render(
    document: dict[str, Any],
    tasks: Tasks,
    results: Sequence[TrialResult],
    folders: dict[str, Path],
) -> str:
    by_id = {t.id: t for t in tasks.tasks}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
        f"<title>Does {e(tasks.skill)} help? skillchat eval --outcome</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Does <code>{e(tasks.skill)}</code> help?</h1>",
    ]
    if document.get("interrupted"):
        parts.append('<p class="note">Interrupted: only the finished trials are counted.</p>')
    for model in document["models"]:
        mine = [r for r in results if r.model == model["model"]]
        parts += _model(model, by_id, mine, folders.get(model["model"]))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _model(
    model: dict[str, Any], by_id: dict[str, Task], results: list[TrialResult], folder: Path | None
) -> list[str]:
    parts = [f"<h2>Model {e(model['model'])}</h2>"]
    mean = model["mean_delta"]
    if mean is not None:
        gate = ""
        if model["meets_min_delta"] is not None:
            gate = " (meets --min-delta)" if model["meets_min_delta"] else " (under --min-delta)"
        parts.append(
            f"<p><b>Mean paired delta: {_pts(mean['mean'])}</b>, 95% interval "
            f"[{_pts(mean['low'])}, {_pts(mean['high'])}]{gate}</p>"
        )
    parts.append(chart(model["tasks"], mean))
    parts.append(_table(model["tasks"]))
    parts.append(_usage(model))
    parts += [f'<p class="note">note: {e(note)}</p>' for note in model["notes"]]
    for row in model["tasks"]:
        task = by_id.get(row["task"])
        if task is not None:
            parts.append(_details(task, results, folder))
    return parts


def chart(rows: list[dict[str, Any]], mean: dict[str, float] | None) -> str:
    """Per task a bar from 0 to its difference (left: worse, right: better) and a
    line across its 95% interval; a task not measured says so in grey. Last, the
    mean over tasks with its interval."""
    if mean is not None:
        rows = [
            *rows,
            {
                "task": "mean of tasks",
                "delta": mean["mean"],
                "delta_ci95": [mean["low"], mean["high"]],
            },
        ]
    width, height = LABEL + 2 * HALF + 80, ROW * len(rows) + 30
    zero = LABEL + HALF
    svg = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" role="img" aria-label="paired difference per task">'
    ]
    for n, row in enumerate(rows):
        y = 10 + n * ROW
        svg.append(f'<text x="{LABEL - 8}" y="{y + 16}" text-anchor="end">{e(row["task"])}</text>')
        delta = row["delta"]
        if delta is None:
            svg.append(f'<text x="{zero + 6}" y="{y + 16}" fill="{NEUTRAL}">not measured</text>')
            continue
        colour = NEGATIVE if delta < 0 else POSITIVE
        x, w = (zero + delta * HALF, -delta * HALF) if delta < 0 else (zero, delta * HALF)
        svg.append(
            f'<rect x="{x:.1f}" y="{y + 4}" width="{max(w, 1):.1f}" height="{ROW - 10}" '
            f'fill="{colour}"><title>{e(row["task"])}: {_pts(delta)}</title></rect>'
        )
        if row["delta_ci95"] is not None:
            low, high = (zero + v * HALF for v in row["delta_ci95"])
            mid = y + ROW / 2 - 1
            svg.append(
                f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{mid}" y2="{mid}" '
                'stroke="#222" stroke-width="1.5"/>'
            )
        svg.append(f'<text x="{zero + HALF + 8}" y="{y + 16}" fill="{colour}">{_pts(delta)}</text>')
    bottom = 10 + len(rows) * ROW
    svg.append(f'<line x1="{zero}" x2="{zero}" y1="4" y2="{bottom}" stroke="#222"/>')
    for value in (-1, 0, 1):
        svg.append(
            f'<text x="{zero + value * HALF}" y="{bottom + 16}" text-anchor="middle" '
            f'fill="#555">{value * 100:+d}</text>'
        )
    svg.append("</svg>")
    return "".join(svg)


def _table(rows: list[dict[str, Any]]) -> str:
    k = rows[0]["with_skill"]["k"] if rows else 1
    head = ["task", "with", "without", f"pass@{k} w/wo", f"pass^{k} w/wo", "delta [95%]"]
    if any("pairwise" in row for row in rows):
        head.append("pairwise: with / without / tie / split / not compared")
    out = ["<table><tr>", *(f"<th>{e(h)}</th>" for h in head), "</tr>"]
    for row in rows:
        w, wo = row["with_skill"], row["without_skill"]
        delta = row["delta"]
        css = "nm" if delta is None else "neg" if delta < 0 else "pos"
        shown = "not measured" if delta is None else _pts(delta)
        if row["delta_ci95"] is not None:
            low, high = row["delta_ci95"]
            shown += f" [{_pts(low)}, {_pts(high)}]"
        cells = [
            e(row["task"]),
            _rate(w),
            _rate(wo),
            f"{_pct(w['pass_at_k'])} / {_pct(wo['pass_at_k'])}",
            f"{_pct(w['pass_hat_k'])} / {_pct(wo['pass_hat_k'])}",
            f'<span class="{css}">{shown}</span>',
        ]
        if "pairwise" in row:
            p = row["pairwise"]
            counts = (p["with"], p["without"], p["tie"], p["split"], p["not_compared"])
            cells.append(" / ".join(str(n) for n in counts))
        out += ["<tr>", *(f"<td>{c}</td>" for c in cells), "</tr>"]
    out.append("</table>")
    return "".join(out)


def _usage(model: dict[str, Any]) -> str:
    rows = []
    for key, form in (("tokens", "{:,.0f}"), ("seconds", "{:.1f}"), ("cost", "${:.4f}")):
        cells = [key + " / trial"]
        for arm in ARMS:
            mean = model["usage"][arm][key]["mean"]
            cells.append("-" if mean is None else form.format(mean))
        delta = model["usage_delta"][key]
        cells.append("-" if delta is None else ("+" if delta >= 0 else "") + form.format(delta))
        rows.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    judge = model.get("judge")
    if judge:
        cost = "-" if judge["cost"] is None else f"${judge['cost']:.4f}"
        rows.append(
            f"<tr><td>judge {e(judge['model'])}</td><td colspan=3>{judge['verdicts']} verdict(s), "
            f"{judge['not_graded']} trial(s) not graded, {judge['pairs_compared']} pair(s); "
            f"{judge['tokens']:,} tokens, {e(cost)} in all</td></tr>"
        )
    head = "<tr><th>usage</th><th>with</th><th>without</th><th>delta</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _details(task: Task, results: list[TrialResult], folder: Path | None) -> str:
    """The task's prompt, a sample answer per arm and the judge's verdicts."""
    parts = [f"<details><summary>eval-{e(task.id)}</summary>"]
    parts.append(f"<h4>Prompt</h4><pre>{e(task.prompt)}</pre>")
    for arm in ARMS:
        runs = sorted(r.trial for r in results if r.task == task.id and r.arm == arm)
        if folder is None or not runs:
            continue
        answer = _answer(run_folder(folder, task, arm, runs[0]) / "outputs" / "answer.md")
        parts.append(f"<h4>{arm_folder(arm)}, run-{runs[0]}: answer</h4><pre>{e(answer)}</pre>")
    verdicts = _verdicts(task, results)
    if verdicts:
        parts.append("<h4>Judge's verdicts</h4><table>")
        parts.append("<tr><th>expectation</th><th>with</th><th>without</th><th>evidence</th></tr>")
        for text, counts, evidence in verdicts:
            cells = [e(text), *(counts[arm] for arm in ARMS), e(evidence)]
            parts.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</details>")
    return "".join(parts)


def _verdicts(task: Task, results: list[TrialResult]) -> list[tuple[str, dict[str, str], str]]:
    """Per expectation: passed/judged per arm, and the first evidence given."""
    rows = []
    for text in task.expectations:
        counts: dict[str, str] = {}
        evidence = ""
        for arm in ARMS:
            checks = [
                c
                for r in results
                if r.task == task.id and r.arm == arm
                for c in r.checks
                if c["text"] == text
            ]
            passed = sum(1 for c in checks if c["passed"])
            counts[arm] = f"{passed}/{len(checks)}" if checks else "not asked"
            evidence = evidence or next((c["evidence"] for c in checks), "")
        rows.append((text, counts, evidence))
    return rows


def _answer(path: Path) -> str:
    try:
        data = read_regular(path, ANSWER_CHARS * 4)
    except (NotRegularFile, OSError):
        return "(no answer)"
    text = data.decode("utf-8", "replace")
    return text[:ANSWER_CHARS] + ("\n[cut]" if len(text) > ANSWER_CHARS else "")


def _rate(arm: dict[str, Any]) -> str:
    if arm["pass_rate"] is None:
        return '<span class="nm">not measured</span>' if arm["not_measured"] else "-"
    extra = f' <span class="nm">({arm["not_measured"]} not measured)</span>'
    return f"{arm['pass_rate']:.0%} {arm['passed']}/{arm['graded']}" + (
        extra if arm["not_measured"] else ""
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _pts(value: float) -> str:
    return f"{value * 100:+.0f} pts"
