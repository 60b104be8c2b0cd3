"""`skillchat mcp login NAME`: the one place an HTTP server's OAuth flow runs whole.

    login(config, show)    # connects with `Authorize`; True once tokens are stored

A listener on 127.0.0.1 (a port of the system's choosing) is the redirect URI.
The flow (mcp/oauth.py) hands the authorization URL to `show` (the command prints
it, and opens a browser when one is configured), then waits for the browser's
redirect to that listener: the first request to `/callback` is taken, and its
`state` must be the one in the URL shown, else the login ends with nothing stored
(a page that is not the authorization server's cannot log the user in to anything).
The SDK then checks the state again, the issuer (RFC 9207), exchanges the code
with the PKCE verifier, and the tokens go to the user's token file; the server is
connected with them and its tools listed, as a chat would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

from skillchat.errors import McpError
from skillchat.mcp_config import McpServerConfig

WAIT_S = 300.0  # for the user to log in, in the browser
_DONE = b"<!doctype html><title>skillchat</title><p>Logged in: you can close this page.</p>\n"
_REFUSED = b"<!doctype html><title>skillchat</title><p>Not logged in: see the terminal.</p>\n"


class _Redirect:
    """The loopback listener and what its one redirect brought."""

    def __init__(self) -> None:
        self.server = HTTPServer(("127.0.0.1", 0), self._handler())
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/callback"
        self.expected: str | None = None  # the state in the URL shown
        self.query: dict[str, str] = {}
        self.came = threading.Event()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        redirect = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                if url.path != "/callback" or redirect.came.is_set():
                    self.send_error(404)
                    return
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                redirect.query = query
                redirect.came.set()
                ok = "code" in query and query.get("state") == redirect.expected
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(_DONE if ok else _REFUSED)

            def log_message(self, *args: object) -> None:
                """Nothing on stderr: the query carries the code."""

        return Handler

    def serve(self) -> None:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def login(config: McpServerConfig, show: Callable[[str], None]) -> int:
    """Log in to the HTTP server `config` names: tokens stored, its tools listed
    (how many is returned). McpError in one line when not: nothing is stored then."""
    from mcp.shared.auth import AuthorizationCodeResult

    from skillchat.mcp.hub import McpHub
    from skillchat.mcp.oauth import Authorize

    redirect = _Redirect()

    async def shown(url: str) -> None:
        redirect.expected = parse_qs(urlparse(url).query).get("state", [None])[0]
        show(url)

    async def redirected() -> AuthorizationCodeResult:
        came = await asyncio.to_thread(redirect.came.wait, WAIT_S)
        query = redirect.query
        if not came:
            raise McpError(f"no redirect from the browser in {WAIT_S:g} s: not logged in")
        if query.get("state") != redirect.expected:
            raise McpError("the redirect's state is not the login's: not logged in")
        if "code" not in query:
            error = query.get("error_description") or query.get("error") or "no code"
            raise McpError(f"the authorization server said: {error[:200]}")
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    redirect.serve()
    hub = McpHub([config], authorize=Authorize(redirect.uri, shown, redirected))
    state = hub.servers[config.name]
    try:
        hub.start()
        state.ready.wait(WAIT_S + config.startup_timeout_s)
        if state.state != "ready":
            raise McpError(f"MCP server '{config.name}': {state.error or 'not logged in'}")
        if state.auth is None or not state.auth.authorized:
            raise McpError(f"MCP server '{config.name}' did not ask for a login: nothing stored")
        state.auth.commit()
        return len(state.tools)
    finally:
        hub.close()
        redirect.close()
