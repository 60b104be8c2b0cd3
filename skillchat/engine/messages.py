"""Chat-completions messages as the loop builds them: assistant turns, call ids, and
usage summed over a turn's requests. Pure functions, kept out of the loop itself."""

from __future__ import annotations

import json
import secrets
from typing import Any

from skillchat.engine.events import ToolCall, Usage


def new_call_id() -> str:
    """An id for a tool call skillchat adds itself (`/name`, attachments).

    Nine letters and digits: the one id shape every provider accepts (Mistral's rule).
    """
    return secrets.token_hex(5)[:9]


def add_usage(total: Usage | None, more: Usage | None) -> Usage | None:
    """Sum two usages; the cost is known only while every part's cost is."""
    if total is None or more is None:
        return total or more
    cost = None if total.cost is None or more.cost is None else total.cost + more.cost
    return Usage(
        total.prompt_tokens + more.prompt_tokens,
        total.completion_tokens + more.completion_tokens,
        total.total_tokens + more.total_tokens,
        cost,
    )


def _safe_arguments(raw: str) -> str:
    """Arguments fit to echo back: providers that re-parse them (Anthropic through
    litellm) reject invalid JSON, and the error result already quotes what was sent."""
    try:
        return raw if isinstance(json.loads(raw), dict) else "{}"
    except ValueError:
        return "{}"


def assistant_message(text: str, calls: list[ToolCall]) -> dict[str, Any]:
    """An assistant turn in chat-completions form."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _safe_arguments(c.arguments)},
            }
            for c in calls
        ]
    return message
