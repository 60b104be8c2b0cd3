"""A scripted, real HTTP server that speaks OpenAI's chat-completions protocol.

Tests never mock the SDKs: they point skillchat (in-process or as a subprocess) at
this server on 127.0.0.1 and *script the model's moves*. Each POST
/v1/chat/completions pops the next move off a queue and plays it exactly as OpenAI
would on the wire: SSE chunks over chunked transfer encoding, `data: [DONE]`,
a usage-only chunk when `stream_options.include_usage` is set, JSON error bodies.

    with ScriptedServer() as server:
        server.script(reply("Hello there"),
                      reply(calls=[call("get_skill", {"skill_name": "pdf"})]),
                      error(429, retry_after=1))
        ... point the client at server.base_url ...
        assert server.requests[0].body["stream_options"] == {"include_usage": True}

A move is a plain JSON-able dict (so a script file is a JSON list of them):

    {"text": "...", "calls": [{"name", "arguments", "id"?}], "chunks": 3,
     "same_index": false, "delay": 0, "chunk_delay": 0, "cut_after": null,
     "clean_cut": false, "usage": {...}, "finish_reason": null}
    {"error": 429, "message": "...", "code": "...", "retry_after": "1", "delay": 0}

`chunks` is how many pieces the text and each call's arguments are cut into;
`keepalives=N` sends N SSE comment lines (`:`, as llama.cpp does every 30 s while it
processes a long prompt), `keepalive_every` seconds apart, before the first event;
`hold="name"` answers only once the test calls `server.release("name")` (a model
still thinking, for exactly as long as the test needs);
`delay` sleeps before the first byte (timeouts), `chunk_delay` between chunks
(interrupting a reply); `cut_after=N` sends N SSE events (the first is the role-only
one) then drops the connection mid-body (`clean_cut` ends the HTTP body properly
instead, still without finish_reason or [DONE]). A request with `stream: false`
gets one `chat.completion` object. An empty queue answers 400.

`server.props = {...}` makes GET /props answer that object, as llama.cpp's server
does (`{"default_generation_settings": {"n_ctx": 4096}}`); unset, it is a 404.

Hostile and broken servers, as real ones misbehave:

    {"events": [chunk | "raw data line", ...], "done": true}
        streams exactly these: a dict is sent as a chunk (the usual id/object/model
        fields added where missing), a string as the raw `data:` payload (not JSON,
        a truncated object...); then `[DONE]` unless `done` is false.
    {"endless": "text" | "comments", "chunk_delay": s, "piece": "x"}
        streams a reply that never ends: content chunks (`piece` each) or SSE
        `: keep-alive` comments, one per `chunk_delay`, until the client hangs up.
    {"stall_after": N, ...reply}
        sends N events of the reply, then goes silent (the connection stays open
        until the server stops).

Concurrent conversations (`skillchat eval` runs several at once) cannot share one
queue: which request comes first is a race. A *rule* picks the move by content
instead, and is tried before the queue:

    server.when("17%", reply(calls=[call("get_skill", {"skill_name": "calculator"})]),
                reply("39.1"))

A request whose first user message contains "17%" plays the rule's moves in turn
within its own conversation: the first move when no assistant message follows that
user message yet, the second after one, and so on (the last repeats). Rules are
tried in the order given; a rule is the JSON-able `{"when": text, "then": [moves]}`
(in a script file too). `system="..."` narrows a rule to requests whose system
message contains that text too: a forked skill's conversation (its SKILL.md body is
in its system prompt) is told from its parent's that way. `pattern="..."` narrows it
to those whose first user message a regex matches (which of two texts comes first).

CLI: `python tests/openai_server.py --script moves.json [--loop]` prints the port on
its first stdout line, then serves until killed; `GET /_requests` returns the log.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Move = dict[str, Any]

# What OpenAI answers for each status; a move's "message"/"code" override these.
_ERRORS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def reply(text: str = "", calls: list[Move] | tuple[Move, ...] = (), **options: Any) -> Move:
    """A model reply: text, then tool calls (options: see the module docstring)."""
    return {"text": text, "calls": list(calls), **options}


def call(name: str, arguments: str | dict[str, Any] = "{}", id: str | None = None) -> Move:
    """One tool call of a reply; dict arguments are JSON-encoded."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"name": name, "arguments": args, **({"id": id} if id else {})}


