"""A stand-in for the Hugging Face Hub on 127.0.0.1: serves one file as `--local`'s
default model (its metadata headers, HEAD, ranged GET), with faults a test can turn
on. Tests point skillchat at it with `HF_ENDPOINT`, as a user points it at a mirror."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HUB_REPO = "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
HUB_FILE = "qwen2.5-1.5b-instruct-q4_k_m.gguf"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Hub(http.server.ThreadingHTTPServer):
    """Serves one file in the Hugging Face Hub's layout (HEAD metadata, ranged GET)."""

    def __init__(self, content: bytes, sha256: str) -> None:
        self.content, self.sha256 = content, sha256
        self.ranges: list[str | None] = []
        self.drop_after: int | None = None  # bytes sent before the first GET is cut
        self.stall_after: int | None = None  # bytes sent before the first GET stalls
        self.release = threading.Event()
        super().__init__(("127.0.0.1", 0), HubHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class HubHandler(http.server.BaseHTTPRequestHandler):
    server: Hub

    def log_message(self, *args: object) -> None:
        pass

    def _headers(self, start: int) -> None:
        hub = self.server
        if self.path != f"/{HUB_REPO}/resolve/main/{HUB_FILE}":
            self.send_error(404)
            return
        size = len(hub.content)
        self.send_response(206 if start else 200)
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("X-Linked-Etag", f'"{hub.sha256}"')
        self.send_header("X-Linked-Size", str(size))
        self.send_header("ETag", f'"{hub.sha256}"')
        self.send_header("Content-Length", str(size - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._headers(0)

    def do_GET(self) -> None:
        hub = self.server
        asked = self.headers.get("Range")
        hub.ranges.append(asked)
        start = int(asked.split("=")[1].split("-")[0]) if asked else 0
        self._headers(start)
        body = memoryview(hub.content)[start:]
        if hub.stall_after is not None and start == 0:
            self.wfile.write(body[: hub.stall_after])
            self.wfile.flush()
            hub.release.wait(120)
            self.close_connection = True
            return
        if hub.drop_after is not None and start == 0:
            self.wfile.write(body[: hub.drop_after])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


@contextmanager
def serving_as_default_model(model: Path) -> Iterator[Hub]:
    """A hub serving the file `model` under the default model's name, until the block
    ends."""
    content = model.read_bytes()
    server = Hub(content, hashlib.sha256(content).hexdigest())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
