"""The model's HTTP client (engine/backends/wire.py) against real servers on
127.0.0.1: one kept-alive connection for a chat's requests, one silent reconnect
when the server closed it while idle (never for a fresh one), no redirect followed,
proxies from the environment, bounded reads, and failures as `WireError`."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from helpers import closed_port, wait_for
from openai_server import ScriptedServer, reply

from skillchat.engine.backends.wire import Wire
from skillchat.errors import WireError

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


def wire(base: str, read_timeout: float = 10) -> Wire:
    return Wire(base, timeout=10, read_timeout=read_timeout)


def streamed(client: Wire) -> list[str]:
    response = client.post("/chat/completions", BODY, {"Authorization": "Bearer k"})
    assert response.status == 200
    data = list(response.iter_data())
    response.close()
    return data


class Raw:
    """A bare TCP server: `answer(conn, request_head)` plays each request it reads."""

    def __init__(self, answer: Callable[[socket.socket, bytes], bool]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.heads: list[bytes] = []
        self._answer = answer
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # closed under it at the test's end
            self._requests(conn)

    def _requests(self, conn: socket.socket) -> None:
        """Read request heads (and Content-Length bodies) until `answer` says stop."""
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            lines = head.lower().split(b"\r\n")
            sizes = [int(x.split(b":")[1]) for x in lines if x.startswith(b"content-length:")]
            while len(buffer) < sum(sizes):
                buffer += conn.recv(65536)
            buffer = buffer[sum(sizes) :]
            self.heads.append(head)
            if not self._answer(conn, head):
                return

    def close(self) -> None:
        self.listener.close()
        for conn in self._held:
            conn.close()


@contextmanager
def raw(answer: Callable[[socket.socket, bytes], bool]) -> Iterator[Raw]:
    server = Raw(answer)
    try:
        yield server
    finally:
        server.close()


def test_a_chats_requests_share_one_connection() -> None:
    with ScriptedServer([reply("one"), reply("two"), reply("three")]) as server:
        client = wire(server.base_url)
        for _ in range(3):
            assert streamed(client)[-1] == "[DONE]"
        client.close()
    assert len(server.completions) == 3
    assert server.completions[0].headers["authorization"] == "Bearer k"
    assert server.connections == 1


def test_an_answer_left_unfinished_keeps_its_connection_only_when_drained() -> None:
    moves = [reply("one two"), reply("one two", stall_after=1), reply("3"), reply("4")]
    with ScriptedServer(moves) as server:
        client = wire(server.base_url)
        response = client.post("/chat/completions", BODY, {})
        next(response.iter_bytes())
        # Sent whole, so arriving, as the drain's short wait expects of a loaded machine.
        assert wait_for(lambda: server.played == 1)
        response.close()  # the rest was arriving: read, and the connection kept
        response = client.post("/chat/completions", BODY, {})
        next(response.iter_bytes())
        response.close()  # the rest never comes: the connection is closed
        assert streamed(client)[-1] == "[DONE]"  # on a new one, kept
        assert streamed(client)[-1] == "[DONE]"
    assert server.connections == 2


def test_answers_read_at_once_each_have_a_connection_then_both_are_kept() -> None:
    with ScriptedServer([reply("a"), reply("b"), reply("c"), reply("d")]) as server:
        client = wire(server.base_url)
        first = client.post("/chat/completions", BODY, {})
        second = client.post("/chat/completions", BODY, {})  # while the first is open
        assert list(second.iter_data())[-1] == list(first.iter_data())[-1] == "[DONE]"
        first.close()
        second.close()
        assert streamed(client)[-1] == streamed(client)[-1] == "[DONE]"
        client.close()
    assert server.connections == 2
    assert len({r.port for r in server.completions}) == 2


def test_a_connection_closed_while_idle_is_reopened_once() -> None:
    def once(conn: socket.socket, head: bytes) -> bool:
        conn.sendall(OK)
        return False  # then close, as a server's keep-alive timeout does

    with raw(once) as server:
        client = wire(f"http://127.0.0.1:{server.port}/v1")
        for _ in range(3):
            with client.get("/models", {}, timeout=10) as response:
                assert response.read(100) == b"{}"
    assert server.accepted == 3 and len(server.heads) == 3


def test_a_fresh_connection_that_fails_is_not_retried() -> None:
    with raw(lambda conn, head: False) as server:  # reads the request, closes, no answer
        client = wire(f"http://127.0.0.1:{server.port}/v1")
        with pytest.raises(WireError, match="closed the connection without answering"):
            client.post("/chat/completions", BODY, {})
    assert server.accepted == 1


@pytest.mark.parametrize(
    ("location", "said"),
    [
        ("http://127.0.0.1:{other}/v1/chat/completions", "http://127.0.0.1:{other}"),
        ("https://evil.invalid/x?token=1", "https://evil.invalid:443"),
        ("/v1/chat/completions/", "/v1/chat/completions/"),
        ("http://127.0.0.1:{port}/v2/", "/v2/"),
    ],
)
def test_no_redirect_is_followed(location: str, said: str) -> None:
    other = closed_port()

    def redirect(conn: socket.socket, head: bytes) -> bool:
        target = location.format(other=other, port=server.port)
        conn.sendall(f"HTTP/1.1 307 Go\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
        return True

    with raw(redirect) as server:
        client = wire(f"http://127.0.0.1:{server.port}/v1")
        with pytest.raises(WireError) as info:
            client.post("/chat/completions", BODY, {})
        assert info.value.redirect == said.format(other=other)
        assert server.accepted == 1 and len(server.heads) == 1


def test_failures_say_what_happened() -> None:
    with pytest.raises(WireError) as info:
        wire(f"http://127.0.0.1:{closed_port()}/v1").post("/chat/completions", BODY, {})
    assert info.value.refused and "connection refused" in str(info.value)
    with raw(lambda conn, head: True) as silent:  # reads, never answers
        client = wire(f"http://127.0.0.1:{silent.port}/v1", read_timeout=0.3)
        with pytest.raises(WireError) as info:
            client.post("/chat/completions", BODY, {})
        assert info.value.timed_out
    with pytest.raises(WireError) as info:
        wire("http://127.0.0.1:1/v1").post("/chat/completions", BODY, {"X": "a\nb"})
    assert "not valid HTTP" in str(info.value) and "a\nb" not in str(info.value)


def test_an_error_body_is_read_bounded_and_its_connection_dropped() -> None:
    big = b"x" * 200_000

    def error(conn: socket.socket, head: bytes) -> bool:
        conn.sendall(b"HTTP/1.1 500 No\r\nContent-Length: %d\r\n\r\n" % len(big) + big)
        return True

    with raw(error) as server:
        client = wire(f"http://127.0.0.1:{server.port}/v1")
        for _ in range(2):
            response = client.post("/chat/completions", BODY, {})
            assert response.status == 500 and response.headers.get("content-length") == "200000"
            assert len(response.read(4096)) == 4096
            response.close()
    assert server.accepted == 2


def test_a_plain_http_proxy_gets_the_absolute_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with raw(lambda conn, head: bool(conn.sendall(OK)) or True) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://user:pa%20ss@127.0.0.1:{proxy.port}")
        client = wire("http://model.invalid/v1")
        for _ in range(2):
            with client.post("/chat/completions", BODY, {}) as response:
                response.read(10)
    first = proxy.heads[0].decode()
    assert first.startswith("POST http://model.invalid:80/v1/chat/completions HTTP/1.1")
    assert "Proxy-Authorization: Basic dXNlcjpwYSBzcw==" in first
    assert proxy.accepted == 1 and len(proxy.heads) == 2


def test_an_https_server_is_reached_through_a_connect_tunnel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"
    with raw(lambda conn, head: bool(conn.sendall(refuse))) as proxy:
        monkeypatch.setenv("https_proxy", f"127.0.0.1:{proxy.port}")
        with pytest.raises(WireError, match="Tunnel connection failed: 403"):
            wire("https://model.invalid/v1").post("/chat/completions", BODY, {})
    assert proxy.heads[0].startswith(b"CONNECT model.invalid:443 ")


def test_no_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([reply("direct")]) as server:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert streamed(wire(server.base_url))[-1] == "[DONE]"


def test_closing_an_answer_from_another_thread_ends_the_read_blocked_on_it() -> None:
    """What a reply deadline's timer does (base.py's ReplyDeadline): the read waiting
    on a silent stream returns at once, long before the read timeout."""
    with ScriptedServer([reply("one two", stall_after=1)]) as server:
        client = wire(server.base_url, read_timeout=600)
        response = client.post("/chat/completions", BODY, {})
        first, ended = threading.Event(), threading.Event()

        def read() -> None:
            with contextlib.suppress(WireError):
                for _ in response.iter_bytes():
                    first.set()  # the one event before the server goes silent
            ended.set()

        threading.Thread(target=read, daemon=True).start()
        assert first.wait(60)
        response.close()
        assert ended.wait(60)
