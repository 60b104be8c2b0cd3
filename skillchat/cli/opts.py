"""Options declared without Typer: `Opt` holds what `typer.Option` is given, and
Typer's own option is made from it only when a command is built (`typer_hint`).

`ask`'s line, when plain, is read without importing Typer (cli/ask_line.py), from
these very declarations: a new option declared here is read there with nothing
else to edit. The options several commands share (`--config`, `--skills-dir`,
`--json`, `--no-mcp`) are declared here; cli/common.py gives them to Typer.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin


class Opt:
    """An option: its names, what `typer.Option` takes (`help`, `metavar`, `min`,
    `dir_okay`...), and `choices`, the only values it takes (Typer's `click_type`)."""

    def __init__(self, *names: str, choices: tuple[str, ...] | None = None, **given: Any):
        self.names = names
        self.choices = choices
        self.given = given

    def typer(self) -> Any:
        """Typer's `OptionInfo` for this option (importing Typer)."""
        import typer
        from typer._types import TyperChoice

        if self.choices is None:
            return typer.Option(*self.names, **self.given)
        return typer.Option(
            *self.names, click_type=TyperChoice(self.choices), show_default=False, **self.given
        )


def opt_of(hint: Any) -> Opt | None:
    """The `Opt` in an `Annotated[...]` hint, None when it has none."""
    if get_origin(hint) is not Annotated:
        return None
    return next((m for m in get_args(hint)[1:] if isinstance(m, Opt)), None)


def typer_hint(hint: Any) -> Any:
    """`hint` as Typer reads it: an `Opt` replaced by its `typer.Option` (the type
    checker sees Any: declare with `Opt`s, give Typer this)."""
    declared = opt_of(hint)
    if declared is None:
        return hint
    return Annotated[get_args(hint)[0], declared.typer()]


CONFIG = Opt(
    "--config",
    metavar="FILE",
    help="Config file (default: $SKILLCHAT_CONFIG, then the user one).",
    dir_okay=False,
)
SKILLS_DIR = Opt(
    "--skills-dir",
    metavar="DIR",
    help="Skills directory; repeatable; replaces the configured list (and the bundled skills).",
)
JSON = Opt("--json", help="Print JSON instead of text.")
JsonFlag = Annotated[bool, JSON]  # for a command made by `session_command`
NO_MCP = Opt("--no-mcp", help="Start no MCP server.")
BARE = Opt(
    "--bare",
    help="For scripts: no hooks, no MCP servers, no project config or skills: only the "
    "skills --skills-dir names (else the bundled ones) and the servers --mcp names.",
)
