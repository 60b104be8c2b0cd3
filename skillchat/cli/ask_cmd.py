"""`skillchat ask PROMPT`: the Typer command, for a line cli/ask_line.py does not
read (its help, its errors); the work is cli/ask_chat.py's.

No `from __future__ import annotations` here (nor in cli/root_cmd.py): Typer reads the
command's parameters with `get_type_hints`, which compiles and evaluates every
annotation written as a string (some 5 ms of each start for `ask` and the root).
"""

from typing import Annotated

import typer

from skillchat.cli import ask_chat
from skillchat.cli.common import (
    AllowInstallOpt,
    JsonOpt,
    SessionOptions,
    root_of,
    session_command,
)

PromptArg = Annotated[
    str | None,
    typer.Argument(help="The question; '-' (or nothing, with a pipe) reads it from stdin."),
]
AttachOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--attach",
        "-a",
        metavar="PATH",
        help="Attach a workspace file to the question (relative to the workspace, or "
        "absolute inside it); repeatable.",
    ),
]


@session_command
def ask(
    ctx: typer.Context,
    prompt: PromptArg = None,
    attach: AttachOpt = None,
    json_out: JsonOpt = False,
    allow_install: AllowInstallOpt = False,
    *,
    options: SessionOptions,
) -> int:
    """Ask one question; the answer goes to stdout, tool cards and usage to stderr.

    The exchange is saved as a chat (its id is on the usage line, and in --json);
    -c or --chat ID go on with a saved one.
    """
    return ask_chat.ask(
        root_of(ctx),
        options,
        prompt,
        attach=attach,
        json_out=json_out,
        allow_install=allow_install,
    )
