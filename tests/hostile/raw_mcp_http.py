"""A hostile streamable-HTTP MCP server, written without the SDK (a server that
misbehaves does not use one), for tests/hostile/test_hostile_mcp.py.

    python raw_mcp_http.py FOLDER PORT

It answers `initialize` and `tools/list` as a plain 2025-11-25 server would (JSON
bodies; `server/discover` is "method not found", so a client falls back to the
handshake), and each tool call as its tool's name says:

- `echo`: the text back, as a JSON body (the server is still usable);
- `gigabyte_json`: a JSON body of a gigabyte (one text content), streamed;
- `gigabyte_sse`: an SSE answer whose one event is a gigabyte long;
- `endless_sse`: an SSE answer of progress notifications, one every few ms, and
  never the response;
- `endless_json`: a JSON body that never ends, a byte every few ms;
- `malformed`: a result that is not MCP's (its `content` is not a list).

What it could send before the client hung up is written to FOLDER/sent-NAME.txt (the
bytes, then "closed" once the client closed the connection), so a test sees that the
answer stopped being read, not only that the call failed. Each `initialize` adds a
line to FOLDER/initialized.txt (a client that reconnects is seen).
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FOLDER = Path(sys.argv[1])
GIGABYTE = 1024**3
BLOCK = b"x" * (1024 * 1024)
TOOLS = [
    {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    for name in (
        "echo",
        "gigabyte_json",
        "gigabyte_sse",
        "endless_sse",
        "endless_json",
        "malformed",
    )
]


def result(request_id: object, payload: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": payload}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # no stream of the server's own messages
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:  # a notification
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif method == "initialize":
            with (FOLDER / "initialized.txt").open("a") as log:
                log.write("initialize\n")
            self.json(result(request_id, {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }))  # fmt: skip
        elif method == "tools/list":
            self.json(result(request_id, {"tools": TOOLS}))
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "echo":
                text = message["params"].get("arguments", {}).get("text", "")
                self.json(result(request_id, {"content": [{"type": "text", "text": text}]}))
            elif name == "malformed":
                self.json(result(request_id, {"content": "not\na list", "isError": "maybe"}))
            else:
                self.hostile(name, request_id)
        else:
            error = {"code": -32601, "message": "Method not found"}
            self.json(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())

    def json(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def hostile(self, name: str, request_id: object) -> None:
        """The answer `name` says, sent until done or until the client hangs up (the
        connection is closed after it: no length was given)."""
        self.close_connection = True
        sse = name.endswith("_sse")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
        self.end_headers()
        head = b'{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "'
        head %= json.dumps(request_id).encode()
        sent = 0
        record = FOLDER / f"sent-{name}.txt"
        try:
            if name == "endless_sse":
                while True:
                    progress = {"progressToken": 1, "progress": sent}
                    note = {"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": progress}  # fmt: skip
                    sent += self.send(b"event: message\ndata: %s\n\n" % json.dumps(note).encode())
                    record.write_text(str(sent))
                    time.sleep(0.005)
            sent += self.send((b"event: message\ndata: " if sse else b"") + head)
            while name == "endless_json":
                sent += self.send(b"x")
                record.write_text(str(sent))
                time.sleep(0.005)
            while sent < GIGABYTE:
                sent += self.send(BLOCK)
                record.write_text(str(sent))
            self.send(b'"}]}}' + (b"\n\n" if sse else b""))
            record.write_text(f"{sent}\nall sent")
        except (BrokenPipeError, ConnectionResetError):
            record.write_text(f"{sent}\nclosed")

    def send(self, data: bytes) -> int:
        self.wfile.write(data)
        self.wfile.flush()
        return len(data)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler)
    server.daemon_threads = True
    server.serve_forever()
