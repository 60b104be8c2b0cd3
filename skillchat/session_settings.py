"""The settings a chat goes on with: a resumed chat's model, server, local model file
and workspace, against what the command line chose; and the local model's server.

`ask`, the REPL's start and `/resume`, and `Session` itself (a resumed chat's named
model) all decide this the same way, so it lives below session.py, apart from the
live state a `Session` owns. Nothing here is imported before it is needed: the
chats, config and local-model modules are imported inside the functions.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillchat.chats.records import Transcript
    from skillchat.config import Settings

# Where a model runs and what its window decides: what a `[models.NAME]` table sets
# (config_file.py's MODEL_KEYS) and what is fitted to a window (context_window.py).
PLACE_FIELDS = (
    "model", "api_base", "backend", "gguf", "vision", "max_tokens", "context_window",
    "context_max_chars", "catalog_max_chars",
)  # fmt: skip


def resumed_workspace(
    settings: Settings, transcript: Transcript | None, notify: Callable[[str], None]
) -> Settings:
    """A resumed chat goes on with its own workspace, unless --workspace or
    --no-workspace say otherwise; `notify` says so when it differs from the one this
    start would have (the folder's project, or none). A chat saved before folders
    were recorded keeps what this start gives."""
    if transcript is None or transcript.chat.folder is None:
        return settings
    if settings.sources.get("workspace") == "flag":
        return settings
    kept, here = transcript.chat.workspace, settings.workspace
    here_real = os.path.realpath(here) if here else None
    if kept == here_real:
        return settings
    notify(
        f"chat {transcript.chat.id} goes on with its workspace "
        f"{kept or '(none)'}, not {here_real or '(none)'}: -w DIR or --no-workspace to change"
    )
    return replace(settings, workspace=kept, sources={**settings.sources, "workspace": "chat"})


def resumed_settings(settings: Settings, transcript: Transcript | None) -> Settings:
    """A resumed chat goes on with its own model on its own server (`api_base`,
    backend) or local model file (`gguf`), unless the command line (or the
    environment) says otherwise: `--api-base`, `--gguf` or `--local` choose where
    it goes on. A chat saved before servers were recorded (no backend) keeps only
    its model."""
    if transcript is None:
        return settings
    chat, given = transcript.chat, settings.sources
    changes: dict[str, Any] = {}
    if given.get("model") != "flag":
        changes["model"] = chat.model
        if chat.backend is not None:
            if not any(given.get(k) in ("flag", "env") for k in ("api_base", "gguf")):
                from skillchat.chats.store import without_credentials

                changes["gguf"] = chat.gguf
                # The stored URL has no credentials: the configured one may, for the
                # same server.
                if without_credentials(settings.api_base) != chat.api_base:
                    changes["api_base"] = chat.api_base
            if given.get("backend") not in ("flag", "env"):
                changes["backend"] = chat.backend
    return replace(settings, **changes)


def continued_settings(settings: Settings, transcript: Transcript | None) -> Settings:
    """The settings `transcript`'s chat goes on with (`resumed_settings`), fitted to
    where it runs when that is not where `settings` run (`fitted_elsewhere`): a
    `--gguf` chat continued with `-c`, `--chat ID` or `/resume` loads its file again
    instead of asking for an API key (a file that is gone or broken is the local
    model's one-line error), and a chat of another server gets that server's window,
    not the configured one's."""
    return fitted_elsewhere(resumed_settings(settings, transcript), settings)


def fitted_elsewhere(settings: Settings, before: Settings) -> Settings:
    """`settings` fitted to the model's window where they run, when that is another
    server or local file than `before`'s (`/model NAME`, a continued chat): a local
    file's server is started and fitted to; a server's window is its named model's
    `context_window` (the `[models.NAME]` table of that model and server, for a
    continued chat), else what its `/props` reports, else left to the loop (the
    model map). What was fitted to `before`'s window never goes along. The same
    place keeps `settings` as they are (fitted there already)."""
    if (settings.api_base, settings.gguf) == (before.api_base, before.gguf):
        return settings
    if settings.gguf:
        return start_local_model(settings, default=False)
    from skillchat.engine.context_window import fit_to_server, unfitted

    settings = unfitted(settings)
    for name, entry in settings.named_models.items():
        window = entry.get("context_window")
        same = (entry.get("model"), entry.get("api_base")) == (settings.model, settings.api_base)
        if same and window is not None and settings.context_window is None:
            sources = {**settings.sources, "context_window": f"models.{name}"}
            settings = replace(settings, context_window=window, sources=sources)
    return fit_to_server(settings)


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
        # `--local` chose it as `--gguf` would: a continued chat goes on with it.
        sources = {**settings.sources, "gguf": "flag"}
        settings = replace(settings, gguf=str(default_model()), sources=sources)
    return start_local(settings)


def resumed_model(settings: Settings, transcript: Transcript | None) -> Settings:
    """`settings` going on with the model `transcript`'s chat was on (a named model
    brings its table), unless the command line chose one (`resumed_settings`)."""
    from skillchat.config import with_model

    model = resumed_settings(settings, transcript).model
    return with_model(settings, model) if model != settings.model else settings
