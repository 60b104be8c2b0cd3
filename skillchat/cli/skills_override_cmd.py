"""`skillchat skills pin|name-only|manual|off|reset NAME [--project]`: the user's
lasting say over how one skill is shown to the model (skillchat/skills/overrides.py).

A command of its own module, registered on skills_cmd's app five times, once per
action, so each has its own help; the REPL's `/skills pin NAME` is the same change
(ui/commands.py).
"""

from __future__ import annotations

from typing import Annotated

import typer

from skillchat.cli.common import ConfigOpt, NoMcpOpt, SkillsDirOpt
from skillchat.cli.skills_cmd import app, naming, settings_and_registry
from skillchat.ui import safe

ACTIONS = {
    "pin": "Always show this skill's whole description, first in the catalog.",
    "name-only": "List this skill to the model by its name only.",
    "manual": "Hide this skill from the model; /NAME still uses it.",
    "off": "Turn this skill off: not loadable at all.",
    "reset": "Remove this skill's override.",
}

NameArg = Annotated[str, typer.Argument(help="The skill's name.")]
ProjectOpt = Annotated[
    bool,
    typer.Option(
        "--project", help="In this project's .skillchat/overrides.toml, not the user's file."
    ),
]


def _override(
    ctx: typer.Context,
    action: str,
    name: str,
    project: bool,
    config: ConfigOpt,
    skills_dir: SkillsDirOpt,
    no_mcp: bool,
) -> None:
    from skillchat.session_settings import load_overrides
    from skillchat.skills.overrides import change, known

    settings, registry = settings_and_registry(ctx, config, skills_dir)
    if action != "reset" and not known(registry, name):
        registry = naming(ctx, settings, registry, [name], no_mcp)
    said = change(load_overrides(settings), registry, name, action, project=project)
    typer.echo(safe.one_line(said))


def _register(action: str, help_text: str) -> None:
    def command(
        ctx: typer.Context,
        name: NameArg,
        project: ProjectOpt = False,
        config: ConfigOpt = None,
        skills_dir: SkillsDirOpt = None,
        no_mcp: NoMcpOpt = False,
    ) -> None:
        _override(ctx, action, name, project, config, skills_dir, no_mcp)

    command.__doc__ = (
        f"{help_text} Kept in the user's overrides file (--project: the project's), "
        "for every later session, `ask` and `eval`."
    )
    app.command(action, short_help=help_text)(command)


for _action, _help in ACTIONS.items():
    _register(_action, _help)
