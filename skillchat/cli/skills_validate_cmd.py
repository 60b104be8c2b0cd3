"""`skillchat skills validate [PATH...] [--strict]`: every problem of every skill,
as compiler-style lines, a summary, or `--json`; exit 1 if any has an error.

A command of its own module, registered on skills_cmd's app: it checks folders
the user names (skills/validate_paths.py) and needs none of the registry that
`list` and `show` read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of, load, skill_dirs_override
from skillchat.cli.skills_cmd import app, problem_json
from skillchat.ui import safe
from skillchat.ui.console import Consoles, stdout_is_terminal


@app.command("validate")
def validate_cmd(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Skill folders, folders of skills, SKILL.md files or '.'."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Unknown keys are errors, as in skills-ref.")
    ] = False,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Report every problem of every skill; exit 1 on an error.

    Without PATH, checks the configured skill directories (or --skills-dir).
    """
    from skillchat.skills.validate_paths import validate_paths

    if paths:
        reports = validate_paths(paths, strict=strict)
    else:
        settings = load(ctx, config, skill_dirs=skill_dirs_override(skills_dir))
        reports = validate_paths(settings.skills.resolved_dirs(), strict=strict, missing_ok=True)
    failed = [r for r in reports if not r.ok]
    if json_out:
        doc = {
            "ok": not failed,
            "strict": strict,
            "reports": [
                {
                    "path": str(r.path),
                    "name": r.name,
                    "ok": r.ok,
                    "problems": [problem_json(p) for p in r.problems],
                }
                for r in reports
            ],
        }
        typer.echo(safe.json_text(doc, indent=2))
    else:
        _print_reports(consoles_of(ctx), reports, strict)
    if failed:
        raise typer.Exit(1)


def _print_reports(consoles: Consoles, reports: list[Any], strict: bool) -> None:
    """Compiler-style `file:line: severity: message` lines, then a one-line summary."""
    terminal = stdout_is_terminal()
    out = consoles.out
    for report in reports:
        if terminal:
            mark = ("✓", "ok") if report.ok else ("✗", "error")
            name = safe.one_line(report.name or "-")
            out.print(safe.line(mark, " ", (name, "strong"), f"  {report.path}"))
        for p in report.problems:
            style = {"error": "error", "warning": "warning"}.get(p.severity, "muted")
            shown = safe.one_line(str(p))
            out.print(safe.text(f"  {shown}" if terminal else shown, style), soft_wrap=True)
    errors = sum(len(r.errors) for r in reports)
    warnings = sum(len(r.warnings) for r in reports)
    bad = sum(1 for r in reports if not r.ok)
    mode = "strict" if strict else "load"
    summary = (
        f"{len(reports)} checked ({mode} mode): {len(reports) - bad} ok, {bad} with errors; "
        f"{safe.counted(errors, 'error')}, {safe.counted(warnings, 'warning')}"
    )
    consoles.err.print(summary, markup=False, highlight=False, soft_wrap=True)
