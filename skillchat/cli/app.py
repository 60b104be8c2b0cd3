"""The `skillchat` command's entry, and the one place errors become exit codes.

A plain `ask` line is read without Typer (cli/ask_line.py) and run at once
(cli/ask_chat.py): Typer and click cost `ask` some 18 ms of CPU before its request.
Every other line, and `ask`'s help and usage errors, are Typer's (cli/root_cmd.py).

Exit codes: 0 success; 1 a failure the user can act on; 2 usage error;
130 interrupted. Tracebacks appear only with `--debug` (accepted anywhere on the line),
and even then with secrets masked (skillchat/redact.py); every error line too.
"""

import gc
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
    """`ask --json` (`--output-format json`) that fails: a JSON object on stdout
    too, so a script reading it gets an answer it can parse (the one-line error
    still goes to stderr). stream-json says its errors itself (ui/stream_json.py)."""
    from itertools import pairwise

    wanted = "--json" in argv or ("--output-format", "json") in pairwise(argv)
    if not wanted or "ask" not in argv:
        return
    import json

    from skillchat.ui.console import error_line

    sys.stdout.write(json.dumps({"error": error_line(message), "exit_code": code}) + "\n")


def run(argv: list[str]) -> int:
    """Run the CLI on `argv` and return the exit code, turning every error into one line."""
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    if debug:
        argv = [a for a in argv if a != "--debug"]
    if argv[:1] == ["ask"]:
        gc.disable()  # until ask's request leaves: cli/ask_chat.py `collect_after_start`
    try:
        _use_stored_keys()
        return _run_line(argv, debug)
    except (KeyboardInterrupt, EOFError):  # as click has them: an Abort, said so
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
    finally:
        gc.enable()


def _use_stored_keys() -> None:
    """Keys stored by `skillchat keys set`, where the environment has none
    (skillchat/keys.py); a keys file that cannot be used is one line, every start."""
    from skillchat.keys import use_stored_keys

    if (problem := use_stored_keys()) is not None:
        from skillchat.ui.console import error_line

        sys.stderr.write(f"skillchat: warning: {error_line(problem)}\n")


def _run_line(argv: list[str], debug: bool) -> int:
    """`ask`'s line read without Typer when it is plain, run on a root like the one
    Typer's root command makes of a line with no root options; Typer's otherwise."""
    if argv[:1] == ["ask"]:
        from skillchat.cli.ask_line import read

        if (line := read(argv[1:])) is not None:
            from skillchat.cli.ask_chat import ask_chat
            from skillchat.cli.invocation import PlainRun

            return ask_chat(PlainRun({"config": None, "debug": debug}), line)
    from skillchat.cli.root_cmd import run_typer

    return run_typer(argv, debug)


def main() -> None:
    """Console-script entry point: first of all, skillchat's environment is made
    unreadable to the programs it starts (mcp/spawn.py)."""
    from skillchat.mcp.spawn import hide_environment

    hide_environment()
    sys.exit(run(sys.argv[1:]))
