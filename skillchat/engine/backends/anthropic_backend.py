"""The `anthropic` backend: Anthropic's Messages API, spoken natively over wire.py.

For `anthropic/...` models and any server that speaks the Messages API (`--backend
anthropic --api-base URL`). Through LiteLLM the same request took 4.7 s and 222 MB
before it left, and carried no `cache_control`; Anthropic's OpenAI-compatible
endpoint has neither prompt caching nor extended thinking. So this module imports
no SDK: the standard library's HTTP (wire.py), sse.py's event reader, and the
translation below.

- **The request.** The loop's messages are chat-completions messages; here they
  become the Messages API's: the system messages one `system` list, assistant
  turns `text` and `tool_use` blocks (after their `thinking` blocks, which the API
  requires back with their signatures while a tool round goes on), consecutive
  tool results and the images message after them one user turn of `tool_result`
  blocks, data-URL images `image` blocks, tools `{name, description,
  input_schema}`. `max_tokens` is required: the target's (engine/resolve.py puts
  the default per model there when nothing states one).
- **Prompt caching.** `cache_control` breakpoints (the API takes 4) on the last
  tool, the system prompt (the skills catalog), the previous request's last block
  and this request's: each round reads everything the round before sent from the
  cache, at a tenth of the input price (engine/pricing.py).
- **The stream.** `message_start` (input usage, cache reads and writes),
  `content_block_*` (text, tool use with streamed `input_json_delta`, thinking with
  its `signature_delta`), `message_delta` (stop reason, output usage),
  `message_stop`; `ping` and unknown events are skipped. A body that ends before
  `message_stop` is a cut reply; an `error` event after HTTP 200 is worded and
  retried as the HTTP status of its type would be (provider_errors.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from skillchat.backend_table import claude_reply_tokens
from skillchat.engine.backends.base import Timeouts, reply_timeout_error
from skillchat.engine.backends.openai_backend import describe_base
from skillchat.engine.backends.provider_errors import (
    CUT,
    ERROR_BODY_LIMIT,
    http_error,
    malformed,
    wire_error,
)
from skillchat.engine.backends.wire import Wire
from skillchat.engine.events import Delta, ToolCallFragment, Usage
from skillchat.engine.messages import clean_text
from skillchat.engine.pricing import price
from skillchat.errors import MalformedChunk, ProviderError, WireError
from skillchat.target import Target

ANTHROPIC_URL = "https://api.anthropic.com/v1"
API_VERSION = "2023-06-01"
KEY_ENV = "ANTHROPIC_API_KEY"
CACHED = {"type": "ephemeral"}
# Anthropic's stop reasons as the finish reasons the loop knows.
FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# The HTTP status an `error` event's type stands for (Anthropic's errors page), so
# a failure after HTTP 200 is worded and retried as that status would be.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBackend:
    """Streams Messages API replies over one kept-alive connection (wire.py)."""

    name = "anthropic"

    def __init__(self, target: Target, timeouts: Timeouts) -> None:
        self._key = os.environ.get(KEY_ENV, "")
        self.model = target.model.removeprefix("anthropic/")
        self._user_model = target.model
        self._timeout = timeouts.timeout
        self._reply_timeout = timeouts.reply_timeout
        base = target.api_base or ANTHROPIC_URL
        self.where = describe_base(base)
        self._wire = Wire(
            base,
            timeout=timeouts.timeout,
            read_timeout=min(timeouts.timeout, timeouts.reply_timeout),
        )
        self._headers = {"anthropic-version": API_VERSION, "accept": "application/json"}
        if self._key:
            self._headers["x-api-key"] = self._key
        budget = target.thinking
        # The target's (engine/resolve.py puts the required default there).
        self._max_tokens = target.max_tokens or claude_reply_tokens(self.model, budget)
        # Extended thinking: the budget must be under max_tokens (and at least 1,024,
        # which the API checks and says).
        self._thinking = None
        if budget:
            self._thinking = {"type": "enabled", "budget_tokens": min(budget, self._max_tokens - 1)}
        # Prices are Anthropic's: a server of one's own reusing a name costs nothing known.
        self._priced = not target.api_base
        self._window: tuple[int | None] | None = None

    def context_window(self) -> int | None:
        """The model map's window (the Messages API has no /props)."""
        if self._window is None:
            from skillchat.engine.context_window import map_window

            self._window = (map_window(f"anthropic/{self.model}"),)
        return self._window[0]

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        """Yield the reply's deltas; raise ProviderError on any failure."""
        body = request_body(self.model, messages, tools, self._max_tokens, self._thinking)
        deadline = time.monotonic() + self._reply_timeout
        try:
            response = self._wire.post("/messages", body, self._headers)
        except WireError as exc:
            if time.monotonic() >= deadline:
                raise reply_timeout_error(self._reply_timeout) from exc
            raise wire_error(
                exc, where=self.where, timeout=self._timeout, mid_stream=False
            ) from exc
        try:
            if response.status != 200:
                raise self._answered(
                    response.status, response.headers, response.read(ERROR_BODY_LIMIT)
                )
            yield from self._events(response.iter_data(), deadline)
        except WireError as exc:
            if time.monotonic() >= deadline:
                raise reply_timeout_error(self._reply_timeout) from exc
            raise wire_error(exc, where=self.where, timeout=self._timeout, mid_stream=True) from exc
        except (ValueError, MalformedChunk) as exc:
            raise malformed(exc, self.where) from exc
        finally:
            response.close()

    def _answered(self, status: int, headers: Any, body: bytes) -> ProviderError:
        return http_error(
            status,
            headers,
            body,
            where=self.where,
            model=self._user_model,
            key_env=KEY_ENV,
            secrets=(self._key,),
        )

    def _events(self, data: Iterator[str], deadline: float) -> Iterator[Delta]:
        """The deltas of a Messages stream (see the module docstring)."""
        reader = _Reader()
        for payload in data:
            if time.monotonic() >= deadline:
                raise reply_timeout_error(self._reply_timeout)
            event = json.loads(payload)
            if not isinstance(event, dict):
                raise MalformedChunk(f"an event is {type(event).__name__}, not an object")
            if event.get("type") == "error":
                error = event.get("error")
                kind = error.get("type") if isinstance(error, dict) else None
                status = ERROR_STATUS.get(kind if isinstance(kind, str) else "", 500)
                raise self._answered(status, {}, payload.encode())
            if reader.stopped:
                continue  # read to the body's end: the connection carries the next request
            delta = reader.read(event)
            if delta is not None:
                if delta.usage is not None and self._priced:
                    cost = price(f"anthropic/{self.model}", delta.usage)
                    delta = replace(delta, usage=replace(delta.usage, cost=cost))
                yield delta
        if not reader.stopped:
            raise ProviderError(f"{CUT} by {self.where} (no message_stop)", retryable=True)


