"""The REPL's workspace commands: `/attach` (a file for the next message), `/files`
and `/grep` (the workspace as the model sees it, through its own tools).

Apart from the other commands (ui/commands.py holds the table and `/help`) because
they need a workspace and show what its tools would hand the model; nothing they
show joins the chat except an attached file, with the next message.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl


def attach_file(repl: Repl, arg: str) -> None:
    """Queue a workspace file for the next message (read now, so errors show at once)."""
    from skillchat.ui.cards import human_size

    if not arg:
        attachments = repl.session.chat.attachments
        pending = attachments.pending if attachments else []
        if not pending:
            raise UsageError("/attach needs a path in the workspace (Tab completes)")
        repl.say(("for the next message: ", "muted"), ", ".join(pending))
        return
    file = repl.session.chat.attach(arg)
    cut = ", cut to the limit" if file.truncated else ""
    repl.say(
        ("attached ", "muted"),
        (file.path, "strong"),
        (f" ({human_size(file.size)}{cut}): it goes with your next message", "muted"),
    )


def _find(repl: Repl, tool: str, args: dict[str, str]) -> None:
    """Run a workspace tool as the model would, and show what the model would get:
    every entry or snippet, then the notices. Nothing joins the chat."""
    from skillchat.ui.cards import human_size

    if repl.session.workspace is None:
        raise UsageError(
            f"/{'files' if tool == 'list_files' else 'grep'} needs a workspace: "
            "--workspace DIR, or `workspace` in the config"
        )
    result = json.loads(repl.session.run_tool(tool, json.dumps(args)).content)
    if not result.get("success"):
        raise UsageError(f"{result['errorCode']}: {result['errors'][0]}")
    for entry in result.get("entries", []):
        size = f"  {human_size(entry['sizeBytes'])}" if "sizeBytes" in entry else ""
        repl.say(entry["path"], (size, "muted"))
    for hit in result.get("results", []):
        mark = "  (already in the chat)" if hit["alreadyInContext"] else ""
        repl.say((hit["docPath"], "strong"), ("  " + hit["chunkPath"] + mark, "muted"))
        repl.say(hit["snippet"])
    if "results" in result:
        repl.say((f"{result['filesMatched']} of {result['filesSearched']} files match", "muted"))
    for notice in result["notices"]:
        repl.say((notice, "warning"))


def list_files(repl: Repl, arg: str) -> None:
    _find(repl, "list_files", {"glob": arg} if arg else {})


def grep_files(repl: Repl, arg: str) -> None:
    if not arg:
        raise UsageError("/grep needs the text to find")
    _find(repl, "search_files", {"query": arg})
