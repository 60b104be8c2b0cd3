"""`skillchat` with no command: open the interactive session (ui/repl.py).

The options are declared on the root callback (cli/app.py), which calls `chat`
only when no subcommand was named. Like `ask`, this module imports only Typer:
prompt-toolkit, the store and the engine are imported once the command line is
known to be valid, and the model library only after the prompt is on screen.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from skillchat.cli.common import Backend, consoles_of, open_session
from skillchat.errors import UsageError


def chat(
    ctx: typer.Context,
    *,
    model: str | None,
    api_base: str | None,
    backend: Backend | None,
    no_tools: bool,
    last: bool,
    chat_id: str | None,
    skills_dir: list[Path] | None,
    workspace: Path | None,
    limits: dict[str, Any],
    config: Path | None,
    debug: bool,
    allow: tuple[bool, bool, bool] = (False, False, False),
    gguf: Path | None = None,
    local: bool = False,
    chat_template: Path | None = None,
    first: str | None = None,
    no_workspace: bool = False,
    mcp: tuple[list[str] | None, bool, bool] = (None, False, False),
) -> None:
    """Run the REPL until the user leaves; exit 1 if some messages could not be saved."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "the interactive session needs a terminal; for pipes and scripts use: "
            "skillchat ask 'QUESTION' (or skillchat -p 'QUESTION')"
        )
    settings, folder, target, sources = open_session(
        ctx,
        config,
        model=model,
        api_base=api_base,
        backend=backend,
        no_tools=no_tools,
        skills_dir=skills_dir,
        workspace=workspace,
        no_workspace=no_workspace,
        **limits,
        allow_run=allow[0],
        allow_network=allow[1],
        allow_write=allow[2],
        gguf=gguf,
        local=local,
        chat_template=chat_template,
        mcp=mcp,
    )
    from skillchat.engine.backends.select import key_problem
    from skillchat.errors import ProviderError
    from skillchat.session import (
        chosen_transcript,
        load_registry,
        open_store,
    )
    from skillchat.session_settings import continued_target, resumed_workspace
    from skillchat.ui.repl import Repl

    consoles = consoles_of(ctx)  # the session's output, its warnings here included
    warn = consoles.warn
    store = open_store(settings)
    transcript = chosen_transcript(store, last=last, chat_id=chat_id, notify=warn)
    # The chat's own server or local model file (its server started now, loading
    # while the REPL starts), unless the command line chose one.
    target = continued_target(settings, target, transcript, sources)
    named = sources["workspace"] == "flag"
    if (kept := resumed_workspace(settings, transcript, warn, named)) is not settings:
        from skillchat.workspace.files import workspace_from_settings

        settings, folder = kept, workspace_from_settings(kept, "chat")
        sources["workspace"] = "chat"
    # A missing key is said now, not after the first message (which would leave a
    # chat with no answer in the store).
    if problem := key_problem(target.over(settings)):
        store.close()
        raise ProviderError(problem)
    registry = load_registry(settings)
    repl = Repl(
        settings,
        registry,
        store,
        transcript,
        consoles=consoles,
        debug=debug,
        workspace=folder,
        target=target,
        sources=sources,
        workspace_why=sources["workspace"],
    )
    code = repl.run(first)
    store.close()
    if code:
        raise typer.Exit(code)
