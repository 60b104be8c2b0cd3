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


def over_budget_results(
    messages: list[dict[str, Any]], budget: int, stub: str
) -> list[dict[str, Any]]:
    """The tool results to replace by `stub` so `messages` fit in `budget` characters.

    Oldest first, and only results of earlier turns: skill bodies and files are the
    bulk of a skills chat and the one part the model can fetch again, while the
    current turn's results (after the last user message) are not answered yet. User
    and assistant text is never chosen. Empty when the messages already fit.
    """
    size = sum(len(json.dumps(m, ensure_ascii=False)) for m in messages)
    if size <= budget:
        return []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    chosen: list[dict[str, Any]] = []
    for message in messages[:last_user]:
        if size <= budget:
            break
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str) and content != stub:
            size -= len(content) - len(stub)
            chosen.append(message)
    return chosen
