"""A command group whose subcommands are imported and built only when named.

Typer turns every command registered on an app into a click command at each start,
and each module registering one must be imported first: the root and `skills` would
pay for all their subcommands to run one. A subclass names its subcommands in
order (`names`) and builds one on demand (`build`); click asks for them by name, so
only a listing of them (`--help`) builds them all.
"""

from difflib import get_close_matches
from typing import Any

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperArgument, TyperCommand, TyperGroup


class PlainUsageCommand(TyperCommand):
    """A command whose usage line names its arguments as click does (`SOURCE
    [NAMES]...`): Typer writes a required one `{source}`, markup for its rich help
    that the plain help (`rich_markup_mode` None) prints as it is."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = (param.metavar or param.name or "").upper()
                name = name if param.required else f"[{name}]"
                pieces.append(name if param.nargs == 1 else f"{name}...")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


def plain_usage(app: typer.Typer) -> typer.Typer:
    """`app` with its commands made `PlainUsageCommand`s (one given a class of its
    own keeps it)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = PlainUsageCommand
    return app


class LazyGroup(TyperGroup):
    """The overrides take `typer.Context`, what Typer passes; the base class
    annotates them with the Context of the click copy Typer vendors, hence the
    ignores."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        # Typer draws its "did you mean" from the commands already built: the
        # suggestions are made below, from every name.
        self.suggest_commands = False

    def names(self) -> list[str]:
        """The subcommands' names, in the order `--help` lists them."""
        raise NotImplementedError

    def build(self, name: str) -> Any:
        """The click command `name` (one of `names()`), imported and built."""
        raise NotImplementedError

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return self.names()

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]
        if cmd_name not in self.commands and cmd_name in self.names():
            self.commands[cmd_name] = self.build(cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:  # type: ignore[override]
        """click's, with Typer's "did you mean" drawn from every name."""
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            matches = get_close_matches(args[0], self.names()) if args else []
            if matches:
                suggestions = ", ".join(repr(match) for match in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise
