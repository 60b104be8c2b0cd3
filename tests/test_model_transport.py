"""`skillchat ask` against servers that misbehave at the HTTP level, through both
backends: a redirect to another origin is not followed (the conversation would go
there, body and all), and a server that accepts the connection and then never
answers is given up on after the configured `timeout`, once, not once per retry.

Real servers on 127.0.0.1: a stdlib HTTP server that redirects and one that
records what reaches it, and a bare socket that accepts and stays silent.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import one_line_error, skillchat

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"
SECRET_WORD = "conversation-marker-7781"


class _Recording(BaseHTTPRequestHandler):
    """The other origin: records every request, answers 500."""

    seen: list[str]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.server.seen.append(self.rfile.read(length).decode(errors="replace"))  # type: ignore[attr-defined]
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class _Redirecting(BaseHTTPRequestHandler):
    """The configured server: every request is sent on, 307, to `server.target`."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(307)
        self.send_header("Location", self.server.target + self.path)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def other() -> Iterator[ThreadingHTTPServer]:
    server = _serve(_Recording)
    server.seen = []  # type: ignore[attr-defined]
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def redirecting(other: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    server = _serve(_Redirecting)
    server.target = f"http://127.0.0.1:{other.server_address[1]}"  # type: ignore[attr-defined]
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent() -> Iterator[int]:
    """A port whose server accepts every connection and never writes a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()
    for conn in held:
        conn.close()


def ask(base: str, backend: str, tmp: Path, config: str = ""):
    (tmp / "config.toml").write_text(config)
    argv = ["ask", "--model", "openai/test-model", "--backend", backend, "--api-base", base]
    argv += ["--config", str(tmp / "config.toml"), "--skills-dir", str(SKILLS)]
    return skillchat(*argv, f"please remember {SECRET_WORD}", timeout=60)


@pytest.mark.parametrize("backend", ["openai", "litellm"])
def test_a_redirect_to_another_origin_is_not_followed(
    redirecting: ThreadingHTTPServer, other: ThreadingHTTPServer, tmp_path: Path, backend: str
) -> None:
    base = f"http://127.0.0.1:{redirecting.server_address[1]}/v1"
    done = ask(base, backend, tmp_path)
    line = one_line_error(done)
    assert f"the server at {base} redirected to another origin" in line
    assert f"{other.server_address[1]}); not followed" in line
    assert other.seen == []  # type: ignore[attr-defined]
    assert "retrying" not in done.stderr


@pytest.mark.parametrize("backend", ["openai", "litellm"])
def test_a_silent_server_is_given_up_on_after_the_timeout(
    silent: int, tmp_path: Path, backend: str
) -> None:
    base = f"http://127.0.0.1:{silent}/v1"
    # A short timeout, and the window stated so that the only wait is the request's
    # own (a silent /props costs its probe's bound: tests/test_context_window.py).
    config = "timeout = 0.5\nmax_retries = 3\ncontext_window = 8192\n"
    done = ask(base, backend, tmp_path, config=config)
    line = one_line_error(done)
    assert f"timed out after 0.5s waiting for {base}" in line
    assert "retrying" not in done.stderr and "gave up" not in line
