"""What a session starts from besides its settings: its skill registry (the user's and
the project's per-skill overrides applied), the chat database and the saved chat to
go on with, a resumed chat's workspace, the `--local` model's file, and the `Target`
a continued chat goes on with.

`ask`, the REPL's start and `/resume`, and `Session` itself decide these the same
way, so they live below session.py, apart from the live state a `Session` owns.
Nothing here is imported before it is needed.

A database that cannot be opened (corrupt, another application's, a newer schema)
stops the command with its one-line `StorageError` (exit 1) before any request is
sent: nothing has been said yet, so nothing is lost, and the message says how to
fix it. Carrying on unsaved would lose the chat silently for anyone not watching
stderr, and a tool that says it saves chats must not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings
    from skillchat.engine.resolve import Sources
    from skillchat.sections import StorageSettings
    from skillchat.skills.overrides import Overrides
    from skillchat.skills.registry import Registry
    from skillchat.target import Target


def resumed_workspace(
    settings: Settings,
    transcript: Transcript | None,
    notify: Callable[[str], None],
    named: bool,
) -> Settings:
    """A resumed chat goes on with its own workspace, unless --workspace or
    --no-workspace (`named`) say otherwise; `notify` says so when it differs from the
    one this start would have (the folder's project, or none). A chat saved before
    folders were recorded keeps what this start gives."""
    if transcript is None or transcript.chat.folder is None or named:
        return settings
    kept, here = transcript.chat.workspace, settings.workspace
    here_real = os.path.realpath(here) if here else None
    if kept == here_real:
        return settings
    notify(
        f"chat {transcript.chat.id} goes on with its workspace "
        f"{kept or '(none)'}, not {here_real or '(none)'}: -w DIR or --no-workspace to change"
    )
    return settings.replaced(workspace=kept)


def with_local_model(settings: Settings, notify: Callable[[str], None]) -> Settings:
    """`--local`: the settings with the default model's file (from the cache, or
    downloaded first, `notify` told what and how big), chosen as `--gguf` would (a
    continued chat goes on with it).
    One-line LocalModelError when xllamacpp is missing (checked before any
    download) or the download fails."""
    from skillchat.engine.local.hub import default_model
    from skillchat.engine.local.server import require_server

    require_server()
    return settings.replaced(gguf=str(default_model(notify)))


def continued_target(
    settings: Settings, start: Target, transcript: Transcript | None, sources: Sources
) -> Target:
    """Where `transcript`'s chat goes on (engine/resolve.py's `continued`): `start`
    when that is where it was, else that place resolved: a `--gguf` chat continued
    with `-c`, `--chat ID` or `/resume` loads its file again instead of asking for an
    API key (a file that is gone or broken is the local model's one-line error), and
    a chat of another server gets that server's window, not `start`'s."""
    from skillchat.engine.resolve import continued, resolve

    place = continued(settings, start.place, transcript, sources)
    return start if place == start.place else resolve(settings, place)


def open_store(storage: StorageSettings) -> ChatStore:
    """The chat database of `storage`, created if missing; StorageError if unusable."""
    from skillchat.chats.store import ChatStore
    from skillchat.tools.toolbox import stored_result

    return ChatStore.open(storage.database_path(), keep=stored_result)


def chosen_transcript(
    store: ChatStore, *, last: bool, chat_id: str | None, notify: Callable[[str], None]
) -> Transcript | None:
    """The chat `-c/--continue` or `--chat ID` names, or None for a new chat.

    `-c` with no saved chat starts a new one (said on stderr): `ask -c` in a script
    works from its first run. An unknown `--chat ID` is an error (exit 1).
    """
    if last and chat_id:
        raise UsageError("give -c/--continue or --chat ID, not both")
    if chat_id:
        return store.load_transcript(chat_id)
    if last:
        # Claude Code's -c: the last chat started in this folder (--chat ID reaches any).
        chat = store.last_chat(folder=os.path.realpath(os.getcwd()))
        if chat is None:
            notify(
                "no saved chat of this folder to continue: starting a new one "
                "(`skillchat chats list` and --chat ID reach the others)"
            )
            return None
        return store.load_transcript(chat.id)
    return None


def load_registry(settings: Settings) -> Registry:
    """The skills of the configured directories; none when skills are disabled.

    The one place the setting is honoured: `ask`, the REPL (and its `/reload`) and
    `skills list|show|validate` all come here."""
    from skillchat.config import BUNDLED_FIXTURES
    from skillchat.sections import BUNDLED_SKILLS
    from skillchat.skills.lock import checked
    from skillchat.skills.overrides_files import any_file
    from skillchat.skills.registry import Registry, discover

    if not settings.skills.enabled:
        return Registry(skills={})
    hidden = {BUNDLED_SKILLS: BUNDLED_FIXTURES} if settings.skills.hides_fixtures() else {}
    registry = checked(  # installed skills that drifted from their lock: one problem each
        discover(
            settings.skills.resolved_dirs(),
            max_skills=settings.skills.max_skills,
            disabled=settings.skills.disabled,
            strict=settings.skills.strict,
            hidden=hidden,
        )
    )
    project = overrides_project(settings)
    if not any_file(project):  # no overrides: their module is not imported
        return registry
    from skillchat.skills.overrides import Overrides

    return with_overrides(registry, Overrides.load(project))


def overrides_project(settings: Settings) -> Path | None:
    """The project whose overrides apply: the one the command started in (none
    under `--bare`)."""
    from skillchat.workspace.project import project_folder

    found = project_folder(Path.cwd(), settings.projects) if settings.project_files else None
    return found[0] if found else None


def load_overrides(settings: Settings) -> Overrides:
    """The user's lasting per-skill overrides and the project's (skills/overrides.py)."""
    from skillchat.skills.overrides import Overrides

    return Overrides.load(overrides_project(settings))


def with_overrides(registry: Registry, overrides: Overrides) -> Registry:
    """`registry` with `overrides` applied, and their files' problems beside its own."""
    from skillchat.skills.overrides import apply

    problems = (*registry.problems, *overrides.problems())
    return apply(replace(registry, problems=problems), overrides.chosen())
