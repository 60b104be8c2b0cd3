"""How much a request may carry: the model's context window, and the budget it makes.

A local server's context is often 4k-32k tokens, far below the default budget
(`context_max_chars`, 300,000 characters): with that default a long chat reaches
the server's limit and is refused (HTTP 400) before anything is trimmed. So when
the model's window is known, the budget follows it, unless the user set
`context_max_chars` themselves (their number always wins).

Where a window comes from: the user's `context_window` (a named model's,
`[models.NAME] context_window`) beats everything; else, cheapest first for the
backend that asks:

- the server: llama.cpp's `GET /props` (beside `/v1`) reports the context each
  request may fill, `default_generation_settings.n_ctx` (the slot's share when the
  server runs several slots). One GET, bounded by `PROBE_TIMEOUT`, on the chat's
  own connection, made once per backend the first time the loop needs a budget,
  never on the fast commands; only to a server that may be llama.cpp's (this
  machine or a private network: `may_answer_props`), never a hosted provider.
- litellm's model map (`max_input_tokens`), read from its JSON file like prices
  (engine/pricing.py), without importing litellm.

The budget counts characters of the JSON messages, as the loop measures them.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from skillchat.config import Settings
from skillchat.engine.messages import message_size
from skillchat.engine.pricing import model_entry
from skillchat.errors import WireError

if TYPE_CHECKING:
    from skillchat.engine.backends.wire import Wire

# Seconds for the one /props probe: a local server answers in milliseconds; a
# remote one that does not know the path answers 404 quickly; anything slower is
# not worth delaying the first request for.
PROBE_TIMEOUT = 2.0
# A /props answer is read this far (llama.cpp's is a few KiB).
_PROPS_LIMIT = 1_000_000
# Names only a local network resolves (beside single-label ones).
_LOCAL_NAMES = (".local", ".lan", ".internal", ".home.arpa", ".localhost")
# Characters per token of chat JSON: ~3.2 measured with a small BPE vocabulary
# (SmolLM2's 49k) on English Markdown; 3 keeps the estimate on the safe side.
CHARS_PER_TOKEN = 3
# Part of the window kept out of the character budget: the reply (a fitted
# `max_tokens` is this share) and the tool schemas, which the budget does not count.
# The budget itself covers the system prompt (skills catalog included) and messages.
RESERVED_SHARE = 4  # one quarter
# Characters under which no lookup is made: the budget of a 1,778-token window. A
# smaller window could not hold skillchat's system prompt and tools anyway.
LOOKUP_FLOOR = 4_000


def budget_for_window(window: int, default: int) -> int:
    """The character budget of a request's system prompt and messages in a context
    of `window` tokens: what the reserved quarter (the reply, the tool schemas)
    leaves, in characters, never more than `default` (the default budget also bounds
    the cost and latency of each request, so a 1M-token window does not raise it).

    The one place the budget comes from a window: the loop's trimming and compaction
    (`context_budget`) and the fitting of a local model or a server at start-up
    (engine/resolve.py) both use it, so a fitted chat compacts where an unfitted one
    with the same window would."""
    usable = window - window // RESERVED_SHARE
    return max(1, min(default, usable * CHARS_PER_TOKEN))


def reply_tokens(window: int) -> int:
    """The longest reply fitted to a context of `window` tokens (sent as
    `max_tokens`): the reserved quarter, so a full transcript still leaves it room."""
    return max(1, window // RESERVED_SHARE)


def user_set(settings: Settings, name: str) -> bool:
    """True when the user stated `name` (it is not its default: the limits a window
    decides are None until stated or fitted)."""
    return bool(settings.value(name) != Settings().value(name))


def _at_most(
    messages: Sequence[dict[str, Any]], chars: int, size: Callable[[dict[str, Any]], int]
) -> bool:
    """True when `messages` take no more than `chars` characters as JSON (stops early)."""
    total = 0
    for message in messages:
        total += size(message)
        if total > chars:
            return False
    return True


def context_budget(
    settings: Settings,
    window: Callable[[], int | None],
    messages: Sequence[dict[str, Any]],
    size: Callable[[dict[str, Any]], int] = message_size,
) -> int:
    """The character budget the loop trims `messages` to: the user's
    `context_max_chars` when they set it, else the budget of the window the user
    stated (`context_window`, a named model's) or `window()` returns, else the default.

    The window is not looked up for a chat still under `LOOKUP_FLOOR` characters,
    which fits any window it could come from, nor before the chat's first answer:
    the budget trims only what came before the turn in progress (results already
    seen, older turns), and there is nothing of that yet. So a chat's first request,
    however long its message, never waits for the lookup (a GET, or parsing
    litellm's map, ~30 ms). `size` measures a message (the chat's cache: the loop
    asks for the budget several times a request)."""
    if settings.limits.context_max_chars is not None or _at_most(messages, LOOKUP_FLOOR, size):
        return settings.limits.budget
    tokens = settings.model.context_window
    if tokens is None and any(message.get("role") == "assistant" for message in messages):
        tokens = window()
    if tokens is None:
        return settings.limits.budget
    return budget_for_window(tokens, settings.limits.budget)


def props_url(api_base: str) -> str:
    """llama.cpp serves /props at its root, beside /v1: `http://h:8080/v1` -> `http://h:8080/props`."""
    root = api_base.rstrip("/")
    root = root.removesuffix("/v1")
    return f"{root}/props"


def may_answer_props(api_base: str) -> bool:
    """Whether the server at `api_base` may be one that answers `/props` (llama.cpp's,
    which runs on this machine or its network): a loopback or private address, or a
    name that only a local network resolves (`gpu-box`, `*.local`, `*.lan`,
    `*.internal`, `*.home.arpa`). A hosted provider's URL is never asked: there the
    GET is a TLS handshake and a 404 spent before the chat's request."""
    host = (urlsplit(api_base).hostname or "").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(_LOCAL_NAMES)
    return address.is_private or address.is_loopback or address.is_link_local


def server_window(
    api_base: str, api_key: str | None = None, wire: Wire | None = None
) -> int | None:
    """The per-request context a llama.cpp server reports at /props; None for any
    other answer (404 from other servers, redirects, errors, slowness, odd JSON),
    and for a server that cannot be llama.cpp's (`may_answer_props`).

    Through `wire`, the backend's own connection, mid-chat: the probe's answer is
    read to its end so the chat's next request goes on the same connection.
    Without one (start-up, `--api-base`, before the backend is made), on a
    connection of its own, closed after it."""
    if not may_answer_props(api_base):
        return None
    from skillchat.engine.backends.wire import Wire

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = urlsplit(props_url(api_base))
    own = wire is None
    if wire is None:
        origin = url._replace(path="", query="", fragment="").geturl()
        wire = Wire(origin, timeout=PROBE_TIMEOUT, read_timeout=PROBE_TIMEOUT)
    try:
        with wire.get(url.path, headers, timeout=PROBE_TIMEOUT) as response:
            said = response.read(_PROPS_LIMIT)
            return _n_ctx(json.loads(said)) if response.status == 200 else None
    except (WireError, ValueError):
        return None
    finally:
        if own:
            wire.close()


def _n_ctx(props: Any) -> int | None:
    """The context size in a /props answer, when it is a positive whole number."""
    settings = props.get("default_generation_settings", {}) if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0 else None


def map_window(model: str) -> int | None:
    """`max_input_tokens` of `model` in litellm's model map (`provider/` prefix allowed)."""
    entry = model_entry(model)
    tokens = entry.get("max_input_tokens") if entry else None
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return tokens
    return None


def find_window(
    model: str, api_base: str | None, api_key: str | None, wire: Wire | None = None
) -> int | None:
    """The server's window when there is a server to ask (through `wire`, the
    backend's connection, when given), else (or when it does not say) the model
    map's."""
    window = server_window(api_base, api_key, wire) if api_base else None
    return window or map_window(model)
