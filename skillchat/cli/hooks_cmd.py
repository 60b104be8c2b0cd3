"""`skillchat hooks list` and `skillchat hooks trust ID... | --all`: the hooks a
chat started here would have (the user's config, the project's
`.skillchat/config.toml`, the skills' `hooks:`, installed plugins'), where each comes
from and whether it is trusted; and trusting the ones that need it, bound to their digest
(skillchat/hooks/trust.py). A hook that cannot be read is one line on stderr; the
others are listed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.skills_cmd import settings_and_registry
from skillchat.redact import redact
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.hooks.spec import Found, Hook
    from skillchat.hooks.trust import HookTrust

app = typer.Typer(  # its help: cli/root_cmd.py
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def _found(
    ctx: typer.Context, config: Path | None, skills_dir: list[Path] | None
) -> tuple[Found, HookTrust]:
    """The hooks of this folder and the trust store, each problem said once."""
    from skillchat.hooks.spec import find_hooks
    from skillchat.hooks.trust import HookTrust

    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    skills = registry.skills.values()
    found = find_hooks(settings.hooks or None, settings.config_path, Path.cwd(), skills)
    for problem in found.problems:
        consoles.warn(problem)
    trust = HookTrust.load()
    if trust.problem:
        consoles.warn(trust.problem)
    return found, trust


def _state(hook: Hook, trust: HookTrust) -> str:
    if not hook.needs_trust:
        return "yours"
    return "trusted" if trust.trusted(hook) else "not trusted"


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Every hook: its id, event, matcher, source, whether trusted, and its command."""
    found, trust = _found(ctx, config, skills_dir)
    rows = [
        {
            "id": hook.short_id,
            "event": hook.event,
            "matcher": hook.matcher,
            "source": hook.source,
            "where": hook.where,
            "runs": "sandbox" if hook.sandboxed else "host",
            "trust": _state(hook, trust),
            "command": redact(hook.command),  # a token written in a command stays off
        }
        for hook in found.hooks
    ]
    if json_out:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        consoles_of(ctx).err.print("no hooks are configured here", markup=False)
        return
    for row in rows:
        matcher = f" [{row['matcher']}]" if row["matcher"] else ""
        line = (
            f"{row['id']}  {row['event']}{matcher}  {row['trust']}  {row['where']}"
            f"  ({row['runs']})  {row['command']}"
        )
        typer.echo(safe.clean(line))


@app.command("trust")
def trust_cmd(
    ctx: typer.Context,
    ids: Annotated[list[str] | None, typer.Argument(help="Hook ids (`hooks list`).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every hook not trusted now.")] = False,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
) -> None:
    """Trust project and skill hooks as they are now: a later change to a hook's
    line or to a file it names makes it untrusted again."""
    from skillchat.errors import HookError, UsageError

    if bool(ids) == all_:
        raise UsageError("name hook ids (`skillchat hooks list`) or use --all")
    found, trust = _found(ctx, config, skills_dir)
    waiting = [h for h in found.hooks if not trust.trusted(h)]
    chosen = list(waiting) if all_ else []
    for wanted in ids or []:
        hits = [h for h in found.hooks if h.digest.startswith(wanted.lower())]
        if len(hits) != 1 or len(wanted) < 6:
            why = "names no hook here" if not hits else "is too short to name one hook"
            raise HookError(f"hook id '{wanted}' {why} (`skillchat hooks list`)")
        chosen.append(hits[0])
    if not chosen:
        consoles_of(ctx).err.print("nothing to trust", markup=False)
        return
    for hook in chosen:
        trust.trust(hook)
        typer.echo(safe.clean(f"trusted {hook.short_id}: {hook.event} of {hook.where}"))
    trust.save()