class _Reader:
    """The state of one stream: which block is which, and the usage so far."""

    def __init__(self) -> None:
        self.kinds: dict[int, str] = {}
        self.usage: dict[str, int] = {}
        self.finish: str | None = None
        self.stopped = False

    def read(self, event: dict[str, Any]) -> Delta | None:
        kind = event.get("type")
        index = _whole(event.get("index"))
        if kind == "message_start":
            self._count(_object(_object(event.get("message")).get("usage")))
        elif kind == "content_block_start":
            block = _object(event.get("content_block"))
            block_type = _string(block.get("type"), "type") or ""
            self.kinds[index or 0] = block_type
            if block_type == "tool_use":
                call_id, name = _string(block.get("id"), "id"), _string(block.get("name"), "name")
                return Delta(tool_calls=(ToolCallFragment(index, call_id, name),))
            if block_type in ("thinking", "redacted_thinking"):
                return Delta(thinking={"index": index, **_thinking_start(block)})
            text = _string(block.get("text"), "text")
            return Delta(text=text) if text else None
        elif kind == "content_block_delta":
            return self._delta(index, _object(event.get("delta")))
        elif kind == "message_delta":
            stop = _string(_object(event.get("delta")).get("stop_reason"), "stop_reason")
            self.finish = FINISH.get(stop or "", "stop") if stop else self.finish
            self._count(_object(event.get("usage")))
        elif kind == "message_stop":
            self.stopped = True
            return Delta(finish_reason=self.finish or "stop", usage=self._usage())
        return None

    def _delta(self, index: int | None, delta: dict[str, Any]) -> Delta | None:
        kind = delta.get("type")
        if kind == "text_delta":
            text = _string(delta.get("text"), "text")
            return Delta(text=text) if text else None
        if kind == "input_json_delta":
            piece = _string(delta.get("partial_json"), "partial_json")
            return Delta(tool_calls=(ToolCallFragment(index, arguments=piece),)) if piece else None
        for name in ("thinking", "signature"):  # thinking_delta, signature_delta
            if kind == f"{name}_delta" and (piece := _string(delta.get(name), name)):
                return Delta(thinking={"index": index, name: piece})
        return None

    def _count(self, usage: dict[str, Any]) -> None:
        """Counts are cumulative: the latest of each wins."""
        for name, value in usage.items():
            if (count := _whole(value)) is not None:
                self.usage[name] = count

    def _usage(self) -> Usage:
        read = self.usage.get("cache_read_input_tokens", 0)
        written = self.usage.get("cache_creation_input_tokens", 0)
        prompt = self.usage.get("input_tokens", 0) + read + written
        completion = self.usage.get("output_tokens", 0)
        return Usage(prompt, completion, prompt + completion, None, read, written)


