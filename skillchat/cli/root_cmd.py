"""The `skillchat` command as Typer reads it: the root (with no subcommand, the
interactive session, cli/chat_cmd.py; its options are the root's, so `skillchat
--model x` works and `skillchat --help` lists them) and its subcommands, each
imported and built only when named. cli/app.py runs every line through here but
`ask`'s plain ones (cli/ask_line.py).

No `from __future__ import annotations`: Typer would compile and evaluate each of
the root's annotations at every start (cli/ask_cmd.py says more).
"""

import sys
from importlib import import_module
from typing import Annotated, Any

import typer
from typer._click.formatting import HelpFormatter
from typer._click.utils import make_default_short_help

from skillchat import __version__
from skillchat.cli.lazy import LazyGroup, PlainUsageCommand, plain_usage
from skillchat.cli.question import question_argv
from skillchat.cli.session_options import SessionOptions, session_command
from skillchat.errors import UsageError

# Shown under every `--help` that starts a model: click rewraps paragraphs, so each
# line is its own paragraph (`\b` keeps a block as written).
EXAMPLES = """\b
Examples:
  skillchat                                   an interactive chat
  skillchat "what is 17% of 230?"             a chat that starts with a question
  skillchat -p "what is 17% of 230?"          one answer, printed (as ask)
  skillchat ask "/calculator 17% of 230"      one question, one skill
  git diff | skillchat ask "/commit-message"  the prompt, then piped text
  skillchat -m anthropic/claude-sonnet-4-5    another provider
  skillchat --api-base http://localhost:11434/v1 -m llama3.1   a local server
  skillchat --local                           a local model, no key

\b
The default model is gpt-4.1-mini. Keys come from the environment, each provider's
own: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, MISTRAL_API_KEY,
GROQ_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY (none for a local server)."""

_SETTINGS: dict[str, Any] = {
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}

# The subcommands, by name, in the order `--help` lists them: (the module to import,
# the Typer app or function, how it is registered). Each is imported and turned into
# a click command only when it is the one run: `ask` does not pay for importing and
# building `skills`, `config`, `eval`... The `help` of each group and the
# `short_help` of each command live here, so `--help` lists them all from this
# table alone, importing none.
_COMMANDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # The modules registering `skills validate`, `trust`, `add`... are imported
    # when one of theirs is run (cli/skills_cmd.py).
    "skills": (
        "skillchat.cli.skills_cmd",
        "app",
        {"help": "List, show and validate skills."},
    ),
    "config": (
        "skillchat.cli.config_cmd",
        "app",
        {"help": "Write, show and locate the configuration."},
    ),
    "ask": (
        "skillchat.cli.ask_cmd",
        "ask",
        {"short_help": "Ask one question; the answer on stdout.", "epilog": EXAMPLES},
    ),
    "chats": (
        "skillchat.cli.chats_cmd",
        "app",
        {"help": "List, show, export and delete saved chats."},
    ),
    "doctor": (
        "skillchat.cli.doctor_cmd",
        "doctor",
        {"short_help": "Check the key, server, config, skills, chats and sandbox."},
    ),
    "models": (
        "skillchat.cli.models_cmd",
        "app",
        {"help": "Local models downloaded by --local: list them, remove one."},
    ),
    "keys": (
        "skillchat.cli.keys_cmd",
        "app",
        {"help": "Store provider keys in a private file: set, list, remove."},
    ),
    "mcp": (
        "skillchat.cli.mcp_cmd",
        "app",
        {"help": "MCP servers: list them and their tools, log in."},
    ),
    "hooks": (
        "skillchat.cli.hooks_cmd",
        "app",
        {"help": "Hooks of the config, project and skills: list, trust."},
    ),
    "eval": (
        "skillchat.cli.eval_cmd",
        "eval_cmd",
        {"short_help": "Check which skills models pick for test queries."},
    ),
    # Typed `skillchat eval merge ...` (`_LazyGroup.resolve_command`).
    "eval merge": (
        "skillchat.cli.eval_merge",
        "eval_merge",
        {"short_help": "Combine the shards of an outcome eval into one report."},
    ),
}


def _short_help(name: str, limit: int) -> str:
    """The line `--help` lists for `name`, as click makes it from the command (its
    `short_help`, else the start of its `help`), without building the command."""
    options = _COMMANDS[name][2]
    if "short_help" in options:
        return str(options["short_help"])
    return make_default_short_help(options["help"], limit)


def _subcommand(name: str) -> Any:
    """Import one subcommand and build its click command, as `add_typer` or
    `command` on the root app would have."""
    module, attribute, options = _COMMANDS[name]
    target = getattr(import_module(module), attribute)
    holder = typer.Typer(**_SETTINGS)
    if isinstance(target, typer.Typer):
        holder.add_typer(plain_usage(target), name=name, **options)
    else:
        holder.command(name, cls=PlainUsageCommand, **options)(target)
    return typer.main.get_group(holder).commands[name]


class _LazyGroup(LazyGroup):
    """The root group: its subcommands are built on demand (`_COMMANDS`)."""

    def names(self) -> list[str]:
        return list(_COMMANDS)

    def build(self, name: str) -> Any:
        return _subcommand(name)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:  # type: ignore[override]
        """`eval merge` is a command of its own: `eval` takes a file as its argument."""
        if args[:2] == ["eval", "merge"]:
            args = ["eval merge", *args[2:]]
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: typer.Context, formatter: HelpFormatter) -> None:  # type: ignore[override]
        """click's listing of the subcommands, its lines drawn from `_COMMANDS`
        (the base class builds every command to read them)."""
        limit = formatter.width - 6 - max(len(name) for name in _COMMANDS)
        with formatter.section("Commands"):
            formatter.write_dl([(name, _short_help(name, limit)) for name in _COMMANDS])


app = typer.Typer(
    name="skillchat",
    help="Chat with any LLM, with your Agent Skills. With no command: an interactive session.",
    epilog=EXAMPLES,
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    **_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillchat {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
@session_command()
def root(
    ctx: typer.Context,
    *,
    options: SessionOptions,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    print_answer: Annotated[
        bool,
        typer.Option(
            "--print", "-p", help='skillchat -p "QUESTION": print one answer and exit (as ask).'
        ),
    ] = False,
    first: Annotated[str | None, typer.Option("--first-message", hidden=True)] = None,
) -> None:
    """Chat with any LLM, with your Agent Skills: with no command, an interactive session."""
    debug = debug or (ctx.obj or {}).get("debug", False)
    ctx.obj = {"config": options.config, "debug": debug}
    if ctx.invoked_subcommand is None:
        from skillchat.cli import chat_cmd

        chat_cmd.chat(ctx, options, debug=debug, first=first)
    elif options.said() or print_answer or first is not None:
        raise UsageError(
            f"session options go after the command: skillchat {ctx.invoked_subcommand} [OPTIONS]"
        )


def run_typer(argv: list[str], debug: bool) -> int:
    """The line as Typer reads it, its usage errors said as click says them; an
    Abort (Ctrl-C, EOF) is raised as the KeyboardInterrupt it was, for cli/app.py."""
    command = typer.main.get_command(app)
    argv = question_argv(argv, command)
    try:
        result = command.main(
            argv, prog_name="skillchat", standalone_mode=False, obj={"debug": debug}
        )
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # click's usage errors live under this base
        show = getattr(exc, "show", None)
        if show:
            show()
        else:
            sys.stderr.write(f"Error: {exc.message}\n")
        return getattr(exc, "exit_code", 2)
    except typer.Abort:
        raise KeyboardInterrupt from None
