"""`skillchat skills show NAME [--file PATH]`: one skill whole (its frontmatter,
body, files, trust and how its `allowed-tools` read), or one of its files raw.

A command of its own module, registered on skills_cmd's app, as each `skills`
command past `list` is: running it imports this module alone. The same three
output forms as `skills list` (Rich on a terminal, plain lines when piped,
`--json`), every string the skill supplies printed through ui/safe.py.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, NoMcpOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.skills_cmd import (
    app,
    find_skill,
    load_trust,
    naming,
    problem_json,
    settings_and_registry,
)
from skillchat.cli.skills_listing import invocation_note
from skillchat.ui import safe
from skillchat.ui.console import stdout_is_terminal

if TYPE_CHECKING:
    from skillchat.skills.model import Skill
    from skillchat.skills.trust import TrustState
    from skillchat.ui.console import Consoles


@app.command("show", short_help="Show a skill's frontmatter, body and files.")
def show_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The skill's name.")],
    file: Annotated[
        str | None, typer.Option("--file", help="Print this file of the skill, raw.")
    ] = None,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
    no_mcp: NoMcpOpt = False,
) -> None:
    """Show a skill's frontmatter, body and files; with --file, that file's text. A
    name no local skill has is looked for among the skills MCP servers serve."""
    from skillchat.errors import FrontmatterError
    from skillchat.skills.files import list_skill_files, read_skill_file, read_skill_md
    from skillchat.skills.frontmatter import split_skill_md
    from skillchat.skills.frontmatter_yaml import json_safe

    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    skill = find_skill(naming(ctx, settings, registry, [name], no_mcp), name)
    if file is not None:
        got = read_skill_file(skill, file, limit=settings.skills.max_resource_bytes)
        if json_out:
            doc = {
                "skill_name": skill.name,
                "file_path": got.path,
                "size_bytes": got.size,
                "truncated": got.truncated,
                "content": got.text,
            }
            typer.echo(safe.json_text(doc, indent=2))
            return
        # Raw into a pipe or file (a byte-exact copy is the point of --file); on a
        # terminal, like everything else a skill wrote, with control characters visible.
        typer.echo(safe.clean(got.text) if stdout_is_terminal() else got.text, nl=False)
        if got.truncated:
            consoles.warn(
                f"'{got.path}' cut at {settings.skills.max_resource_bytes:,} bytes "
                f"of {got.size:,} (max_resource_bytes)"
            )
        return
    md = read_skill_md(skill, limit=settings.skills.max_skill_md_bytes)
    try:
        frontmatter, body = split_skill_md(md.text)
    except FrontmatterError:  # cut inside the frontmatter, or edited since discovery
        frontmatter, body = json_safe(skill.frontmatter), md.text
    listing = list_skill_files(skill)
    files = listing.paths
    trust = load_trust(settings, consoles).state(skill)
    if json_out:
        doc = {
            "name": skill.name,
            "path": str(skill.root),
            "origin": skill.origin,
            "trust": trust.value,
            "allowed_tools": _allowed_tools_json(skill),
            "frontmatter": frontmatter,
            "body": body,
            "truncated": md.truncated,
            "files": files,
            "files_total": listing.total,
            "warnings": [problem_json(p) for p in skill.warnings],
        }
        typer.echo(safe.json_text(doc, indent=2))
        return
    if (cut := listing.notice()) is not None:
        consoles.warn(cut)
    if not stdout_is_terminal():
        typer.echo(safe.clean(f"name: {skill.name}\npath: {skill.root}\norigin: {skill.origin}"))
        typer.echo(f"trust: {safe.one_line(trust.describe())}")
        for key, value in frontmatter.items():
            if key != "name":
                typer.echo(f"{safe.one_line(str(key))}: {safe.one_line(_scalar(value))}")
        typer.echo("files:\n" + "\n".join(f"  {safe.one_line(f)}" for f in files))
        typer.echo("\n" + safe.clean(body.strip("\n")))
        if md.truncated:
            consoles.warn("SKILL.md was cut at max_skill_md_bytes")
        return
    _show_rich(consoles, skill, trust, frontmatter, body, files, md.truncated)


def _allowed_tools_json(skill: Skill) -> dict[str, Any] | None:
    """How skillchat reads the skill's `allowed-tools` (None: it declares none)."""
    from skillchat.skills.allowed_tools import parse_allowed_tools

    rules = parse_allowed_tools(skill.allowed_tools)
    if not rules.declared:
        return None
    return {
        "commands": [rule.entry for rule in rules.bash],
        "read_only": list(rules.read_only),
        "ignored": list(rules.ignored),
    }


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _show_rich(
    consoles: Consoles,
    skill: Skill,
    trust: TrustState,
    frontmatter: dict[str, Any],
    body: str,
    files: list[str],
    truncated: bool,
) -> None:
    from rich.panel import Panel
    from rich.table import Table

    out = consoles.out
    meta = Table.grid(padding=(0, 2))
    meta.add_column(style="strong")
    meta.add_column(overflow="fold")
    meta.add_row("path", safe.text(str(skill.root)))
    meta.add_row("origin", safe.text(skill.origin))
    meta.add_row("trust", safe.text(trust.describe()))
    if note := invocation_note(skill):
        meta.add_row("invocation", safe.text(note))
    for key, value in frontmatter.items():
        meta.add_row(safe.text(str(key)), safe.text(_scalar(value)))
    meta.add_row("files", safe.text("\n".join(files) or "(none)"))
    title = safe.text(safe.one_line(skill.name))
    out.print(Panel(meta, title=title, title_align="left", border_style="panel.border"))
    for w in skill.warnings:
        consoles.warn(str(w))
    out.print(safe.markdown(body))
    if truncated:
        consoles.warn("SKILL.md was cut at max_skill_md_bytes")
