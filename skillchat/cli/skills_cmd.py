"""`skillchat skills list`: what the user can see of the registry, and the
`skills` app its other commands register on (`show`: cli/skills_show_cmd.py,
`validate`: cli/skills_validate_cmd.py, `trust`: cli/skills_trust_cmd.py, which
project skills the user trusts, see skillchat/skills/trust.py).

Three output forms for each: Rich tables and Markdown on a terminal, plain lines
when piped (`name<TAB>description<TAB>trust`, then `<TAB>override` when the user
overrode any: skills/overrides.py; easy to `cut`), and `--json` for scripts.
No MCP server starts for these commands unless asked: `skills list --served` lists
the skills the configured servers serve beside the local ones, and `skills show` and
`skills trust` look among them for a name no local skill has (`--no-mcp`: not even
then). Without the flag, `skills list` says which servers served skills when they
last started (mcp/listing.py), from the kept lists alone.

Everything here reads skills only through the registry and the file-access layer,
and every string a skill supplies (name, description, body, frontmatter values,
file names) is printed through ui/safe.py: as text, control characters visible.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of, load, skill_dirs_override
from skillchat.cli.lazy import LazyGroup, plain_usage
from skillchat.cli.skills_listing import long_table, short_lines
from skillchat.errors import SkillchatError
from skillchat.sections import BUNDLED_SKILLS
from skillchat.skills.model import Excluded, Problem, Skill
from skillchat.skills.registry import Registry
from skillchat.skills.trust import TrustState, TrustStore
from skillchat.skills.validation import LENIENT_NOTE
from skillchat.ui import safe
from skillchat.ui.console import stdout_is_terminal

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.ui.console import Consoles

# Where each `skills` subcommand is registered on `app`, in the order `skills --help`
# lists them: running one imports its module alone and builds it alone.
SUBCOMMANDS = {
    "list": "skillchat.cli.skills_cmd",
    "show": "skillchat.cli.skills_show_cmd",
    "validate": "skillchat.cli.skills_validate_cmd",
    "trust": "skillchat.cli.skills_trust_cmd",
    "cost": "skillchat.cli.skills_usage_cmd",
    "stats": "skillchat.cli.skills_usage_cmd",
    "add": "skillchat.cli.skills_add_cmd",
    "remove": "skillchat.cli.skills_add_cmd",
    "verify": "skillchat.cli.skills_add_cmd",
    "sync": "skillchat.cli.skills_add_cmd",
    "update": "skillchat.cli.skills_add_cmd",
    "deps": "skillchat.cli.skills_deps_cmd",
    "pin": "skillchat.cli.skills_override_cmd",
    "name-only": "skillchat.cli.skills_override_cmd",
    "manual": "skillchat.cli.skills_override_cmd",
    "off": "skillchat.cli.skills_override_cmd",
    "reset": "skillchat.cli.skills_override_cmd",
}


class _SkillsGroup(LazyGroup):
    """`skills`: its commands built from `app` as Typer would, one at a time."""

    def names(self) -> list[str]:
        return list(SUBCOMMANDS)

    def build(self, name: str) -> Any:
        import_module(SUBCOMMANDS[name])
        info = next(info for info in plain_usage(app).registered_commands if info.name == name)
        return typer.main.get_command_from_info(
            info,
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=self.rich_markup_mode,
        )


app = typer.Typer(no_args_is_help=True, cls=_SkillsGroup)  # its help: cli/app.py


ServedOpt = Annotated[
    bool,
    typer.Option(
        "--served", help="Also the skills the configured MCP servers serve (starts them)."
    ),
]


def settings_and_registry(
    ctx: typer.Context, config: Path | None, dirs: list[Path] | None, served: bool = False
) -> tuple[Settings, Registry]:
    """The command's settings and the registry of the configured (or `--skills-dir`)
    directories, scanned once: none, said once, when skills are disabled; with
    `served`, the skills the MCP servers serve too (starting them)."""
    from skillchat.session_settings import load_registry as registry_of

    settings = load(ctx, config, skill_dirs=skill_dirs_override(dirs))
    if not settings.skills.enabled:
        consoles_of(ctx).warn("skills are disabled in the config ([skills] enabled = false)")
        return settings, registry_of(settings)
    registry = registry_of(settings)
    return settings, with_served(ctx, settings, registry) if served else registry


def naming(
    ctx: typer.Context, settings: Settings, registry: Registry, names: list[str], no_mcp: bool
) -> Registry:
    """The registry to find `names` in: the local one, or when one of them is no
    local skill (and not `no_mcp`), with the skills the MCP servers serve, which are
    started for it."""
    if no_mcp or not settings.skills.enabled or all(registry.get(n) for n in names):
        return registry
    return with_served(ctx, settings, registry)


def _serving(settings: Settings) -> list[str]:
    """The configured servers that served skills when they last started."""
    if not settings.mcp.active():
        return []
    from skillchat.mcp.listing import kept

    lists = kept(settings.mcp.active())
    return [name for name, listed in lists.items() if listed.skills]


def with_served(ctx: typer.Context, settings: Settings, registry: Registry) -> Registry:
    """The registry plus the skills the configured MCP servers serve (their servers
    live until the command ends: `show` reads files through them)."""
    if not settings.mcp.active():
        return registry
    from skillchat.mcp.hub import McpHub
    from skillchat.skills.registry import with_served

    hub = McpHub(settings.mcp.active())
    ctx.call_on_close(hub.close)
    hub.start()
    hub.wait()
    served, refused = hub.served_skills()
    warn = consoles_of(ctx).warn
    for line in refused:
        warn(line)
    for name, state in hub.servers.items():
        if state.state == "failed":
            warn(f"MCP server '{name}' is not available: {state.error}")
    return with_served(registry, served, settings.skills.disabled)


def problem_json(p: Problem) -> dict[str, Any]:
    return {"path": str(p.path), "line": p.line, "severity": p.severity, "message": p.message}


def load_trust(settings: Settings, consoles: Consoles) -> TrustStore:
    """The user's trust store (covering the config's `[packages]` too); an unusable
    one is one warning and trusts nothing."""
    store = TrustStore.load(packages=settings.run.packages)
    if store.problem:
        consoles.warn(store.problem)
    return store


def _skill_json(s: Skill, trust: TrustState, registry: Registry) -> dict[str, Any]:
    chosen = registry.overrides.get(s.name)
    return {
        "name": s.name,
        "description": s.description,
        "path": str(s.root),
        "source_dir": str(s.source_dir),
        "origin": s.origin,
        "uri": s.remote.uri if s.remote is not None else None,
        "trust": trust.value,
        "bundled": s.source_dir == BUNDLED_SKILLS,
        "model_invocable": s.model_invocable,
        "user_invocable": s.user_invocable,
        "override": s.override,
        "override_from": chosen.scope if chosen is not None else None,
        "warnings": [problem_json(p) for p in s.warnings],
    }


def _excluded_json(e: Excluded) -> dict[str, Any]:
    return {
        "path": str(e.path),
        "name": e.name,
        "reason": e.reason,
        "detail": e.summary(),
        "problems": [problem_json(p) for p in e.problems],
        "shadowed_by": str(e.shadowed_by) if e.shadowed_by else None,
    }


def _left_out_line(registry: Registry) -> str | None:
    if not registry.excluded:
        return None
    counts: dict[str, int] = {}
    for e in registry.excluded:
        counts[e.reason] = counts.get(e.reason, 0) + 1
    detail = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
    return (
        f"{safe.counted(len(registry.excluded), 'skill')} left out ({detail}): "
        "`skillchat skills list --json` or `skillchat skills validate` says why"
    )


def _warn_lenient(consoles: Consoles, registry: Registry, skills: list[Skill]) -> None:
    """Skills loaded although the spec says no: one line each the first time these
    folders give these warnings, then one line counting them (left_out_seen.py)."""
    lenient = [(s.name, w.message) for s in skills for w in s.warnings]
    lenient = [(name, message) for name, message in lenient if message.endswith(LENIENT_NOTE)]
    if not lenient:
        return
    lines = [safe.one_line(f"{name}: {message}") for name, message in lenient]
    from skillchat.skills.left_out_seen import warnings_first_time

    if warnings_first_time(registry, lines):
        for line in lines:
            consoles.warn(line)
    else:
        count = safe.counted(len({name for name, _ in lenient}), "skill")
        consoles.warn(
            f"{count} loaded despite the spec, as said before: `skills validate` says why"
        )


@app.command("list", short_help="List usable skills and count those left out.")
def list_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    skills_dir: SkillsDirOpt = None,
    json_out: JsonOpt = False,
    long: Annotated[
        bool, typer.Option("--long", "-l", help="Whole descriptions, folded, in a grid.")
    ] = False,
    served: ServedOpt = False,
) -> None:
    """List usable skills, one line each on a terminal, and count the ones left out
    (invalid, shadowed, over the limit)."""
    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir, served)
    if not served and settings.skills.enabled and (serving := _serving(settings)):
        consoles.warn(
            f"skills served by MCP servers are not listed ({', '.join(serving)}): "
            "skillchat skills list --served lists them"
        )
    skills = [registry.skills[n] for n in registry.names()]
    store = load_trust(settings, consoles)
    trust = {s.name: store.state(s) for s in skills}
    if json_out:
        doc = {
            "skills": [_skill_json(s, trust[s.name], registry) for s in skills],
            "excluded": [_excluded_json(e) for e in registry.excluded],
            "directories": [str(d) for d in registry.directories],
            "directory_problems": [problem_json(p) for p in registry.problems],
        }
        typer.echo(safe.json_text(doc, indent=2))
        return
    for problem in registry.problems:  # a directory not listed, or named a level too high
        consoles.warn(f"{problem.path}: {problem.message}")
    _warn_lenient(consoles, registry, skills)
    footer = _left_out_line(registry)
    if not stdout_is_terminal():
        if not skills:  # said on stderr: stdout stays empty for scripts
            dirs = ", ".join(str(d) for d in registry.directories) or "no directories"
            consoles.err.print(f"no skills found (searched: {dirs})", markup=False, soft_wrap=True)
        # The override last, when any applies: a column added keeps `cut -f1-3` working.
        overridden = any(s.override for s in skills)
        for s in skills:
            description = safe.one_line(s.description)
            row = f"{safe.one_line(s.name)}\t{description}\t{trust[s.name].value}"
            typer.echo(f"{row}\t{s.override or '-'}" if overridden else row)
        if footer:
            consoles.err.print(footer, markup=False, soft_wrap=True)
        return
    out = consoles.out
    overrides = {
        s.name: chosen.shown() for s in skills if (chosen := registry.overrides.get(s.name))
    }
    if skills and long:
        out.print(long_table(skills, trust, overrides))
    elif skills:
        for line in short_lines(skills, trust, out.width, overrides):
            out.print(line, no_wrap=True, overflow="ellipsis")
    else:
        dirs = ", ".join(str(d) for d in registry.directories) or "none of the directories exist"
        out.print(safe.text(f"No skills found (searched: {dirs})."))
    out.print(safe.counted(len(skills), "skill") + (f"; {footer}" if footer else ""), markup=False)


def find_skill(registry: Registry, name: str) -> Skill:
    skill = registry.get(name)
    if skill is not None:
        return skill
    for e in registry.excluded:
        if name in (e.name, e.path.name):
            raise SkillchatError(f"skill '{name}' is not usable: {e.summary()} ({e.path})")
    import difflib

    near = difflib.get_close_matches(name, registry.names(), n=1, cutoff=0.6)
    if near:
        raise SkillchatError(f"no skill named '{name}': did you mean '{near[0]}'?")
    from skillchat.config import fixture_hint

    raise SkillchatError(
        f"no skill named '{name}' (see `skillchat skills list`){fixture_hint(name)}"
    )
