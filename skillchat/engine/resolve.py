"""The one way a `Target` is made: `resolve(settings, place)`, and the places asked for.

A place comes from the settings (`asked`), a name (`named`: `/model NAME`, a skill's
model), or a saved chat (`continued`); `resolve` turns it into where requests go:

- a local file: its llama.cpp server is started (once per file and process,
  engine/local/server.py) and its context is the window; the model is the file's
  name, the backend openai;
- a server (`api_base`): the window the place states (a `[models.NAME]` table's
  `context_window`, the user's), else the server's `/props`;
- the provider's own server: the window stated, else none yet (the loop looks the
  model map up once a chat is long enough to need it: engine/context_window.py).

A known window fits what the user left at its default: the reply's `max_tokens`, the
transcript budget and the catalog (engine/context_window.py's `budget_for_window`).
Every place is resolved from the user's own values, never from the target it
leaves, so nothing fitted to one place goes along to the next.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skillchat.backend_table import backend_row, required_max_tokens
from skillchat.config import Settings
from skillchat.engine.context_window import (
    budget_for_window,
    reply_tokens,
    server_window,
    user_set,
)
from skillchat.target import Place, Target

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript


def _own(settings: Settings, name: str) -> Any:
    """`settings`' value of `name` when the user set it (file, environment, flag, a
    table chosen at start), else its default: never a value fitted to a place."""
    if user_set(settings, name):
        return settings.value(name)
    return Settings().value(name)


# Where a value came from, as the command line says (config.py's `load_with_sources`):
# which of a saved chat's place the command line overrides.
Sources = Mapping[str, str]


def asked(settings: Settings) -> Place:
    """The place the settings ask for: the configured (or `--model`) model, its
    server or local file, and what the user stated about it."""
    return Place(
        settings.model.name,
        settings.model.api_base,
        settings.model.backend,
        settings.model.gguf,
        _own(settings, "context_window"),
        _own(settings, "max_tokens"),
        _own(settings, "vision"),
    )


def named(settings: Settings, name: str, base: Place) -> Place:
    """`name` as `/model` or a skill's model means it. A `[models.NAME]` table is a
    whole place: no `api_base` is the provider's own server, no `gguf` no file (never
    the server or file of `base`). Any other name is a model id on `base`'s server;
    from a local file, on the server the settings name (a file runs its own model)."""
    entry = settings.model.named.get(name)
    if entry is not None:
        return Place(
            entry.get("model", name),
            entry.get("api_base"),
            entry.get("backend", _own(settings, "backend")),
            entry.get("gguf"),
            entry.get("context_window"),
            entry.get("max_tokens", _own(settings, "max_tokens")),
            entry.get("vision", _own(settings, "vision")),
        )
    if base.gguf is None:
        return replace(base, model=name)
    return replace(asked(settings), model=name, gguf=None, window=None)


def continued(
    settings: Settings, base: Place, transcript: Transcript | None, sources: Sources
) -> Place:
    """The place `transcript`'s chat goes on with: its own model on its own server
    (`api_base`, backend) or local file, unless the command line (or the environment)
    chose them: `--model`, `--api-base`, `--gguf`, `--local`, `--backend`. A chat on
    another place than `base` takes the window of a `[models.NAME]` naming its model
    and server, never `base`'s. A chat saved before servers were recorded keeps only
    its model (a named one brings its table)."""
    if transcript is None or sources.get("model") == "flag":
        return base
    chat = transcript.chat
    given = {k for k, v in sources.items() if v in ("flag", "env")}
    if chat.backend is None:
        return base if chat.model == base.model else named(settings, chat.model, base)
    api_base, gguf = base.api_base, base.gguf
    if not given & {"api_base", "gguf"}:
        from skillchat.chats.store import without_credentials

        gguf = chat.gguf
        # The stored URL has no credentials: the configured one may, for that server.
        if without_credentials(base.api_base) != chat.api_base:
            api_base = chat.api_base
    backend = base.backend if "backend" in given else chat.backend
    if (api_base, gguf) == (base.api_base, base.gguf):
        return replace(base, model=chat.model, backend=backend)
    window = next(
        (
            entry.get("context_window")
            for entry in settings.model.named.values()
            if (entry.get("model"), entry.get("api_base")) == (chat.model, api_base)
        ),
        None,
    )
    max_tokens = None if sources.get("max_tokens", "").startswith("models.") else base.max_tokens
    return Place(chat.model, api_base, backend, gguf, window, max_tokens, base.vision)


def resolve(settings: Settings, place: Place, *, probe: bool = True) -> Target:
    """Where `place`'s requests go and what fits there. LocalModelError when its
    local file cannot run (missing, not GGUF, no xllamacpp). Without `probe`, a
    server's window is not asked for here: the loop asks once a chat needs it (a
    `Session` made in code, whose one-shot question sends nothing else)."""
    if place.gguf is not None:
        from skillchat.engine.local.server import start_local

        local = start_local(settings.model, place.gguf)
        return _fitted(
            settings, place, local.ctx, model=local.alias, api_base=None, backend="openai",
            gguf=str(local.model),
        )  # fmt: skip
    window = place.window
    # llama.cpp's /props, asked of a chat-completions server: a Messages API server
    # (the anthropic backend's) is none, and its first request would wait for a 404.
    messages_api = backend_row(place.model, place.backend, place.api_base).name == "anthropic"
    if place.api_base and window is None and probe and not messages_api:
        window = server_window(place.api_base, os.environ.get("OPENAI_API_KEY"))
    if not place.api_base:  # the provider's: the loop fits the map's window lazily
        return _required_reply(settings, Target(
            place, place.model, None, place.backend, None, window, place.max_tokens,
            place.vision, settings.limits.context_max_chars, settings.limits.catalog_max_chars,
        ))  # fmt: skip
    return _required_reply(settings, _fitted(
        settings, place, window, model=place.model, api_base=place.api_base,
        backend=place.backend, gguf=None,
    ))  # fmt: skip


def _required_reply(settings: Settings, target: Target) -> Target:
    """`target` with the settings' thinking budget, and the `max_tokens` its backend
    must send when nothing set one (Anthropic's API requires it: backend_table.py's
    `required_max_tokens`), so the notice of a reply cut there names it."""
    needed = required_max_tokens(
        backend_row(target.model, target.backend, target.api_base).name,
        target.model,
        settings.model.thinking_budget,
    )
    max_tokens = target.max_tokens if target.max_tokens is not None else needed
    return replace(target, max_tokens=max_tokens, thinking=settings.model.thinking_budget)


def _fitted(
    settings: Settings,
    place: Place,
    window: int | None,
    *,
    model: str,
    api_base: str | None,
    backend: str,
    gguf: str | None,
) -> Target:
    """A target fitted to `window` for whatever the user left at its default: a
    reply of at most `reply_tokens`, the transcript budget of `budget_for_window`,
    and a catalog of at most a quarter of that budget, so a full catalog leaves the
    chat three quarters."""
    chars, catalog = settings.limits.context_max_chars, settings.limits.catalog_max_chars
    max_tokens = place.max_tokens
    if window is not None:
        budget = budget_for_window(window, settings.limits.budget)
        if chars is None:
            chars = budget
        if catalog is None:
            catalog = max(1, min(settings.limits.catalog_budget, budget // 4))
        if max_tokens is None:
            max_tokens = reply_tokens(window)
    return Target(
        place, model, api_base, backend, gguf, window, max_tokens, place.vision, chars, catalog
    )