def error(status: int, message: str | None = None, **options: Any) -> Move:
    """An HTTP error with OpenAI's JSON error body (options: code, retry_after, delay)."""
    return {"error": status, **({"message": message} if message else {}), **options}


@dataclass
class Recorded:
    """One request as received: header names are lowercased; `at` is time.monotonic();
    `port` the client's (requests on one connection share it)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float
    port: int = 0


def split(text: str, parts: int) -> list[str]:
    """Cut `text` into `parts` nearly equal pieces (fewer if it is shorter)."""
    parts = max(1, min(parts, len(text)))
    size, extra = divmod(len(text), parts)
    pieces, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _deltas(move: Move, request_no: int) -> list[dict[str, Any]]:
    """The sequence of `delta` objects OpenAI would stream for a reply move."""
    chunks = int(move.get("chunks", 3))
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    deltas += [{"content": piece} for piece in split(move.get("text") or "", chunks) if piece]
    for i, c in enumerate(move.get("calls", [])):
        index = 0 if move.get("same_index") else i
        head = {
            "index": index,
            "id": c.get("id") or f"call_{request_no}_{i}",
            "type": "function",
            "function": {"name": c["name"], "arguments": ""},
        }
        deltas.append({"tool_calls": [head]})
        for piece in split(c.get("arguments", ""), chunks):
            if piece:
                deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    return deltas


def _usage(move: Move) -> dict[str, Any]:
    given = move.get("usage") or {}
    prompt, completion = given.get("prompt_tokens", 10), given.get("completion_tokens", 5)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _finish_reason(move: Move) -> str:
    return move.get("finish_reason") or ("tool_calls" if move.get("calls") else "stop")


def _api_error(message: str, kind: str = "invalid_request_error", code: Any = None) -> Any:
    """OpenAI's error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _choice(finish_reason: str | None = None, **content: Any) -> dict[str, Any]:
    """One entry of `choices`: `delta=` for chunks, `message=` for whole replies."""
    return {"index": 0, **content, "logprobs": None, "finish_reason": finish_reason}


_MODEL = {"id": "test-model", "object": "model", "created": 0, "owned_by": "skillchat"}


