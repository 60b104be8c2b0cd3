"""How `ask` and the REPL open a chat from their options, before its `Session` is
made: the settings (cli/session_options.py `chosen_settings`), the workspace (the
project the cwd is in when none is named), where requests go, the chat database
and the saved chat to go on with.

Apart from the options because eval takes the same options and opens no chat of
this kind: its runs have no saved chat and no workspace of the user's, and make a
`Session` each from their settings (evals/runner.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.cli.invocation import Invocation, consoles_of
from skillchat.cli.session_options import SessionOptions, chosen_settings
from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings
    from skillchat.target import Target
    from skillchat.workspace.files import Workspace


@dataclass
class OpenChat:
    """A session opened from the command line, before its `Session` is made: the
    settings, the workspace (None when off), where requests go, where each setting
    came from (the workspace's: "flag", "chat", or the project's reason), the chat
    database and the saved chat it goes on with (None: a new one)."""

    settings: Settings
    workspace: Workspace | None
    target: Target
    sources: dict[str, str]
    store: ChatStore
    transcript: Transcript | None


def open_chat(
    ctx: Invocation,
    options: SessionOptions,
    *,
    allow_install: bool = False,
    needs_workspace: str | None = None,
) -> OpenChat:
    """How `ask` and the REPL open a chat from their options (`chosen_settings`),
    before its `Session` is made. A bad workspace stops the command here, before any
    request or prompt, and so does an option that needs one (`needs_workspace`: its
    message) when there is none. With a local model (`--gguf`, `--local`, or `gguf`
    in the config) its server starts here, loading while the rest starts up; a
    server's `/props` is asked for its window here. The saved chat (`-c`, `--chat
    ID`) goes on with its own model, server or local file, and workspace, unless the
    command line chose them."""
    from skillchat.engine.resolve import asked, resolve
    from skillchat.session_settings import (
        chosen_transcript,
        continued_target,
        open_store,
        resumed_workspace,
    )
    from skillchat.workspace.project import workspace_from_settings

    settings, sources = chosen_settings(ctx, options, allow_install=allow_install)
    target = resolve(settings, asked(settings))
    settings, why = project_workspace(settings, sources, off=options.no_workspace)
    folder = workspace_from_settings(settings, why)
    if needs_workspace and folder is None:
        raise UsageError(needs_workspace)
    warn = consoles_of(ctx).warn
    store = open_store(settings.storage)
    transcript = chosen_transcript(store, last=options.last, chat_id=options.chat_id, notify=warn)
    # The chat's own server or local model file (its server started now), unless
    # the command line chose one.
    target = continued_target(settings, target, transcript, sources)
    if (kept := resumed_workspace(settings, transcript, warn, why == "flag")) is not settings:
        settings, folder, why = kept, workspace_from_settings(kept, "chat"), "chat"
    sources["workspace"] = why
    return OpenChat(settings, folder, target, sources, store, transcript)


def project_workspace(
    settings: Settings, sources: dict[str, str], *, off: bool
) -> tuple[Settings, str]:
    """The settings with the workspace off (`--no-workspace`), or, when neither
    `--workspace` nor the config names one, the project the cwd is in (a git work
    tree, or a folder in `projects`); and where the workspace came from, which says
    which."""
    from skillchat.workspace.project import project_folder

    source = sources.get("workspace", "default")
    if off:
        if source == "flag":
            raise UsageError("--workspace and --no-workspace exclude each other: pick one")
        return settings.replaced(workspace=None), "flag"
    if settings.workspace or (found := project_folder(Path.cwd(), settings.projects)) is None:
        return settings, source
    folder, why = found
    return settings.replaced(workspace=str(folder)), why


def workspace_note(settings: Settings, why: str) -> str | None:
    """The line that says a workspace nobody named is on, and how to turn it off."""
    from skillchat.workspace.project import PROJECT_SOURCES

    if why not in PROJECT_SOURCES or not settings.workspace:
        return None
    return f"workspace: {settings.workspace} ({why}; --no-workspace to turn it off)"
