"""A scripted, real HTTP server that speaks Anthropic's Messages API, beside openai_server.py.

The same moves, rules and holds as tests/openai_server.py (`reply`, `call`, `error`
are that module's; `server.when(...)`, `release`, `requests`, `completions`,
`base_url` too), so a test of the loop runs on either server. Each POST
/v1/messages plays the next move exactly as Anthropic streams it: `event:` and
`data:` lines, `message_start` (usage with the cache counts), per block
`content_block_start`, `content_block_delta` (`text_delta`, `input_json_delta`,
`thinking_delta`, `signature_delta`) and `content_block_stop`, a `ping`,
`message_delta` (stop reason, usage), `message_stop`; errors as Anthropic's JSON
(`{"type": "error", "error": {"type", "message"}}`, 529 overloaded, 429 with
`retry-after`). What is Anthropic's alone:

    reply(..., thinking="...")   a thinking block (with a signature) before the text
    reply(..., stop_reason="refusal")   a stop reason as sent (else the move's
        OpenAI `finish_reason` mapped: stop→end_turn, length→max_tokens, ...)
    {"stream_error": "overloaded_error", "after": N}   HTTP 200, N events, then an
        `error` event (Anthropic's way of failing mid-stream)
    {"events": [(event, data) | "raw line", ...]}   exactly these, then nothing

`keepalives=N` sends `ping` events first (Anthropic's keep-alive). `cut_after` and
`stall_after` count events as openai_server.py does: `message_start`, the `ping`
and the first block's start are its one role-only first event.

It checks what the real API refuses (400): no `anthropic-version` header, no
`max_tokens`, more than 4 `cache_control` breakpoints, a `tool_use` not answered by
a `tool_result` in the next user turn, and, with thinking on, an assistant turn
with tool use that does not start with its thinking block.

**Prompt caching as the API does it**: the request is read in cache order (tools,
system, messages) as blocks; a block marked `cache_control` ends a prefix, which
is written to the cache; a later request whose prefix up to one of its breakpoints
was written before reads it (`cache_read_input_tokens`), writes the rest up to its
last breakpoint (`cache_creation_input_tokens`), and pays for what follows
(`input_tokens`). Tokens are estimated as a block's JSON length / 4;
`cache_min_tokens` (0 here, 1,024 on Claude Sonnet) is the least a prefix must
hold to be cached. This counting is on with `prompt_cache=True`; without it every
reply reports 10 input tokens and 5 output, as openai_server.py does, so a test's
token sums hold on both servers. A move's own `usage` (prompt_tokens, completion_tokens,
cache_read_input_tokens, cache_creation_input_tokens) is sent instead.

`server.chat_messages(n)` reads the n-th request back as chat-completions messages
(system first, `tool_calls`, `tool` results), so tests assert on either server alike.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from openai_server import Move, ScriptedServer, _Handler, call, error, reply, split

__all__ = ["AnthropicServer", "call", "error", "reply"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_STOP |= {"content_filter": "refusal"}
# Anthropic's error type for each status (errors documentation).
_ERRORS = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use this resource."),
    404: ("not_found_error", "model: {model}"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


def _api_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True)) // 4)


def cache_blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """The request in cache order (tools, system, each message's blocks) as
    (block without its cache_control, marked)."""
    blocks: list[tuple[Any, bool]] = []

    def add(block: Any, role: str = "") -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if k != "cache_control"}
        blocks.append(((role, block), marked))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add(block, "system")
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            add(block, message.get("role", ""))
    return blocks


class _Cache:
    """The prefixes written (their hashes), shared by every request to the server."""

    def __init__(self) -> None:
        self.written: set[str] = set()

    def usage(self, body: dict[str, Any], minimum: int) -> dict[str, int]:
        digest = hashlib.sha256(str(body.get("model")).encode())
        tokens = 0
        read = write_end = 0
        breakpoints: list[tuple[str, int]] = []
        for block, marked in cache_blocks(body):
            digest.update(json.dumps(block, sort_keys=True).encode())
            tokens += _tokens(block)
            if marked:
                breakpoints.append((digest.hexdigest(), tokens))
        for key, upto in breakpoints:
            if key in self.written:
                read = upto
            if upto >= minimum:
                self.written.add(key)
                write_end = upto
        return {
            "input_tokens": tokens - max(read, write_end),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": max(0, write_end - read),
        }


def _refusal(body: dict[str, Any]) -> str | None:
    """What the real API refuses with a 400 (see the module docstring)."""
    messages = body.get("messages") or []
    marked = sum(1 for _, m in cache_blocks(body) if m)
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    if marked > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {marked}."
    thinking = (body.get("thinking") or {}).get("type") == "enabled"
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if not uses:
            continue
        if thinking and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
            return (
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{blocks[0].get('type')}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block."
            )
        after = messages[i + 1].get("content") if i + 1 < len(messages) else None
        answered = (
            [b.get("tool_use_id") for b in after if b.get("type") == "tool_result"]
            if (isinstance(after, list))
            else []
        )
        if set(uses) - set(answered):
            return (
                f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(sorted(set(uses) - set(answered)))}"
            )
    return None


class _AnthropicHandler(_Handler):
    """Plays one move per Messages request."""

    server: AnthropicServer

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._record()
            model = {"type": "model", "id": "test-model", "display_name": "Test Model"}
            self._json(200, {"data": [model], "has_more": False, "first_id": "test-model"})
        else:
            super().do_GET()

    def do_POST(self) -> None:
        body = self._record()
        if self.path.rstrip("/") != "/v1/messages":
            self._json(404, _api_error("not_found_error", f"Not found: {self.path}"))
        elif "anthropic-version" not in self.headers:
            self._json(
                400, _api_error("invalid_request_error", "anthropic-version: header is required")
            )
        elif (refused := _refusal(body if isinstance(body, dict) else {})) is not None:
            self._json(400, _api_error("invalid_request_error", refused))
        else:
            self._complete(body)

    def _error(self, move: Move, body: dict[str, Any]) -> None:
        status = int(move["error"])
        kind, message = _ERRORS.get(status, ("api_error", f"HTTP {status}"))
        message = move.get("message") or message.format(model=body.get("model"))
        retry = move.get("retry_after")
        headers = {"retry-after": str(retry)} if retry is not None else {}
        self._json(status, _api_error(move.get("kind", kind), message), headers)

    def _whole(self, move: Move, body: dict[str, Any], request_no: int) -> None:
        self._json(200, _whole(self._events(move, body, request_no)))

    def _stream(self, move: Move, body: dict[str, Any], request_no: int) -> None:
        events = self._events(move, body, request_no)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", f"req_{request_no}")
        self.end_headers()
        for _ in range(int(move.get("keepalives", 0))):
            if self.server.stopping.wait(float(move.get("keepalive_every", 0))):
                return
            self._chunk(b'event: ping\ndata: {"type": "ping"}\n\n')
        if "endless" in move:
            self._endless(move)
            return
        # Counted as openai_server.py counts them: message_start, the ping and the
        # first block's start are its one role-only first event.
        counts = {k: move[k] + 2 for k in ("cut_after", "stall_after") if move.get(k) is not None}
        self._send({**move, **counts}, [_sse(event) for event in events], [b""])

    def _endless(self, move: Move) -> None:
        start = {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": ""},
        }
        self._chunk(_sse(_message_start(self.server.model_of, 0, {})) + _sse(start))
        piece = {"type": "text_delta", "text": move.get("piece", "x")}
        data = _sse({"type": "content_block_delta", "index": 0, "delta": piece})
        if move["endless"] == "comments":
            data = b'event: ping\ndata: {"type": "ping"}\n\n'
        while not self.server.stopping.wait(float(move.get("chunk_delay", 0))):
            self._chunk(data)

    def _events(self, move: Move, body: dict[str, Any], request_no: int) -> list[Any]:
        """The events of a reply move, as Anthropic streams them."""
        if "events" in move:
            return list(move["events"])
        given = move.get("usage")
        if given:
            usage = {
                "input_tokens": given.get("prompt_tokens", 10),
                "cache_read_input_tokens": given.get("cache_read_input_tokens", 0),
                "cache_creation_input_tokens": given.get("cache_creation_input_tokens", 0),
            }
        elif self.server.prompt_cache:
            usage = self.server.cache.usage(body, self.server.cache_min_tokens)
        else:  # as openai_server.py reports every reply
            usage = {"input_tokens": 10, "cache_read_input_tokens": 0}
            usage["cache_creation_input_tokens"] = 0
        self.server.usages.append(usage)
        output = (given or {}).get("completion_tokens", 5)
        chunks = int(move.get("chunks", 3))
        events: list[Any] = [
            _message_start(str(body.get("model")), request_no, usage),
            {"type": "ping"},
        ]
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if move.get("thinking"):
            pieces = [
                {"type": "thinking_delta", "thinking": p} for p in split(move["thinking"], chunks)
            ]
            signature = {"type": "signature_delta", "signature": f"sig-{request_no}-" + "A" * 40}
            blocks.append(
                ({"type": "thinking", "thinking": "", "signature": ""}, [*pieces, signature])
            )
        if move.get("text"):
            pieces = [{"type": "text_delta", "text": p} for p in split(move["text"], chunks)]
            blocks.append(({"type": "text", "text": ""}, pieces))
        for i, c in enumerate(move.get("calls", [])):
            start = {"type": "tool_use", "id": c.get("id") or f"toolu_{request_no}_{i}",
                     "name": c["name"], "input": {}}  # fmt: skip
            args = c.get("arguments", "")
            pieces = [p for p in split(args, chunks) if p]
            json_deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces]]
            blocks.append((start, json_deltas))
        for index, (start, deltas) in enumerate(blocks):
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            events.append({"type": "content_block_stop", "index": index})
        if "stream_error" in move:
            kind = move["stream_error"]
            at = int(move.get("after", len(events)))
            message = move.get("message", "Overloaded" if kind == "overloaded_error" else kind)
            return [*events[:at], ("error", _api_error(kind, message))]
        stop = move.get("stop_reason") or _STOP.get(move.get("finish_reason") or "", None)
        stop = stop or ("tool_use" if move.get("calls") else "end_turn")
        delta = {"stop_reason": stop, "stop_sequence": None}
        usage_out = {**usage, "output_tokens": output}
        events.append({"type": "message_delta", "delta": delta, "usage": usage_out})
        events.append({"type": "message_stop"})
        return events


def _message_start(model: str, request_no: int, usage: dict[str, int]) -> dict[str, Any]:
    message = {
        "id": f"msg_{request_no:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, **usage, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def _sse(event: Any) -> bytes:
    """One event: `event: TYPE` and `data: JSON`; a str is sent as a raw line."""
    if isinstance(event, str):
        return f"{event}\n\n".encode()
    name, data = event if isinstance(event, tuple | list) else (event["type"], event)
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _whole(events: list[Any]) -> dict[str, Any]:
    """The non-streamed Message the events add up to."""
    message: dict[str, Any] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        if event["type"] == "message_start":
            message = event["message"]
        elif event["type"] == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            for name in ("text", "thinking", "signature", "partial_json"):
                if name in delta:
                    block[name] = block.get(name, "") + delta[name]
        elif event["type"] == "message_delta":
            message.update(event["delta"])
            message["usage"] = event["usage"]
    for block in message.get("content", []):
        if block["type"] == "tool_use":
            block["input"] = json.loads(block.pop("partial_json", "") or "{}")
    return message


class AnthropicServer(ScriptedServer):
    """The Messages API server: `script()` queues moves, `requests` logs what
    arrived; `usages` is the usage reported for each reply (cache reads per round)."""

    def __init__(
        self,
        moves: list[Move] | None = None,
        *,
        port: int = 0,
        loop: bool = False,
        prompt_cache: bool = False,
    ) -> None:
        super().__init__(moves, port=port, loop=loop)
        self.RequestHandlerClass = _AnthropicHandler
        self.cache = _Cache()
        self.prompt_cache = prompt_cache
        self.cache_min_tokens = 0
        self.usages: list[dict[str, int]] = []
        self.model_of = "test-model"

    @property
    def completions(self) -> list[Any]:
        """Only the Messages requests, in arrival order."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/messages")]

    def next_move(self, body: dict[str, Any] | None = None) -> tuple[Move | None, int]:
        """The move for `body`, its rules matched on its messages read back as
        chat-completions messages (the system prompt first)."""
        return super().next_move({**(body or {}), "messages": as_chat(body)})

    def chat_messages(self, n: int = -1) -> list[dict[str, Any]]:
        """The n-th request's messages as chat-completions messages."""
        return as_chat(self.completions[n].body)


def _text_of(blocks: Any) -> Any:
    if isinstance(blocks, str):
        return blocks
    parts = []
    for b in blocks or []:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image":
            source = b["source"]
            url = f"data:{source['media_type']};base64,{source['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def as_chat(body: Any) -> list[dict[str, Any]]:
    """A Messages request's system and messages as chat-completions messages."""
    if not isinstance(body, dict):
        return []
    chat: list[dict[str, Any]] = []
    if body.get("system"):
        chat.append({"role": "system", "content": _text_of(body["system"])})
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if message.get("role") == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            out: dict[str, Any] = {"role": "assistant", "content": text or None}
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            if uses:
                out["tool_calls"] = [
                    {"id": b["id"], "type": "function",
                     "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                    for b in uses
                ]  # fmt: skip
            chat.append(out)
            continue
        rest = []
        for b in blocks:
            if b.get("type") == "tool_result":
                chat.append({"role": "tool", "tool_call_id": b["tool_use_id"],
                             "content": _text_of(b.get("content"))})  # fmt: skip
            else:
                rest.append(b)
        if rest:
            chat.append({"role": "user", "content": _text_of(rest)})
    return chat
