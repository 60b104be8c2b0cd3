"""`skillchat` with no command: open the interactive session (ui/repl.py).

The options are declared on the root callback (cli/app.py), which calls `chat`
only when no subcommand was named. Like `ask`, this module imports only Typer:
prompt-toolkit, the store and the engine are imported once the command line is
known to be valid, and the model library only after the prompt is on screen.
"""

from __future__ import annotations

import sys

import typer

from skillchat.cli.invocation import consoles_of
from skillchat.cli.open_chat import open_chat
from skillchat.cli.session_options import SessionOptions
from skillchat.errors import UsageError


def chat(
    ctx: typer.Context,
    options: SessionOptions,
    *,
    debug: bool,
    first: str | None = None,
) -> None:
    """Run the REPL until the user leaves; exit 1 if some messages could not be saved."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "the interactive session needs a terminal; for pipes and scripts use: "
            "skillchat ask 'QUESTION' (or skillchat -p 'QUESTION')"
        )
    opened = open_chat(ctx, options)
    from skillchat.engine.backends.select import key_problem
    from skillchat.errors import ProviderError
    from skillchat.session_settings import load_registry
    from skillchat.ui.repl import Repl

    settings, store = opened.settings, opened.store
    # A missing key is said now, not after the first message (which would leave a
    # chat with no answer in the store).
    if problem := key_problem(opened.target):
        store.close()
        raise ProviderError(problem)
    registry = load_registry(settings)
    repl = Repl(
        settings,
        registry,
        store,
        opened.transcript,
        consoles=consoles_of(ctx),  # the session's output, its warnings here included
        debug=debug,
        workspace=opened.workspace,
        target=opened.target,
        sources=opened.sources,
        workspace_why=opened.sources["workspace"],
    )
    code = repl.run(first)
    store.close()
    if code:
        raise typer.Exit(code)
