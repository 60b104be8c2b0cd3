"""Chat-completions messages as the loop builds them: assistant turns, call ids, and
usage summed over a turn's requests, and the shape of `keep` that adds one to a
transcript. Pure functions, kept out of the loop itself."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, Protocol

from skillchat.engine.events import ToolCall, Usage
from skillchat.engine.images import content_size


class Keep(Protocol):
    """How a complete message joins a chat's transcript (engine/loop.py `Chat.keep`):
    a request and a tool round add theirs through it, never to the list itself."""

    def __call__(
        self, message: dict[str, Any], *, interrupted: bool = False, usage: Usage | None = None
    ) -> None: ...


def new_call_id() -> str:
    """An id for a tool call skillchat adds itself (`/name`, attachments).

    Nine letters and digits: the one id shape every provider accepts (Mistral's rule).
    """
    return os.urandom(5).hex()[:9]  # secrets.token_hex's bytes, without its import


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
        total.cached_tokens + more.cached_tokens,
        total.cache_write_tokens + more.cache_write_tokens,
    )


# A UTF-16 surrogate that is not half of a pair: JSON's "\ud800" decodes to one, and
# no UTF-8 encoder (HTTP bodies, SQLite, the terminal) accepts it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Deeper than any real tool's arguments; deep enough nesting crashes json and repr.
MAX_ARGUMENT_DEPTH = 64
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD.

    Done to everything a provider sends before it is kept: one lone surrogate stored
    in the transcript made every later request (and every save) of the chat fail.
    """
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


def clean_value(value: Any) -> Any:
    """`value` (a message, or any JSON value) with `clean_text` applied to every string."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    return value


_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def clean_arguments(raw: str) -> str:
    """Arguments JSON whose escapes decode to no lone surrogate.

    `"\\ud800"` is valid JSON text but decodes to a lone surrogate, which then
    reaches the tool, its error message, `--json` and the store. Only arguments with
    such an escape are re-encoded; anything else (invalid JSON too) stays as sent.
    """
    if not _ESCAPED_SURROGATE.search(raw) or too_deep(raw):
        return raw
    try:
        return json.dumps(clean_value(json.loads(raw)), ensure_ascii=False)
    except ValueError:
        return raw


def too_deep(raw: str, limit: int = MAX_ARGUMENT_DEPTH) -> bool:
    """True when the JSON text `raw` nests arrays/objects more than `limit` deep.

    Linear, and free for ordinary arguments: fewer brackets than `limit` cannot nest
    deeper. `json` would raise RecursionError at about 1,000 levels, and every reader
    of the arguments (tools, cards, `--json`, export) would have to catch it.
    """
    if raw.count("[") + raw.count("{") <= limit:
        return False
    depth = 0
    for bracket in _BRACKET.finditer(_JSON_STRING.sub("", raw)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > limit:
            return True
    return False


def _safe_arguments(raw: str) -> str:
    """Arguments fit to echo back: providers that re-parse them (Anthropic through
    litellm) reject invalid JSON, and the error result already quotes what was sent."""
    if too_deep(raw):
        return "{}"
    try:
        return raw if isinstance(json.loads(raw), dict) else "{}"
    except ValueError:
        return "{}"


def assistant_message(
    text: str, calls: list[ToolCall], thinking: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An assistant turn in chat-completions form; `thinking`, the reply's thinking
    blocks, kept under `thinking_blocks` (LiteLLM's name for them) for the Messages
    API, which wants them back while a tool round goes on."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if thinking:
        message["thinking_blocks"] = thinking
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


def message_size(message: dict[str, Any]) -> int:
    """A message's size in the request body: its JSON and the separator after it (an
    image counted as what it costs a model, not as its base64: engine/images.py)."""
    size = content_size(message)
    return (len(json.dumps(message, ensure_ascii=False)) if size is None else size) + 2


Size = Callable[[dict[str, Any]], int]


class SizeCache:
    """`message_size`, remembered per message: a 10,000-message chat is measured once,
    not on every request. A message's content may change (elided), so the size is
    reused only while the content is the same object; the message itself is held so
    its id cannot be reused by another."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[dict[str, Any], Any, int]] = {}

    def __call__(self, message: dict[str, Any]) -> int:
        content = message.get("content")
        known = self._known.get(id(message))
        if known is not None and known[0] is message and known[1] is content:
            return known[2]
        size = message_size(message)
        self._known[id(message)] = (message, content, size)
        return size


def over_budget_results(
    messages: list[dict[str, Any]], budget: int, stub: str, size_of: Size = message_size
) -> list[dict[str, Any]]:
    """The tool results to replace by `stub` so `messages` fit in `budget` characters.

    Oldest first, and only results the model has already seen (those before the last
    assistant message): skill bodies and files are the bulk of a skills chat and the
    one part the model can fetch again, while the latest round's results are not
    answered yet. User and assistant text is never chosen. Empty when they fit.
    """
    size = sum(size_of(m) for m in messages)
    if size <= budget:
        return []
    seen = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=0)
    chosen: list[dict[str, Any]] = []
    for message in messages[:seen]:
        if size <= budget:
            break
        content = message.get("content")
        if message.get("role") == "tool" and isinstance(content, str) and content != stub:
            size -= len(content) - len(stub)
            chosen.append(message)
    return chosen


def oversized_round(
    messages: list[dict[str, Any]], budget: int, stub: str, size_of: Size = message_size
) -> list[dict[str, Any]]:
    """The latest round's tool results to replace by `stub`, largest first, when the
    current turn (from the last user message) alone does not fit in `budget`: the
    model read more at once than a request can carry."""
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    turn = messages[start:]
    size = sum(size_of(m) for m in turn)
    results = [m for m in turn if m.get("role") == "tool" and m.get("content") != stub]
    chosen: list[dict[str, Any]] = []
    for message in sorted(results, key=lambda m: -len(str(m.get("content")))):
        if size <= budget:
            break
        size -= len(str(message.get("content"))) - len(stub)
        chosen.append(message)
    return chosen


def recent_turns(
    messages: list[dict[str, Any]], budget: int, size_of: Size = message_size
) -> list[dict[str, Any]]:
    """The longest tail of `messages` that starts at a user message and fits in
    `budget` characters; the last turn whatever its size.

    Cutting only before a user message keeps every tool call with its results: a
    request never starts with an orphan tool message, which providers reject.
    """
    sizes = [size_of(m) for m in messages]
    tail = sum(sizes)
    if tail <= budget:
        return messages
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not starts:
        return messages
    done = 0
    for start in starts:
        tail -= sum(sizes[done:start])
        done = start
        if tail <= budget:
            return messages[start:]
    return messages[starts[-1] :]
