"""Prices (and, for engine/context_window.py, context windows) without importing litellm.

litellm ships its price map as a JSON file inside the package. Importing litellm
to read it would cost seconds; finding the file with `importlib.util.find_spec`
and parsing it once (~25 ms, after the first answer, never at start-up) costs
little, and keeps one source of prices for both backends.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from skillchat.engine.events import Usage

_PRICE_FILE = "model_prices_and_context_window_backup.json"


@cache
def _price_map() -> dict[str, Any]:
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    for location in spec.submodule_search_locations:
        path = Path(location) / _PRICE_FILE
        try:
            prices: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return prices
        except (OSError, ValueError):
            continue
    return {}


def model_entry(model: str) -> dict[str, Any] | None:
    """The map's entry for `model`: as named, or without a `provider/` prefix when the
    entry is that provider's (`anthropic/claude-x` is listed as `claude-x`)."""
    entry = _price_map().get(model)
    if entry is None and "/" in model:
        provider, name = model.split("/", 1)
        entry = _price_map().get(name)
        if isinstance(entry, dict) and entry.get("litellm_provider") != provider:
            entry = None
    return entry if isinstance(entry, dict) else None


# Anthropic's prompt caching prices, as multiples of the model's input price, for a
# Claude model the map gives no cache prices for: a cache read costs 0.1x, a write
# to the 5-minute cache 1.25x (Anthropic's "Prompt caching" documentation, pricing
# table, read 2026-12-06; the map's own `cache_read_input_token_cost` and
# `cache_creation_input_token_cost` agree for every Claude model it lists).
CACHE_READ_SHARE = {"anthropic": 0.1}
CACHE_WRITE_SHARE = {"anthropic": 1.25}


def price(model: str, usage: Usage) -> float | None:
    """USD for `usage` on `model` (OpenAI's, `openai/` prefix allowed, or another
    provider's as `provider/name`); None if unknown. Tokens read from or written to
    the prompt cache are billed at the cache's prices, the rest of the input at the
    input price."""
    name = model.removeprefix("openai/")
    entry = model_entry(name) or model_entry(f"openai/{name}")
    if entry is None:
        return None
    rate_in, rate_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(rate_in, int | float) or not isinstance(rate_out, int | float):
        return None
    provider = str(entry.get("litellm_provider", ""))
    read = _rate(entry, "cache_read_input_token_cost", rate_in, CACHE_READ_SHARE.get(provider, 1))
    write = _rate(
        entry, "cache_creation_input_token_cost", rate_in, CACHE_WRITE_SHARE.get(provider, 1)
    )
    fresh = usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens
    return (
        fresh * rate_in
        + usage.cached_tokens * read
        + usage.cache_write_tokens * write
        + usage.completion_tokens * rate_out
    )


def cache_saving(model: str, usage: Usage) -> float | None:
    """What the prompt cache saved on `usage` against the same tokens all billed at
    the input price (negative: writing the cache cost more than it saved yet), or
    None when nothing was read from or written to it, or a price is unknown. Prices
    are linear, so a turn's summed usage gives the turn's saving."""
    if usage.cost is None or not (usage.cached_tokens or usage.cache_write_tokens):
        return None
    uncached = price(model, replace(usage, cached_tokens=0, cache_write_tokens=0))
    return None if uncached is None else uncached - usage.cost


def _rate(entry: dict[str, Any], key: str, rate_in: float, share: float) -> float:
    """The map's price for `key`, else `share` of the input price."""
    value = entry.get(key)
    return float(value) if isinstance(value, int | float) else rate_in * share