def _thinking_start(block: dict[str, Any]) -> dict[str, Any]:
    if block.get("type") == "redacted_thinking":
        return {"start": "redacted_thinking", "data": _string(block.get("data"), "data") or ""}
    return {"start": "thinking"}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _string(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return clean_text(value) if value else None
    raise MalformedChunk(f"'{name}' is {type(value).__name__}, not text")


# ------------------------------------------------------------ the request


def request_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    max_tokens: int,
    thinking: dict[str, Any] | None,
) -> dict[str, Any]:
    """The Messages API request for chat-completions `messages` and `tools`, with its
    cache breakpoints (see the module docstring)."""
    system: list[dict[str, Any]] = [
        {"type": "text", "text": text}
        for m in messages
        if m.get("role") == "system" and (text := _plain(m.get("content")))
    ]
    turns = _turns([m for m in messages if m.get("role") != "system"])
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "stream": True}
    if tools:
        body["tools"] = [_tool(t) for t in tools]
        body["tools"][-1]["cache_control"] = CACHED
    if system:
        system[-1]["cache_control"] = CACHED
        body["system"] = system
    if thinking:
        body["thinking"] = thinking
    _mark_tail(turns)
    body["messages"] = turns
    return body


def _mark_tail(turns: list[dict[str, Any]]) -> None:
    """Breakpoints on the last block of this request, and on the last block of the
    request before it (the turn before the latest assistant turn): the round after
    reads everything this one sent from the cache."""
    marked = [len(turns) - 1]
    last_assistant = max((i for i, t in enumerate(turns) if t["role"] == "assistant"), default=0)
    if last_assistant > 0:
        marked.append(last_assistant - 1)
    for i in marked:
        if turns[i]["content"]:
            turns[i]["content"][-1]["cache_control"] = CACHED


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function", tool)
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    out = {"name": function["name"], "input_schema": schema}
    if function.get("description"):
        out["description"] = function["description"]
    return out


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n\n".join(p.get("text", "") for p in parts if p.get("type") == "text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    """User content as Messages blocks: text, and images from data URLs."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            blocks.append(_image(str((part.get("image_url") or {}).get("url", ""))))
    return blocks


def _image(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        source = {"type": "base64", "media_type": media_type, "data": data}
    else:
        source = {"type": "url", "url": url}
    return {"type": "image", "source": source}


def _assistant(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = [dict(b) for b in message.get("thinking_blocks") or []]
    if text := _plain(message.get("content")):
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name"),
                "input": arguments if isinstance(arguments, dict) else {},
            }
        )
    return blocks


def _turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions messages as alternating Messages turns: tool results (and a
    user message after them) joined into one user turn, tool results first."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        if role == "assistant":
            blocks = _assistant(message)
        elif message.get("role") == "tool":
            content = _plain(message.get("content")) or "(empty)"
            blocks = [{"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                       "content": content}]  # fmt: skip
        else:
            blocks = _blocks(message.get("content"))
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return turns
