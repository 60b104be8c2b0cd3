"""`skillchat keys set NAME`, `keys list`, `keys remove NAME`, `keys path`: provider
keys kept in a private file (skillchat/keys.py). A key is typed at a hidden prompt,
or read from a pipe (`pass show openai | skillchat keys set openai`), never taken on
the command line, where `ps` and the shell's history would see it; no value is
ever printed."""

from __future__ import annotations

import sys

import typer

from skillchat.errors import UsageError

app = typer.Typer(no_args_is_help=True)

NAME_HELP = "A provider (openai, anthropic, gemini) or the variable (OPENAI_API_KEY)."


@app.command("set")
def set_key(name: str = typer.Argument(..., help=NAME_HELP)) -> None:
    """Store a key (typed hidden, or piped on stdin)."""
    from skillchat.keys import keys_path, store_key, variable

    var = variable(name)
    if sys.stdin.isatty():
        import getpass

        value = getpass.getpass(f"key for {var}: ")
    else:
        value = sys.stdin.readline()
    value = value.strip()
    if not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise UsageError("no key given (one line, no control characters): nothing stored")
    store_key(var, value)
    typer.echo(f"stored {var} in {keys_path()}")


@app.command("list")
def list_keys() -> None:
    """The names of the stored keys (never their values), and which the environment overrides."""
    import os

    from skillchat.keys import keys_path, read_keys

    keys = read_keys()
    if not keys:
        typer.echo(f"no keys stored ({keys_path()})")
    for name in sorted(keys):
        note = (
            "  (the environment's wins)" if os.environ.get(name) not in (None, keys[name]) else ""
        )
        typer.echo(f"{name}{note}")


@app.command("remove")
def remove_key(name: str = typer.Argument(..., help=NAME_HELP)) -> None:
    """Forget a stored key."""
    from skillchat.keys import store_key, variable

    var = variable(name)
    store_key(var, None)
    typer.echo(f"removed {var}")


@app.command("path")
def path() -> None:
    """Where the keys are stored."""
    from skillchat.keys import keys_path

    typer.echo(str(keys_path()))
