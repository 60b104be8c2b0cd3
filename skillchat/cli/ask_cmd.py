"""`skillchat ask PROMPT`: one question, the answer on stdout, then exit.

The command as Typer reads it: its help, its errors, and every line that
cli/ask_line.py leaves to Typer. What it does is cli/ask_chat.py's, imported once
the line is known to be valid.

No `from __future__ import annotations` here (nor in cli/app.py): Typer reads the
command's parameters with `get_type_hints`, which compiles and evaluates every
annotation written as a string (some 5 ms of each start for `ask` and the root).
"""

from typing import Annotated

import typer

from skillchat.cli.ask_line import AskLine, AttachOpt, OutputFormatOpt
from skillchat.cli.opts import JsonFlag
from skillchat.cli.session_options import AllowInstallOpt, SessionOptions, session_command

PromptArg = Annotated[
    str | None,
    typer.Argument(help="The question; '-' (or nothing, with a pipe) reads it from stdin."),
]


@session_command()
def ask(
    ctx: typer.Context,
    prompt: PromptArg = None,
    attach: AttachOpt = None,
    json_out: JsonFlag = False,
    allow_install: AllowInstallOpt = False,
    output_format: OutputFormatOpt = None,
    *,
    options: SessionOptions,
) -> int:
    """Ask one question; the answer goes to stdout, tool cards and usage to stderr.

    The exchange is saved as a chat (its id is on the usage line, and in --json);
    -c or --chat ID go on with a saved one.
    """
    from skillchat.cli.ask_chat import ask_chat

    return ask_chat(ctx, AskLine(prompt, attach, json_out, allow_install, options, output_format))
