"""Pick and build the backend for a model.

This module imports no SDK: `choose_backend` is a pure function of names, and
`make_backend` imports the chosen backend's module (and so `openai`, ~0.5 s, or
`litellm`, seconds) only when called. Call it when a model is about to be used,
not at start-up.
"""

from __future__ import annotations

import os
import sys
import threading

from skillchat.config import PROVIDER_KEY_ENV, Settings
from skillchat.engine.backends.base import Backend
from skillchat.errors import ProviderError

# The keyless ways are named too: a new user without a key can still chat.
KEYLESS = "or run a model on this machine with no key: --local (or --gguf FILE)"
NO_KEY = f"OPENAI_API_KEY is not set: export it, or pass --api-base for a local server, {KEYLESS}"

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


# LiteLLM's provider prefixes most used with an api_base (a proxy, a gateway, a local
# server by its LiteLLM name): with an api_base, a model whose first segment is none
# of these is the server's own id (`Qwen/Qwen2.5-7B-Instruct`), not a provider's.
LITELLM_PROVIDERS = frozenset(
    {"anthropic", "azure", "azure_ai", "bedrock", "cohere", "deepseek", "fireworks_ai"}
    | {"gemini", "groq", "hosted_vllm", "huggingface", "litellm_proxy", "lm_studio"}
    | {"mistral", "ollama", "ollama_chat", "openrouter", "perplexity", "together_ai"}
    | {"vertex_ai", "xai", "llamafile", "nvidia_nim", "cerebras", "deepinfra", "watsonx"}
)


def choose_backend(model: str, backend: str = "auto", api_base: str | None = None) -> str:
    """`openai` or `litellm`: the configured one, or for `auto` by the model's name.

    `auto` picks `openai` for `openai/...` and OpenAI's own model names, and also
    for any name sent to an `api_base` that does not start with a LiteLLM provider:
    that is a local OpenAI-compatible server (`--model llama3` or `--model
    Qwen/Qwen2.5-7B-Instruct` with `--api-base http://localhost:8000/v1`), which
    litellm would refuse, or send elsewhere, by guessing a provider from the name.
    """
    if backend != "auto":
        return backend
    name = model.lower()
    if name.startswith("openai/") or name.startswith(OPENAI_NAME_PREFIXES):
        return "openai"
    if api_base and name.split("/", 1)[0] not in LITELLM_PROVIDERS:
        return "openai"
    return "litellm"


def make_backend(settings: Settings) -> Backend:
    """Build the backend for `settings`; raises ProviderError when it cannot work
    at all (no API key and no local server), before any network call. With a local
    model (`settings.gguf`) it waits for its server to load (engine/local/server.py)."""
    if settings.gguf:
        from dataclasses import replace

        from skillchat.engine.local.server import local_api_base

        settings = replace(settings, api_base=local_api_base(settings), backend="openai")
    if choose_backend(settings.model, settings.backend, settings.api_base) == "openai":
        import_on_fresh_stack("skillchat.engine.backends.openai_backend")
        from skillchat.engine.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(settings)
    problem = key_problem(settings)
    if problem:
        raise ProviderError(problem)
    import_on_fresh_stack("skillchat.engine.backends.litellm_backend")
    from skillchat.engine.backends.litellm_backend import LiteLLMBackend

    return LiteLLMBackend(settings)


def import_on_fresh_stack(module: str) -> None:
    """Import `module` (and so its SDK) on a thread of its own, the caller waiting.

    CPython 3.11 keeps frames in 16 KiB chunks of memory and unmaps a chunk as soon
    as the frame at its base returns. Imported from deep in `ask`'s stack (Typer,
    click, the command, the session), the SDK's thousands of nested imports and
    class bodies cross one chunk's boundary back and forth: an mmap, page faults and
    a munmap each time, ~3,700 of them for `openai`, ~30 ms of system time at every
    start (the SDK floor, importing at the top, makes two). A new thread's stack
    starts empty. A failed import raises here as it would have; a Ctrl-C while
    waiting leaves the import to finish on its own (a daemon thread)."""
    if module in sys.modules:
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:  # the import statement's way (importlib.import_module skips -X importtime)
            __import__(module)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=run, name=f"import {module}", daemon=True)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def missing_key(model: str, api_base: str | None) -> str | None:
    """The key variable a `provider/model` needs and the environment lacks, if any.

    Checked before litellm is imported, so a missing key costs milliseconds, not the
    seconds of that import. Only for providers whose key is their only credential,
    and not with an `api_base` (a proxy or gateway may hold the key).
    """
    provider = model.split("/", 1)[0].lower() if "/" in model else None
    env = PROVIDER_KEY_ENV.get(provider or "")
    if env is None or provider == "openai" or api_base or os.environ.get(env):
        return None
    return env


def key_problem(settings: Settings) -> str | None:
    """The one-line error `make_backend` would raise for a missing key, or None.

    Cheap (no SDK imported), so the REPL and `doctor` can say it before the first
    message rather than after it."""
    if settings.gguf:
        return None
    api_base = settings.api_base or os.environ.get("OPENAI_BASE_URL")
    if choose_backend(settings.model, settings.backend, settings.api_base) == "openai":
        return None if os.environ.get("OPENAI_API_KEY") or api_base else NO_KEY
    missing = missing_key(settings.model, settings.api_base)
    if missing:
        return (
            f"{missing} is not set: export it (or pass --api-base for a proxy that holds it), "
            f"{KEYLESS}"
        )
    return None
