"""One local model server for every peer of bench_peers.py, in each one's protocol.

Every tool compared there asks the same question of this server, each in the wire
format it speaks, and gets the same short answer, streamed as the provider streams
it:

- `POST /v1/chat/completions`: OpenAI's chat completions (skillchat, llm, the
  standard-library floor), SSE chunks then `data: [DONE]`;
- `POST /v1/responses`: OpenAI's Responses API (Codex speaks nothing else), typed
  SSE events from `response.created` to `response.completed`;
- `POST /v1/messages`: Anthropic's Messages API (Claude Code), from
  `message_start` to `message_stop`, a `ping` among them; `/v1/messages/count_tokens`
  answers a count;
- `GET /v1/models`: one model; anything else is a 404 with a JSON error.

What it measures: the moment each request's first line arrived (`time.monotonic()`,
the clock the benchmark starts each process on), before its headers and body are
read, so a large request body (a catalog of 234 skills) does not count as time of
the client. tests/openai_server.py is the suite's scripted server (exact protocol
cases, errors, holds); this one is the benchmark's: three protocols, one answer,
timestamps of arrival.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Hello!"
MODEL_PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/messages")


@dataclass(frozen=True)
class Arrival:
    """One request: when its first line arrived, its method and path."""

    at: float
    method: str
    path: str

    @property
    def is_model_request(self) -> bool:
        """A request for a reply (not a model listing, a probe or a token count)."""
        return self.method == "POST" and self.path.split("?")[0].rstrip("/") in MODEL_PATHS


def _usage_openai() -> dict[str, Any]:
    return {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PeerServer

    def log_message(self, format: str, *args: Any) -> None:
        """No line per request on stderr."""

    def parse_request(self) -> bool:
        # Called as soon as the request line is read: the request's first byte.
        at = time.monotonic()
        parsed = super().parse_request()
        self.server.arrived(Arrival(at, self.command or "", self.path or ""))
        return parsed

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                raw += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        """Server-sent events over chunked transfer encoding, each flushed."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            raw = frame.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": "test-model", "object": "model", "created": 0, "owned_by": "bench"}
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._not_found()

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?")[0].rstrip("/")
        if path == "/v1/chat/completions":
            self._chat(body)
        elif path == "/v1/responses":
            self._responses(body)
        elif path == "/v1/messages":
            self._messages(body)
        elif path == "/v1/messages/count_tokens":
            self._json(200, {"input_tokens": 10})
        else:
            self._not_found()

    def _not_found(self) -> None:
        error = {"message": f"Unknown path {self.path}", "type": "invalid_request_error"}
        self._json(404, {"error": error})

    def _chat(self, body: dict[str, Any]) -> None:
        model = body.get("model", "test-model")
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0}
        if not body.get("stream"):
            message = {"role": "assistant", "content": ANSWER}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self._json(200, {**base, "object": "chat.completion", "model": model,
                             "choices": [choice], "usage": _usage_openai()})  # fmt: skip
            return

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "model": model, "choices": [choice]}

        events: list[tuple[str | None, Any]] = [
            (None, chunk({"role": "assistant", "content": ""})),
            (None, chunk({"content": ANSWER})),
            (None, chunk({}, "stop")),
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, {**base, "model": model, "choices": [], "usage": _usage_openai()}))
        self._sse([*events, (None, "[DONE]")])

    def _responses(self, body: dict[str, Any]) -> None:
        """The Responses API's stream, event by event as OpenAI sends it."""
        model = body.get("model", "test-model")
        text_part = {"type": "output_text", "text": ANSWER, "annotations": []}
        item = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                "content": [text_part]}  # fmt: skip
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 12}  # fmt: skip
        response = {"id": "resp_1", "object": "response", "created_at": int(time.time()),
                    "status": "in_progress", "model": model, "output": [],
                    "usage": None}  # fmt: skip
        at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": response},
            {"type": "response.in_progress", "response": response},
            {"type": "response.output_item.added", "output_index": 0,
             "item": {**item, "status": "in_progress", "content": []}},
            {"type": "response.content_part.added", **at, "part": {**text_part, "text": ""}},
            {"type": "response.output_text.delta", **at, "delta": ANSWER, "logprobs": []},
            {"type": "response.output_text.done", **at, "text": ANSWER, "logprobs": []},
            {"type": "response.content_part.done", **at, "part": text_part},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed",
             "response": {**response, "status": "completed", "output": [item], "usage": usage}},
        ]  # fmt: skip
        for number, event in enumerate(events):
            event["sequence_number"] = number
        self._sse([(event["type"], event) for event in events])

    def _messages(self, body: dict[str, Any]) -> None:
        """Anthropic's Messages stream (or one message, unstreamed)."""
        model = body.get("model", "claude-test")
        usage = {"input_tokens": 10, "output_tokens": 2, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}  # fmt: skip
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {**usage, "output_tokens": 1}}  # fmt: skip
        if not body.get("stream"):
            done = {**message, "content": [{"type": "text", "text": ANSWER}],
                    "stop_reason": "end_turn", "usage": usage}  # fmt: skip
            self._json(200, done)
            return
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}},
            {"type": "ping"},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": ANSWER}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 2}},
            {"type": "message_stop"},
        ]  # fmt: skip
        self._sse([(event["type"], event) for event in events])


class PeerServer(ThreadingHTTPServer):
    """Serves from a daemon thread on an ephemeral port of 127.0.0.1 (a context
    manager); `arrivals` lists every request in the order their first lines came."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.arrivals: list[Arrival] = []
        self._lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-answer is not the benchmark's business."""

    def arrived(self, arrival: Arrival) -> None:
        with self._lock:
            self.arrivals.append(arrival)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def first_model_request(self, since: int) -> Arrival | None:
        """The first request for a reply among the arrivals from index `since` on."""
        with self._lock:
            return next((a for a in self.arrivals[since:] if a.is_model_request), None)

    def __enter__(self) -> PeerServer:
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