class _Handler(BaseHTTPRequestHandler):
    """Plays one move per chat-completions request; HTTP/1.1 so streams are chunked."""

    protocol_version = "HTTP/1.1"
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request stderr line."""

    def _record(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        port = self.client_address[1]
        self.server.record(Recorded(self.command, self.path, headers, body, time.monotonic(), port))
        return body

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record()
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [_MODEL]})
        elif self.path == "/props" and self.server.props is not None:
            self._json(200, self.server.props)  # llama.cpp's server properties
        elif self.path == "/_requests":
            self._json(200, [asdict(r) for r in self.server.requests])
        else:
            self._not_found()

    def do_POST(self) -> None:
        body = self._record()
        if self.path.rstrip("/") == "/v1/chat/completions":
            self._complete(body if isinstance(body, dict) else {})
        else:
            self._not_found()

    def _not_found(self) -> None:
        self._json(404, _api_error(f"Unknown path {self.path}", code="unknown_url"))

    def _complete(self, body: dict[str, Any]) -> None:
        move, request_no = self.server.next_move(body)
        if move is None:
            self._json(400, _api_error("openai_server: no scripted move left"))
            return
        if "hold" in move and not self.server.held_until_released(move["hold"]):
            return
        if self.server.stopping.wait(float(move.get("delay", 0))):
            return
        try:
            if "error" in move:
                self._error(move, body)
            elif body.get("stream"):
                self._stream(move, body, request_no)
            else:
                self._whole(move, body, request_no)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout, Ctrl-C)
        else:
            with self.server._lock:
                self.server.played += 1

    def _error(self, move: Move, body: dict[str, Any]) -> None:
        status = int(move["error"])
        kind, code, message = _ERRORS.get(status, ("server_error", None, f"HTTP {status}"))
        message = move.get("message") or message.format(model=body.get("model"))
        headers = {"Retry-After": str(move["retry_after"])} if "retry_after" in move else {}
        self._json(status, _api_error(message, kind, move.get("code", code)), headers)

    def _whole(self, move: Move, body: dict[str, Any], request_no: int) -> None:
        calls = [
            {
                "id": c.get("id") or f"call_{request_no}_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": c.get("arguments", "")},
            }
            for i, c in enumerate(move.get("calls", []))
        ]
        message = {
            "role": "assistant",
            "content": move.get("text") or None,
            "refusal": None,
            **({"tool_calls": calls} if calls else {}),
        }
        self._json(
            200,
            {
                "id": f"chatcmpl-{request_no}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "system_fingerprint": "fp_skillchat",
                "choices": [_choice(_finish_reason(move), message=message)],
                "usage": _usage(move),
            },
        )

    def _stream(self, move: Move, body: dict[str, Any], request_no: int) -> None:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = {
            "id": f"chatcmpl-{request_no}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model"),
            "system_fingerprint": "fp_skillchat",
        }
        extra = {"usage": None} if include_usage else {}
        events = [
            {**base, "choices": [_choice(delta=d)], **extra} for d in _deltas(move, request_no)
        ]
        events.append({**base, "choices": [_choice(_finish_reason(move), delta={})], **extra})
        if include_usage:
            events.append({**base, "choices": [], "usage": _usage(move)})
        if "events" in move:
            events = [e if isinstance(e, str) else {**base, **e} for e in move["events"]]

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for _ in range(int(move.get("keepalives", 0))):  # llama.cpp's, while it reads a prompt
            if self.server.stopping.wait(float(move.get("keepalive_every", 0))):
                return
            self._chunk(b":\n\n")
        if "endless" in move:
            self._endless(move, base)
            return
        data = [e if isinstance(e, str) else json.dumps(e) for e in events]
        end = [b"data: [DONE]\n\n", b""] if move.get("done", True) else [b""]
        # surrogateescape: a raw string's "\udcff" goes out as the byte 0xff (invalid UTF-8)
        self._send(move, [f"data: {d}\n\n".encode("utf-8", "surrogateescape") for d in data], end)

    def _send(self, move: Move, events: list[bytes], end: list[bytes]) -> None:
        """Send the encoded `events` as the move says (`cut_after`, `stall_after`,
        `chunk_delay`), then `end` (the body's last chunks) unless the body was not to
        be ended (cut, stalled, or the server stopping). The last event and `end` go
        in one write, as a server writes its last buffer: a client that stops reading
        at the last event (and drains the rest briefly, to keep the connection) finds
        the end there, however loaded the machine."""
        cut_after = move.get("cut_after")
        for n, event in enumerate(events):
            if cut_after is not None and n >= cut_after:
                self._cut(clean=bool(move.get("clean_cut")))
                return
            if n == move.get("stall_after"):
                self.server.stopping.wait()
                return
            if n and self.server.stopping.wait(float(move.get("chunk_delay", 0))):
                return
            self._chunk(event, *(end if n == len(events) - 1 else ()))
        if not events:
            self._chunk(*end)

    def _endless(self, move: Move, base: dict[str, Any]) -> None:
        """A reply that never finishes: content or keep-alive comments, dripping."""
        piece = move.get("piece", "x")
        chunk = {**base, "choices": [_choice(delta={"content": piece})]}
        data = b": keep-alive\n\n" if move["endless"] == "comments" else b""
        data = data or f"data: {json.dumps(chunk)}\n\n".encode()
        while not self.server.stopping.wait(float(move.get("chunk_delay", 0))):
            self._chunk(data)

    def _chunk(self, *pieces: bytes) -> None:
        """Write HTTP/1.1 chunks, one each of `pieces`, in one write (an empty one ends
        the body)."""
        self.wfile.write(b"".join(f"{len(d):X}\r\n".encode() + d + b"\r\n" for d in pieces))
        self.wfile.flush()

    def _cut(self, clean: bool) -> None:
        """Stop mid-reply: end the body cleanly, or drop the connection mid-body."""
        if clean:
            self._chunk(b"")
        self.close_connection = True
        self.wfile.flush()
        self.connection.shutdown(2)


def _ruled_move(rules: list[Move], body: dict[str, Any]) -> Move | None:
    """The move a rule gives this request: by its first user message, and by how
    many assistant messages follow that message (the conversation's step)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return None
    content = messages[users[0]].get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    system = messages[0].get("content") if messages[0].get("role") == "system" else ""
    step = sum(1 for m in messages[users[0] :] if m.get("role") == "assistant")
    for rule in rules:
        if rule.get("system") and rule["system"] not in str(system):
            continue
        if rule.get("pattern") and not re.search(rule["pattern"], text, re.DOTALL):
            continue
        if rule["when"] in text and rule["then"]:
            return rule["then"][min(step, len(rule["then"]) - 1)]
    return None


class ScriptedServer(ThreadingHTTPServer):
    """The server: `script()` queues moves, `requests` logs what arrived.

    A context manager that serves from a background thread on an ephemeral port.
    With `loop=True` the moves are replayed forever (benchmarks).
    """

    daemon_threads = True
    block_on_close = False

    def __init__(
        self, moves: list[Move] | None = None, *, port: int = 0, loop: bool = False
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.moves: deque[Move] = deque()
        self.rules: list[Move] = []
        self.props: dict[str, Any] | None = None  # set: GET /props answers it, as llama.cpp
        self.loop = loop
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._gates: dict[str, threading.Event] = {}
        self._completions = 0
        self.connections = 0  # TCP connections accepted (one per chat with keep-alive)
        # Moves played to their end (all of a reply written, or its cut): a state for a
        # test that needs a body on its way in whole, rather than a wait for it.
        self.played = 0
        self.script(*(moves or []))

    def get_request(self) -> tuple[socket.socket, Any]:
        """Accept a connection, counting it."""
        accepted = super().get_request()
        with self._lock:
            self.connections += 1
        return accepted

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up (timeouts, dropped keep-alives) are normal here, not noise."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def base_url(self) -> str:
        """What to pass as api_base / --api-base."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def completions(self) -> list[Recorded]:
        """Only the chat-completions requests, in arrival order."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def script(self, *moves: Move) -> ScriptedServer:
        """Queue moves; each chat-completions request plays the next one. A rule
        (`{"when", "then"}`) among them is added to the rules instead."""
        with self._lock:
            for move in moves:
                (self.rules if "when" in move else self.moves).append(move)
        return self

    def when(
        self, text: str, *moves: Move, system: str | None = None, pattern: str | None = None
    ) -> ScriptedServer:
        """A rule: conversations whose first user message contains `text` (and
        whose system message contains `system`, and in which the regex `pattern` is
        found: where two texts stand in it, say) play `moves` in turn, whatever else
        is in flight (see the module docstring)."""
        rule: Move = {"when": text, "then": list(moves)}
        if system is not None:
            rule["system"] = system
        if pattern is not None:
            rule["pattern"] = pattern
        return self.script(rule)

    def _gate(self, name: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def release(self, name: str) -> None:
        """Let the moves held as `hold=name` answer (now or, if not yet asked, at once)."""
        self._gate(name).set()

    def held_until_released(self, name: str) -> bool:
        """Wait for `release(name)`; False when the server stops first."""
        gate = self._gate(name)
        while not gate.wait(0.05):
            if self.stopping.is_set():
                return False
        return True

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def next_move(self, body: dict[str, Any] | None = None) -> tuple[Move | None, int]:
        with self._lock:
            self._completions += 1
            ruled = _ruled_move(self.rules, body or {})
            if ruled is not None:
                return ruled, self._completions
            if not self.moves:
                return None, self._completions
            move = self.moves.popleft()
            if self.loop:
                self.moves.append(move)
            return move, self._completions

    def __enter__(self) -> ScriptedServer:
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def main(argv: list[str] | None = None) -> None:
    """Serve a script file; the first stdout line is the port."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", help="JSON file: a list of moves")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", action="store_true", help="replay the moves forever")
    args = parser.parse_args(argv)
    moves = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            moves = json.load(f)
    server = ScriptedServer(moves, port=args.port, loop=args.loop)
    print(server.port, flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()


if __name__ == "__main__":
    main()
