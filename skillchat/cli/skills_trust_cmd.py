"""`skillchat skills trust [NAME...] [--all] [--revoke]`: which project skills the
user trusts, bound to their content (skillchat/skills/trust.py); without NAME, the
skills not trusted now.

A command of its own module, registered on skills_cmd's app: the trust store's
decisions, apart from what `list` and `show` print.
"""

from __future__ import annotations

from typing import Annotated

import typer

from skillchat.cli.common import ConfigOpt, NoMcpOpt, SkillsDirOpt, consoles_of
from skillchat.cli.skills_cmd import app, find_skill, load_trust, naming, settings_and_registry
from skillchat.skills.trust import apply_trust, needing_trust
from skillchat.ui import safe


@app.command("trust", short_help="Trust project skills' allowed-tools.")
def trust_cmd(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Skills to trust.")] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Every project skill not trusted now.")
    ] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Take the trust back.")] = False,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    no_mcp: NoMcpOpt = False,
) -> None:
    """Trust project skills, bound to their content: their allowed-tools may then
    pre-approve commands. Without NAME, list the skills not trusted now. A NAME no
    local skill has is looked for among the skills MCP servers serve."""
    from skillchat.errors import TrustError, UsageError

    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    store = load_trust(settings, consoles)
    skills = [registry.skills[n] for n in registry.names()]
    if names and all_:
        raise UsageError("name skills or use --all, not both")
    if not names and not all_:
        pending = needing_trust(store, skills)
        for skill, state in pending:
            typer.echo(safe.clean(f"{skill.name}\t{state.value}\t{skill.root}"))
        if not pending:
            consoles.err.print("every skill is trusted", markup=False)
        return
    if names:
        registry = naming(ctx, settings, registry, names, no_mcp)
    chosen = [find_skill(registry, n) for n in names] if names else skills
    if all_:
        if revoke:
            chosen = [skill for skill in chosen if store.has_record(skill)]
        else:
            chosen = [skill for skill, _ in needing_trust(store, chosen)]
        if not chosen:
            consoles.err.print("nothing to " + ("revoke" if revoke else "trust"), markup=False)
            return
    failed = False
    for skill in chosen:
        try:
            typer.echo(safe.clean(apply_trust(store, skill, revoke=revoke)))
        except TrustError as exc:
            consoles.warn(f"{skill.name}: not trusted: {exc}")
            failed = True
    store.save()
    if failed:
        raise typer.Exit(1)
