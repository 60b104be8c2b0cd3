"""Pick and build the backend for a model (DESIGN §6).

This module imports no SDK: `choose_backend` is a pure function of names, and
`make_backend` imports the chosen backend's module (and so `openai`, ~0.5 s, or
`litellm`, seconds) only when called. Call it when a model is about to be used,
not at start-up.
"""

from __future__ import annotations

from skillchat.config import Settings
from skillchat.engine.backends.base import Backend

# Bare model names OpenAI serves (gpt-4.1, o3-mini, chatgpt-4o-latest, ...).
OPENAI_NAME_PREFIXES = (
    "gpt-",
    "chatgpt-",
    "o1",
    "o3",
    "o4",
    "codex-",
    "computer-use-",
    "davinci-",
    "babbage-",
)


def choose_backend(model: str, backend: str = "auto", api_base: str | None = None) -> str:
    """`openai` or `litellm`: the configured one, or for `auto` by the model's name.

    `auto` picks `openai` for `openai/...` and OpenAI's own model names, and also
    for a bare name (no provider prefix) sent to an `api_base`: that is a local
    OpenAI-compatible server (`--model llama3 --api-base http://localhost:11434/v1`),
    which litellm would refuse for want of a provider prefix.
    """
    if backend != "auto":
        return backend
    name = model.lower()
    if name.startswith("openai/") or name.startswith(OPENAI_NAME_PREFIXES):
        return "openai"
    if api_base and "/" not in name:
        return "openai"
    return "litellm"


def make_backend(settings: Settings) -> Backend:
    """Build the backend for `settings`; raises ProviderError when it cannot work
    at all (no API key and no local server), before any network call."""
    if choose_backend(settings.model, settings.backend, settings.api_base) == "openai":
        from skillchat.engine.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(settings)
    from skillchat.engine.backends.litellm_backend import LiteLLMBackend

    return LiteLLMBackend(settings)
