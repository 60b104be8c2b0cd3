"""The model's HTTP client: HTTP/1.1 on the standard library, one connection per chat.

Why not httpx (what the `openai` SDK is built on): the request is what `ask` waits
for, and importing the client is on its way. Measured with `python -X importtime`
(cumulative; 2026-12-06, 2 cores): `http.client` (which imports `ssl`) + `json`
~15 ms, `httpx` ~50 ms (its command line kept out, as cli/app.py does), `openai`
~480 ms on a quiet machine; at load 20, the best of 7 runs each, 21 / 54 / 718 ms.
A chat completion needs none of what httpx adds (HTTP/2, pools, auth flows): one
POST, its body streamed back.

What it promises:

- One kept-alive connection per `Wire` (one per backend, so one per chat), reused
  for every request and tool round: no new TCP and TLS handshake per round. A
  second is opened only while the first carries an answer (a chat's forks asking
  at once share its backend), and kept too. A reused connection the server closed
  while idle (a keep-alive timeout) is reconnected once, silently, when it fails
  before any byte of the answer; a fresh one that fails is the error.
- No redirect is followed, to any origin: a 3xx raises `WireError` with its
  `redirect`. A 307/308 re-sends the body, and the body is the conversation (and,
  for a provider, the key's header): one redirect from a compromised proxy or a
  typo'd domain would hand it to a host the user never named (origin.py's promise,
  kept without exceptions). An OpenAI-compatible API never redirects its POSTs.
- `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` are honoured (a CONNECT
  tunnel for https, an absolute-form request for plain http); urllib's proxy
  helpers are imported only when one of them is set.
- TLS through `ssl.create_default_context()`: the system's authorities, or
  `SSL_CERT_FILE` / `SSL_CERT_DIR` when set; loaded only for an https server.
- `timeout` bounds connecting and sending; `read_timeout` each wait for the answer
  (a silent server). The reply's own deadline is the backend's (base.py).
- Connection failures raise `WireError` (skillchat/errors.py), which each backend
  words as its one-line `ProviderError`; an HTTP error status is a response like
  any other (`status`, `headers`, a bounded `read`).

Requests may come from several threads at once, each on a connection of its own.
`WireResponse.close()` may be called from another thread (a deadline's timer): an
unfinished body's socket is shut down, which ends a read blocked on it (as the
body's end, or a `WireError`).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from skillchat.errors import WireError

if TYPE_CHECKING:
    import ssl

# A reused connection the server closed while idle fails in one of these ways
# before any byte of the answer arrives: sent into a closed socket, or closed
# without a status line (http.client's RemoteDisconnected, a ConnectionResetError).
_STALE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
_PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_READ_SIZE = 65536
# What close() reads of a body its reader stopped short of: at most this, this long.
_DRAIN_LIMIT = 65536
_DRAIN_WAIT = 0.1


class WireResponse:
    """An answer: `status`, `headers` (case-insensitive `get`), and its body read
    once, streamed (`iter_bytes`, `iter_data`) or bounded (`read`)."""

    def __init__(
        self,
        wire: Wire,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        sock: socket.socket | None,
    ) -> None:
        self._wire = wire
        self._connection = connection
        self._response = response
        # Held here too: http.client lets go of the socket of a connection the
        # server said it would close, while the body is still read from it.
        self._sock = sock
        self.status: int = response.status
        self.headers: http.client.HTTPMessage = response.headers
        self._closed = threading.Event()  # set by close(), maybe on another thread
        self._finished = False
        self._reading = threading.Lock()  # held by the reader; close() may be another thread

    def iter_bytes(self) -> Iterator[bytes]:
        """The body as it arrives (de-chunked); `WireError` if the connection breaks
        or stays silent past `read_timeout`."""
        while chunk := self._read(lambda: self._response.read1(_READ_SIZE)):
            yield chunk

    def iter_data(self) -> Iterator[str]:
        """The `data` of each server-sent event of the body (sse.py's reader)."""
        from skillchat.engine.backends.sse import iter_data

        return iter_data(self.iter_bytes())

    def read(self, limit: int) -> bytes:
        """At most `limit` bytes of the body (an error page is read a few KiB at most)."""
        return self._read(lambda: self._response.read(limit))

    def _read(self, read: Callable[[], bytes]) -> bytes:
        if self._closed.is_set():
            return b""
        with self._reading:
            try:
                return read()
            except TimeoutError as exc:
                raise WireError("no data within the read timeout", timed_out=True) from exc
            except (OSError, http.client.HTTPException, ValueError) as exc:
                raise WireError(_describe(exc)) from exc
            finally:
                if self._closed.is_set():  # by another thread, during the read: ended here
                    self._finish()

    @property
    def complete(self) -> bool:
        """The whole body was read (the connection can carry the next request)."""
        return self._response.isclosed()

    def close(self) -> None:
        """Done with the answer: the connection stays for the next request when the
        body was read to its end, and is closed otherwise.

        A reader that stops at the protocol's own end (`[DONE]`, `message_stop`)
        leaves the body's last bytes (the closing empty chunk) unread: what of them
        arrives within `_DRAIN_WAIT` is read here, so the connection is kept. Called
        while another thread reads (a deadline's timer), it shuts the socket down,
        which ends that read, and the reading thread finishes the close (http.client
        lets a body be closed by one thread at a time)."""
        if self._closed.is_set():
            return
        self._closed.set()
        if not self._reading.acquire(blocking=False):
            _shut(self._sock)
            return
        try:
            self._finish()
        finally:
            self._reading.release()

    def _finish(self) -> None:
        """Keep or close the connection (once; `_reading` held)."""
        if self._finished:
            return
        self._finished = True
        if not self.complete:
            self._drain()
        reusable = self.complete and not self._response.will_close
        if not reusable:
            _shut(self._sock)
            self._response.close()
        self._wire._release(self._connection, reusable=reusable)

    def _drain(self) -> None:
        """Read the rest of the body if it is short and already arriving: at most
        `_DRAIN_LIMIT` bytes within `_DRAIN_WAIT` in all. Each read waits at most that
        long too, and the time is checked between reads, so a body that drips forever
        (a byte every few ms, each read answered in time) is closed, not read on."""
        if self._sock is None:
            return
        deadline = time.monotonic() + _DRAIN_WAIT
        left = _DRAIN_LIMIT
        try:
            self._sock.settimeout(_DRAIN_WAIT)
            while left > 0 and not self.complete and time.monotonic() < deadline:
                piece = self._response.read1(min(left, 8192))
                if not piece:
                    return
                left -= len(piece)
        except (OSError, http.client.HTTPException, ValueError):
            pass  # not complete: the connection is closed

    def __enter__(self) -> WireResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Wire:
    """HTTP/1.1 to `base_url`'s server over kept-alive connections (see the module's
    docstring). Paths are appended to `base_url`'s own path."""

    def __init__(self, base_url: str, *, timeout: float, read_timeout: float) -> None:
        parts = urlsplit(base_url)
        self._scheme = parts.scheme.lower()
        self._host = parts.hostname or ""
        try:
            port = parts.port
        except ValueError:  # a port that is not a number: reported when connecting
            port = -1
        self._port = port or _DEFAULT_PORTS.get(self._scheme, 0)
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._lock = threading.Lock()
        self._idle: list[http.client.HTTPConnection] = []  # kept, between answers
        self._busy: set[http.client.HTTPConnection] = set()  # carrying an answer
        self._tls: ssl.SSLContext | None = None  # made at the first https connection

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> WireResponse:
        """POST `body` as JSON; the answer's status and headers, its body unread."""
        data = json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **headers}
        return self._request("POST", path, data, sent, self._read_timeout)

    def get(self, path: str, headers: dict[str, str], *, timeout: float) -> WireResponse:
        """GET, waiting at most `timeout` to connect and for the answer."""
        return self._request("GET", path, None, headers, timeout)

    def close(self) -> None:
        """Close every connection, an answer's still being read too."""
        with self._lock:
            connections = [*self._idle, *self._busy]
            self._idle.clear()
            self._busy.clear()
        for connection in connections:
            _close(connection)

    def _request(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str], wait: float
    ) -> WireResponse:
        target, proxy_headers = self._target(path)
        sent = {**proxy_headers, "User-Agent": "skillchat", **headers}
        for attempt in (1, 2):
            connection = self._take(min(self._timeout, wait), fresh=attempt == 2)
            reused = connection.sock is not None
            try:
                connection.request(method, target, data, sent)
                sock = connection.sock
                if sock is not None:
                    sock.settimeout(wait)
                    _quickack(sock)
                response = connection.getresponse()
            except _STALE as exc:
                self._release(connection, reusable=False)
                if reused and attempt == 1:
                    continue  # the server closed it while idle: once more, on a new one
                raise WireError(_describe(exc)) from exc
            except TimeoutError as exc:
                self._release(connection, reusable=False)
                raise WireError("no answer within the timeout", timed_out=True) from exc
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self._release(connection, reusable=False)
                raise WireError(_describe(exc), refused=_refused(exc)) from exc
            break
        if 300 <= response.status < 400:
            self._release(connection, reusable=False)
            raise WireError(
                f"redirected ({response.status}), not followed",
                redirect=self._where(response.getheader("Location") or ""),
            )
        return WireResponse(self, connection, response, sock)

    def _target(self, path: str) -> tuple[str, dict[str, str]]:
        """The request's target, and the headers a plain-http proxy needs (it is
        sent the absolute URL; a tunnel, for https, is set up per connection)."""
        if self._scheme == "http" and (proxy := _proxy(self._scheme, self._host)):
            return f"http://{self._host}:{self._port}{self._prefix}{path}", proxy[2]
        return self._prefix + path, {}

    def _where(self, location: str) -> str:
        """A redirect's target: `scheme://host:port` when it names another origin,
        else its path (no query: nothing the user may not want shown is repeated)."""
        parts = urlsplit(location)
        scheme = (parts.scheme or self._scheme).lower()
        try:
            port = parts.port or _DEFAULT_PORTS.get(scheme)
        except ValueError:
            port = None
        target = f"{scheme}://{parts.hostname}:{port}"
        if not parts.netloc or target == f"{self._scheme}://{self._host}:{self._port}":
            return parts.path or "/"
        return target

    def _take(self, timeout: float, *, fresh: bool) -> http.client.HTTPConnection:
        """An idle kept connection (the most recent), else a new one, opened by its
        first request: a second only while the first carries an answer (forks
        asking at once)."""
        with self._lock:
            connection = self._idle.pop() if self._idle and not fresh else None
        if connection is None:
            connection = self._new(timeout)
        elif connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.timeout = timeout
        with self._lock:
            self._busy.add(connection)
        return connection

    def _new(self, timeout: float) -> http.client.HTTPConnection:
        if self._scheme not in _DEFAULT_PORTS or not self._host or self._port < 0:
            raise WireError("not an http:// or https:// URL with a host")
        proxy = _proxy(self._scheme, self._host)
        host, port = (proxy[0], proxy[1]) if proxy else (self._host, self._port)
        if self._scheme == "http":
            return http.client.HTTPConnection(host, port, timeout=timeout)
        if self._tls is None:  # loading the authorities costs 20-70 ms: once a chat
            import ssl

            self._tls = ssl.create_default_context()
        connection = http.client.HTTPSConnection(host, port, timeout=timeout, context=self._tls)
        if proxy:
            connection.set_tunnel(self._host, self._port, headers=proxy[2])
        return connection

    def _release(self, connection: http.client.HTTPConnection, *, reusable: bool) -> None:
        """An answer is done with `connection`: kept for the next request, or closed."""
        with self._lock:
            known = connection in self._busy
            self._busy.discard(connection)
            if reusable and known:
                self._idle.append(connection)
                return
        _close(connection)


