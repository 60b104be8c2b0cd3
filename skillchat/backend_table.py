"""The model backends, one row each: a new native backend is its module and its row.

A row says what must be known *without* importing the backend's module (a native
one's, tens of milliseconds; `litellm`, seconds): its name (the config's `backend`
and `--backend` accept the table's names and `auto`), whether it serves a model
under `auto`, the one-line error for a missing key, whether `doctor` probes its
server, and where its class is (`make`, "module:Class", imported only when a model
is about to be called, by engine/backends/select.py). The class, built from a
`Target` and its `Timeouts`, streams replies, maps its failures to one
`ProviderError` line (engine/backends/provider_errors.py) and looks up the model's
window (engine/context_window.py): that is the module's part.

The table sits below `config`, which checks the `backend` names against it, and
imports nothing of skillchat.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import NamedTuple

# The keyless ways are named too: a new user without a key can still chat.
KEYLESS = "or run a model on this machine with no key: --local (or --gguf FILE)"
NO_KEY = (
    "OPENAI_API_KEY is not set: export it or `skillchat keys set` it, "
    f"or pass --api-base for a local server, {KEYLESS}"
)

# Extended thinking's budget in tokens: `--thinking` alone, and the least the
# Messages API takes (the anthropic backend sends it).
DEFAULT_THINKING = 8_000
MIN_THINKING = 1_024

# The key variable of each provider whose key skillchat can check before loading a
# model library (litellm takes seconds to import only to say the key is missing).
# Providers with other credentials (bedrock, vertex_ai, ollama, ...) are not here.
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
}

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


class BackendRow(NamedTuple):
    """One backend. `serves(model, api_base)`: chosen under `auto` (rows are asked
    in order; the last serves anything). `key_problem(model, api_base)`: the one-line
    error for a missing key, or None, checked before its SDK is imported. `probed`:
    `doctor` asks its server's `/models`. `make`: "module:Class", the class built
    from the settings (engine/backends/base.py's `Backend`). A NamedTuple: the table
    is built at every start (config imports it), and a tuple class is one small
    `eval` where a frozen dataclass compiles four methods."""

    name: str
    serves: Callable[[str, str | None], bool]
    key_problem: Callable[[str, str | None], str | None]
    probed: bool
    make: str


def _openai_serves(model: str, api_base: str | None) -> bool:
    """`openai/...` and OpenAI's own model names, and any name sent to an `api_base`
    that does not start with a LiteLLM provider: that is a local OpenAI-compatible
    server (`--model llama3` or `--model Qwen/Qwen2.5-7B-Instruct` with `--api-base
    http://localhost:8000/v1`), which litellm would refuse, or send elsewhere, by
    guessing a provider from the name."""
    name = model.lower()
    if name.startswith("openai/") or name.startswith(OPENAI_NAME_PREFIXES):
        return True
    return bool(api_base) and name.split("/", 1)[0] not in LITELLM_PROVIDERS


def _openai_key_problem(model: str, api_base: str | None) -> str | None:
    """A key, or a server of one's own (`OPENAI_BASE_URL` too), which may need none."""
    if os.environ.get("OPENAI_API_KEY") or api_base or os.environ.get("OPENAI_BASE_URL"):
        return None
    return NO_KEY


def _anthropic_serves(model: str, api_base: str | None) -> bool:
    """`anthropic/...` models, on Anthropic's API or on a server given as `api_base`
    that speaks the Messages API (a gateway, a proxy, the test server)."""
    return model.lower().startswith("anthropic/")


def required_max_tokens(backend: str, model: str, thinking: int | None) -> int | None:
    """The reply's `max_tokens` on a backend whose API requires one when nothing
    states one (Anthropic's: `claude_reply_tokens`); None on the other backends."""
    return claude_reply_tokens(model, thinking) if backend == "anthropic" else None


def claude_reply_tokens(model: str, thinking: int | None) -> int:
    """A Claude reply's default `max_tokens`: what every model of the family can
    produce (Claude 3 Haiku and Opus: 4,096; 3.5: 8,192; 3.7 and 4.x: 64,000 or more,
    of which 16,000 is a long answer's room), plus the thinking budget."""
    name = model.lower().removeprefix("anthropic/")
    if name.startswith("claude-3-") and not name.startswith(("claude-3-5", "claude-3-7")):
        reply = 4096
    else:
        reply = 8192 if name.startswith("claude-3-5") else 16_000
    return reply + (thinking or 0)


def missing_key(model: str, api_base: str | None) -> str | None:
    """The key variable a `provider/model` needs and the environment lacks, if any.

    Only for providers whose key is their only credential, and not with an
    `api_base` (a proxy or gateway may hold the key).
    """
    provider = model.split("/", 1)[0].lower() if "/" in model else None
    env = PROVIDER_KEY_ENV.get(provider or "")
    if env is None or provider == "openai" or api_base or os.environ.get(env):
        return None
    return env


def _provider_key_problem(model: str, api_base: str | None) -> str | None:
    missing = missing_key(model, api_base)
    if missing:
        return (
            f"{missing} is not set: export it or `skillchat keys set` it "
            "(or pass --api-base for a proxy that holds it), "
            f"{KEYLESS}"
        )
    return None


BACKENDS = (
    BackendRow(
        name="openai",  # chat completions over wire.py: OpenAI, any compatible server
        serves=_openai_serves,
        key_problem=_openai_key_problem,
        probed=True,
        make="skillchat.engine.backends.openai_backend:OpenAIBackend",
    ),
    BackendRow(
        name="anthropic",  # Anthropic's Messages API, natively (no SDK): prompt caching, thinking
        serves=_anthropic_serves,
        key_problem=_provider_key_problem,
        probed=False,
        make="skillchat.engine.backends.anthropic_backend:AnthropicBackend",
    ),
    BackendRow(
        name="gemini",  # Google's OpenAI-compatible endpoint, the same code
        serves=lambda model, api_base: model.lower().startswith("gemini/"),
        key_problem=_provider_key_problem,
        probed=False,
        make="skillchat.engine.backends.gemini_backend:GeminiBackend",
    ),
    BackendRow(
        name="litellm",  # every other provider, through litellm
        serves=lambda model, api_base: True,
        key_problem=_provider_key_problem,
        probed=False,
        make="skillchat.engine.backends.litellm_backend:LiteLLMBackend",
    ),
)
# What the config's `backend` and `--backend` accept.
BACKEND_NAMES = ("auto", *(row.name for row in BACKENDS))


def backend_row(model: str, backend: str = "auto", api_base: str | None = None) -> BackendRow:
    """The row named `backend`, or for `auto` the first that serves `model`.
    `backend` is one of BACKEND_NAMES (config.py checks it when the settings load)."""
    if backend == "auto":
        return next(row for row in BACKENDS if row.serves(model, api_base))
    return next(row for row in BACKENDS if row.name == backend)
