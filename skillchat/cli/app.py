"""The `skillchat` command's entry: the one place errors become exit codes.

A plain `skillchat ask ...` line is read without Typer (cli/ask_line.py) and run
at once (cli/ask_chat.py): Typer and click cost `ask` 18 ms of CPU before its
request (12% of its instructions there). Every other line, and an `ask` line
that is not plain, is Typer's (cli/root_cmd.py), with its help and usage errors.

Exit codes: 0 success; 1 a failure the user can act on; 2 usage error;
130 interrupted. Tracebacks appear only with `--debug` (accepted anywhere on the line),
and even then with secrets masked (skillchat/redact.py); every error line too.
"""

import sys

from skillchat.errors import SkillchatError

# httpx (the openai SDK's, imported by every chat) imports its own command line when
# click is installed: click, Rich's progress bars and syntax, pygments, ~50 ms of CPU
# at each start, for an `httpx` command skillchat never runs. A None in sys.modules
# is Python's way to say a module is not to be imported: httpx catches the
# ImportError and goes on without it. (Tests that list what a command imported
# count the modules actually imported, not this entry.)
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # typeshed omits None


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
    try:
        return _run_ask(argv, debug) if argv[:1] == ["ask"] else _run_typer(argv, debug)
    except (KeyboardInterrupt, EOFError):  # as click has them: Abort, said so
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


def _run_ask(argv: list[str], debug: bool) -> int:
    """`ask`, its line read without Typer when it is plain; Typer's otherwise. The
    run's state is what the root command would have made of a line with no root
    options (cli/root_cmd.py's `root`)."""
    from skillchat.cli import ask_line

    line = ask_line.read(argv[1:])
    if line is None:
        return _run_typer(argv, debug)
    from skillchat.cli import ask_chat

    return ask_chat.ask(
        {"config": None, "debug": debug},
        line.options,
        line.prompt,
        attach=line.attach,
        json_out=line.json_out,
        allow_install=line.allow_install,
    )


def _run_typer(argv: list[str], debug: bool) -> int:
    """The line as Typer reads it: its usage errors said as click says them."""
    import typer

    from skillchat.cli.question import question_argv
    from skillchat.cli.root_cmd import app

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


def main() -> None:
    """Console-script entry point: first of all, skillchat's environment is made
    unreadable to the programs it starts (mcp/spawn.py)."""
    from skillchat.mcp.spawn import hide_environment

    hide_environment()
    sys.exit(run(sys.argv[1:]))
