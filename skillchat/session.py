"""What `ask` and the REPL share to start a chat, above the chats layer and below ui
and cli: the skill registry of the settings, the chat database, the chat to resume,
and a loop `Chat` that records every message.

    registry = load_registry(settings)          # none when [skills] enabled = false
    store = open_store(settings)
    transcript = chosen_transcript(store, last=..., chat_id=..., notify=warn)
    settings = resumed_settings(settings, transcript)
    chat, recorder = recording_chat(settings, registry, backend, view, store,
                                    transcript, workspace=workspace)

Settings themselves come from the command line (cli/common.py `open_session`), the
workspace from `workspace_from_settings`; the UI picks the view and the backend.
With a local model (`--gguf`, `--local`), `start_local_model` starts its server for
the session: it loads while the rest starts up, stays warm between turns, and ends
with the process, however it ends (engine/local/server.py).

A database that cannot be opened (corrupt, another application's, a newer schema)
stops the command with its one-line `StorageError` (exit 1) before any request is
sent: nothing has been said yet, so nothing is lost, and the message says how to
fix it. Carrying on unsaved would lose the chat silently for anyone not watching
stderr, and a tool that says it saves chats must not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.chats.recorder import ChatRecorder
    from skillchat.chats.records import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings
    from skillchat.engine.backends.base import Backend
    from skillchat.engine.loop import Chat, View
    from skillchat.sandbox.command_tool import Consent
    from skillchat.skills.registry import Registry


def load_registry(settings: Settings) -> Registry:
    """The skills of the configured directories; none when skills are disabled.

    The one place the setting is honoured: `ask`, the REPL (and its `/reload`) and
    `skills list|show|validate` all come here."""
    from skillchat.skills.registry import Registry, discover

    if not settings.skills_enabled:
        return Registry(skills={})
    return discover(
        settings.resolved_skill_dirs(),
        max_skills=settings.max_skills,
        disabled=settings.skills_disabled,
    )


def open_store(settings: Settings) -> ChatStore:
    """The chat database of `settings`, created if missing; StorageError if unusable."""
    from skillchat.chats.store import ChatStore
    from skillchat.tools.toolbox import stored_result

    return ChatStore.open(settings.database_path(), keep=stored_result)


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
        chat = store.last_chat()
        if chat is None:
            notify("no saved chat to continue: starting a new one")
            return None
        return store.load_transcript(chat.id)
    return None


def resumed_settings(settings: Settings, transcript: Transcript | None) -> Settings:
    """A resumed chat goes on with its own model on its own server (`api_base`,
    backend), unless the command line (or the environment) says otherwise. A chat
    saved before servers were recorded (no backend) keeps only its model."""
    if transcript is None:
        return settings
    chat, given = transcript.chat, settings.sources
    changes: dict[str, Any] = {}
    if given.get("model") != "flag":
        changes["model"] = chat.model
        if chat.backend is not None:
            if given.get("api_base") not in ("flag", "env"):
                from skillchat.chats.store import without_credentials

                # The stored URL has no credentials: the configured one may, for the
                # same server.
                if without_credentials(settings.api_base) != chat.api_base:
                    changes["api_base"] = chat.api_base
            if given.get("backend") not in ("flag", "env"):
                changes["backend"] = chat.backend
    return replace(settings, **changes)


def start_local_model(settings: Settings, *, default: bool) -> Settings:
    """Start the local model's server for this session, and return the settings that
    fit it (its context, its model name): the file of `settings.gguf`, or with
    `default` the `--local` model, from the cache or downloaded first. One-line
    LocalModelError when xllamacpp is missing (checked before any download), the
    file is missing or corrupt, or the download fails."""
    from skillchat.engine.local.server import require_server, start_local

    if default:
        from skillchat.engine.local.hub import default_model

        require_server()
        settings = replace(settings, gguf=str(default_model()))
    return start_local(settings)


def recording_chat(
    settings: Settings,
    registry: Registry,
    backend: Backend,
    view: View,
    store: ChatStore,
    transcript: Transcript | None,
    consent: Consent | None = None,
    **options: Any,
) -> tuple[Chat, ChatRecorder]:
    """A loop `Chat` saving to `store` through the returned recorder: the
    transcript's chat resumed, or a new one (created with its first message).
    With `consent`, the chat gets `run_command` when a sandbox works (its scratch
    folder named after the chat). `options` go to `Chat` as they are."""
    from skillchat.chats.recorder import ChatRecorder
    from skillchat.engine.loop import Chat
    from skillchat.sandbox.setup import command_runner

    chat_id = transcript.chat.id if transcript else None
    recorder = ChatRecorder(
        store,
        settings.model,
        chat_id,
        notify=view.notice,
        api_base=settings.api_base,
        backend=settings.backend,
    )
    if consent is not None:
        workspace = options.get("workspace")
        runner = command_runner(settings, registry, workspace, lambda: recorder.chat_id, consent)
        options["commands"] = runner
    chat = Chat(settings, registry, backend, view, recorder=recorder, **options)
    if transcript is not None:
        chat.restore(transcript.messages, transcript.chat.activated_skills)
    return chat, recorder