def _close(connection: http.client.HTTPConnection) -> None:
    """Close `connection`, its socket shut down first (which ends a read another
    thread is blocked in)."""
    _shut(connection.sock)
    connection.close()


def _quickack(sock: socket.socket) -> None:
    """ACK the answer's first segment at once (Linux; elsewhere nothing).

    A server with Nagle's algorithm on (Python's http.server; llama.cpp's, by
    default) holds its second write (the first event, after the headers) until the
    first is acknowledged, and on a kept-alive connection Linux delays that ACK up
    to 40 ms: measured, every reused request waited ~44 ms for its first event, a
    fresh connection (quick ACKs at its start) under 1 ms. The flag is not sticky,
    so it is set again before each answer is awaited."""
    if (flag := getattr(socket, "TCP_QUICKACK", None)) is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, flag, 1)


def _shut(sock: socket.socket | None) -> None:
    """Shut `sock` down (a read blocked on it in another thread returns at once)."""
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed by the peer
            sock.shutdown(socket.SHUT_RDWR)


def _proxy(scheme: str, host: str) -> tuple[str, int, dict[str, str]] | None:
    """(host, port, headers) of the proxy the environment names for `host`, if any."""
    if not any(os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES):
        return None
    # proxy_bypass_environment reads NO_PROXY; typeshed leaves it out.
    from urllib.request import (  # type: ignore[attr-defined]
        getproxies_environment,
        proxy_bypass_environment,
    )

    proxies = getproxies_environment()
    url = proxies.get(scheme) or proxies.get("all")
    if not url or proxy_bypass_environment(host, proxies):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    headers: dict[str, str] = {}
    if parts.username:
        import base64

        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
    return parts.hostname or "", parts.port or _DEFAULT_PORTS.get(parts.scheme, 80), headers


def _refused(exc: BaseException) -> bool:
    return isinstance(exc, ConnectionRefusedError)


def _describe(exc: BaseException) -> str:
    """The failure in a few words, never a header's value (a key may be in one)."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ValueError) and not isinstance(exc, UnicodeError):
        # http.client refuses a header value with a line break, quoting the value.
        return "a request header is not valid HTTP (a key with a line break?)"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(exc, http.client.IncompleteRead):
        return "the connection closed mid-body"
    text = str(exc).strip()
    return text or type(exc).__name__
