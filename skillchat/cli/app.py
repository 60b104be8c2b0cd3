"""The `skillchat` command: the Typer app and the one place errors become exit codes.

With no subcommand it opens the interactive session (cli/chat_cmd.py); its options
are the root's, so `skillchat --model x` works and `skillchat --help` lists them.

Exit codes: 0 success; 1 a failure the user can act on; 2 usage error;
130 interrupted. Tracebacks appear only with `--debug` (accepted anywhere on the line),
and even then with secrets masked (skillchat/redact.py); every error line too.

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
from skillchat.errors import SkillchatError, UsageError

# httpx (the openai SDK's, imported by every chat) imports its own command line when
# click is installed: click, Rich's progress bars and syntax, pygments, ~50 ms of CPU
# at each start, for an `httpx` command skillchat never runs. A None in sys.modules
# is Python's way to say a module is not to be imported: httpx catches the
# ImportError and goes on without it. (Tests that list what a command imported
# count the modules actually imported, not this entry.)
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # typeshed omits None

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
    "mcp": (
        "skillchat.cli.mcp_cmd",
        "app",
        {"help": "The MCP servers of the config: list them, list a server's tools."},
    ),
    "eval": (
        "skillchat.cli.eval_cmd",
        "eval_cmd",
        {"short_help": "Check which skills models pick for test queries."},
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


def _fail(message: str, code: int) -> int:
    from skillchat.ui.console import error_line

    sys.stderr.write(f"skillchat: error: {error_line(message)}\n")
    return code


def _debug_traceback(exc: BaseException) -> None:
    """`--debug`: the whole traceback, chain included, with secrets masked (a
    provider's error body may echo the key) and control characters made visible."""
    from skillchat.redact import traceback_text
    from skillchat.ui.safe import clean

    sys.stderr.write(clean(traceback_text(exc)))


def _json_error(argv: list[str], message: str, code: int) -> None:
    """`ask --json` that fails: a JSON object on stdout too, so a script reading it
    gets an answer it can parse (the one-line error still goes to stderr)."""
    if "--json" not in argv or "ask" not in argv:
        return
    import json

    from skillchat.ui.console import error_line

    sys.stdout.write(json.dumps({"error": error_line(message), "exit_code": code}) + "\n")


def run(argv: list[str]) -> int:
    """Run the CLI on `argv` and return the exit code, turning every error into one line."""
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    if debug:
        argv = [a for a in argv if a != "--debug"]
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
    except (KeyboardInterrupt, typer.Abort):
        sys.stderr.write("\ninterrupted\n")
        return 130
    except SkillchatError as exc:
        if debug:
            _debug_traceback(exc)
        _json_error(argv, str(exc), exc.exit_code)
        return _fail(str(exc), exc.exit_code)
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if debug:
            _debug_traceback(exc)
        return _fail(f"internal error: {exc.__class__.__name__}: {exc} (rerun with --debug)", 1)


def main() -> None:
    """Console-script entry point: first of all, skillchat's environment is made
    unreadable to the programs it starts (mcp/spawn.py)."""
    from skillchat.mcp.spawn import hide_environment

    hide_environment()
    sys.exit(run(sys.argv[1:]))
