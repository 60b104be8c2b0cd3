"""`skillchat skills cost` and `skillchat skills stats`: what the skills spend, and
how they were used (skillchat/evals/cost.py and usage.py do the counting).

Same three forms as the other `skills` commands: a Rich table on a terminal, tab-
separated lines on a pipe (`cost`: a header line, then one skill a line; the totals
on stderr), `--json`. Dates on a terminal are local, as `chats list` shows them. Both
are fast-path commands: no model library is imported.
"""

from __future__ import annotations

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.skills_cmd import app, settings_and_registry
from skillchat.ui import safe
from skillchat.ui.console import stdout_is_terminal


@app.command("cost", short_help="Tokens each skill costs (catalog, activation).")
def cost_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Tokens each skill costs: in the catalog, and when activated (body + files it
    points to); the fixed overhead and the total of every request.

    Counted with tiktoken's cl100k_base: exact for GPT-4, an estimate for others.
    """
    from skillchat.evals.cost import load_counter, skill_costs

    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    report = skill_costs(settings, registry, load_counter())
    if json_out:
        typer.echo(safe.json_text(report.as_json(), indent=2))
        return
    tokenizer = (
        f"tokens: {report.counter.name} (exact for GPT-4; an estimate for other models)"
        if report.counter.exact
        else f"tokens: {report.counter.name}: tiktoken could not load"
    )
    summary = [
        f"every request with skills: {report.total:,} tokens = overhead {report.overhead:,} "
        f"(rules {report.rules:,}, tool schemas {report.schemas:,}) + catalog "
        f"{report.catalog:,} ({len(registry.model_names())} skills)",
        tokenizer,
    ]
    if report.catalog_warning:
        summary.insert(1, report.catalog_warning)
    if caching := cached_prefix_line(settings.model.name, report.total):
        summary.insert(1, caching)
    if not stdout_is_terminal():  # the table's columns, a header first
        typer.echo("\t".join(("skill", "catalog", "body", "files", "activation", "note")))
        for s in report.skills:
            note = "shortened" if s.shortened else ("" if s.in_catalog else "not in catalog")
            fields = [s.name, s.catalog, s.body, s.files, s.activation, s.error or note]
            typer.echo("\t".join(safe.one_line(str(f)) for f in fields))
        for line in summary:
            consoles.err.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    from rich.table import Table

    table = Table(expand=False)
    table.add_column("skill", style="skill", no_wrap=True)
    for label in ("catalog", "body", "files", "activation"):
        table.add_column(label, justify="right")
    table.add_column("")
    for s in report.skills:
        note = "shortened" if s.shortened else ("" if s.in_catalog else "not in catalog")
        numbers = [f"{n:,}" for n in (s.catalog, s.body, s.files, s.activation)]
        table.add_row(safe.text(s.name), *numbers, safe.text(s.error or note, "warning"))
    consoles.out.print(table)
    for line in summary:
        consoles.out.print(safe.text(line, "muted"))


def cached_prefix_line(model: str, tokens: int) -> str | None:
    """For a model whose requests mark their prefix for the prompt cache (Anthropic's,
    natively), what the overhead and catalog cost a request once cached."""
    from skillchat.backend_table import backend_row
    from skillchat.engine.events import Usage
    from skillchat.engine.pricing import price

    if backend_row(model).name != "anthropic":
        return None
    line = f"{model}: prompt caching reads these {tokens:,} tokens from the cache on every "
    line += "request after the first"
    full = price(model, Usage(tokens, 0, tokens))
    cached = price(model, Usage(tokens, 0, tokens, None, tokens))
    if full is None or cached is None:
        return line
    return line + f" (${cached:.4f} a request instead of ${full:.4f})"


@app.command("stats", short_help="How the saved chats used each skill.")
def stats_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """How each skill was used in the saved chats: activations by the model and by
    /name, how many ran as forks, files read, commands run, last used; and the skills never used."""
    from skillchat.evals.usage import Tokens, skill_usage

    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    path = settings.storage.database_path()
    names = registry.names()
    saved = path.exists() or path.is_symlink()  # a dangling link: skill_usage says why
    usage, chats, tokens = skill_usage(path, names) if saved else ([], 0, Tokens())
    never = [u.name for u in usage if u.name in registry.skills and u.last_used is None]
    used = [u for u in usage if u.last_used is not None]
    if json_out:
        doc = {
            "database": str(path),
            "chats": chats,
            "skills": [u.as_json() for u in used],
            "never_used": never if saved else names,
            "tokens": tokens.as_json(),
        }
        typer.echo(safe.json_text(doc, indent=2))
        return
    if not saved:
        consoles.err.print(f"no chats yet ({path})", markup=False, highlight=False, soft_wrap=True)
        return
    footer = f"{safe.counted(chats, 'chat')}; never used: {', '.join(never) or 'none'}\n"
    footer += tokens.line()
    if not stdout_is_terminal():  # the table's columns, a header first
        labels = ("skill", "by model", "by /name", "files read", "commands", "last used", "forks")
        typer.echo("\t".join(labels))
        for u in used:
            fields = [u.name, u.by_model, u.by_user, u.files_read, u.commands, u.last_used, u.forks]
            typer.echo("\t".join(safe.one_line(str(f)) for f in fields))
        consoles.err.print(footer, markup=False, highlight=False, soft_wrap=True)
        return
    from rich.table import Table

    from skillchat.chats.export import local_time

    table = Table(expand=False)
    table.add_column("skill", style="skill", no_wrap=True)
    for label in ("by model", "by /name", "forks", "files read", "commands", "last used"):
        table.add_column(label, justify="right")
    for u in used:
        numbers = [str(n) for n in (u.by_model, u.by_user, u.forks, u.files_read, u.commands)]
        when = local_time(u.last_used) if u.last_used else ""  # as `chats list` shows it
        table.add_row(safe.text(u.name), *numbers, safe.text(when))
    consoles.out.print(table)
    consoles.out.print(safe.text(footer, "muted"))
