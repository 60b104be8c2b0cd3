"""An OAuth-protected streamable-HTTP MCP server and its own authorization server, on
127.0.0.1, written without the SDK (the tests need one that can misbehave), for
tests/test_mcp_oauth.py and tests/hostile/test_hostile_mcp_auth.py.

    python oauth_mcp_server.py FOLDER MCP_PORT AS_PORT [MODE]

The MCP server (http://127.0.0.1:MCP_PORT/mcp) answers a request without a valid
bearer token with a 401 naming its protected-resource metadata; with one, it speaks
plain 2025-11-25 JSON (one tool, `whoami`). The authorization server registers
clients (RFC 7591), approves every authorization request at once (a 302 back to the
redirect URI with the code and the state, as the conformance suite's does), checks
PKCE S256 and the `resource` at the token endpoint, and issues access tokens that
expire after `EXPIRES_S` seconds, with refresh tokens. FOLDER/events.txt gets a
line per event ("register", "authorize", "token authorization_code", "token
refresh_token", "mcp METHOD", "refused METHOD"); FOLDER/tokens.txt every token issued.

MODE makes the authorization server hostile (tests/hostile/test_hostile_mcp_auth.py):
`redirect` (its metadata answers a redirect to another origin), `wrong-issuer`,
`other-origin` (its token endpoint on another origin), `http-remote` (the resource
names an authorization server over http on a remote host), `endless` (its metadata
never ends). In `step-up` the resource answers a tool call 403 `insufficient_scope`
(scope `write`) unless the token was granted `write`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from urllib.parse import parse_qs, urlencode, urlparse

FOLDER, MCP_PORT, AS_PORT = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
MODE = sys.argv[4] if len(sys.argv) > 4 else ""
MCP = f"http://127.0.0.1:{MCP_PORT}"
AS = f"http://127.0.0.1:{AS_PORT}"
ELSEWHERE = f"http://127.0.0.1:{MCP_PORT + 1}"  # nothing listens there
EXPIRES_S = 2
codes: dict[str, dict[str, str]] = {}  # code -> the authorization request
access: dict[str, float] = {}  # access token -> when it expires
scopes: dict[str, str] = {}  # access or refresh token -> the scope granted
refresh: set[str] = set()


def event(line: str) -> None:
    with (FOLDER / "events.txt").open("a") as file:
        file.write(line + "\n")


def issued(*tokens: str) -> None:
    with (FOLDER / "tokens.txt").open("a") as file:
        file.write("".join(token + "\n" for token in tokens))


class Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def answer(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))


class Resource(Base):
    def do_GET(self) -> None:
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            server = "http://auth.example.com" if MODE == "http-remote" else AS
            self.answer(200, {"resource": f"{MCP}/mcp", "authorization_servers": [server]})
        else:
            self.answer(405, None)

    def do_DELETE(self) -> None:
        self.answer(200, None)

    def do_POST(self) -> None:
        message = json.loads(self.body())
        method = message.get("method", "")
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if access.get(token, 0) < time.time():
            event(f"refused {method}")
            metadata = f"{MCP}/.well-known/oauth-protected-resource/mcp"
            challenge = f'Bearer resource_metadata="{metadata}", scope="mcp"'
            self.answer(401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
            return
        if MODE == "step-up" and method == "tools/call" and "write" not in scopes[token].split():
            event(f"refused {method}")
            challenge = 'Bearer error="insufficient_scope", scope="write"'
            self.answer(403, {"error": "insufficient_scope"}, {"WWW-Authenticate": challenge})
            return
        event(f"mcp {method}")
        if "id" not in message:
            self.answer(202, None)
        elif method == "initialize":
            self.result(message, {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "protected", "version": "1"},
            })  # fmt: skip
        elif method == "tools/list":
            tool = {"name": "whoami", "description": "Who the token is.",
                    "inputSchema": {"type": "object"}}  # fmt: skip
            self.result(message, {"tools": [tool]})
        elif method == "tools/call":
            self.result(message, {"content": [{"type": "text", "text": "you are logged in"}]})
        else:
            error = {"code": -32601, "message": "method not found"}
            self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "error": error})

    def result(self, message: dict[str, object], payload: object) -> None:
        self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": payload})


class Authorization(Base):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path.startswith("/.well-known/"):
            self.metadata(url.path)
        elif url.path == "/authorize":
            event("authorize")
            code = secrets.token_urlsafe(16)
            codes[code] = query
            back = urlencode({"code": code, "state": query.get("state", ""), "iss": AS})
            self.send_response(302)
            self.send_header("Location", f"{query['redirect_uri']}?{back}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.answer(404, None)

    def metadata(self, path: str) -> None:
        if MODE == "redirect":
            self.send_response(302)
            self.send_header("Location", f"{ELSEWHERE}{path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if MODE == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"issuer": "' + b"x" * 1024)
            while True:
                self.wfile.write(b"x" * 65536)
        token_at = ELSEWHERE if MODE == "other-origin" else AS
        self.answer(200, {
            "issuer": f"{AS}/elsewhere" if MODE == "wrong-issuer" else AS,
            "authorization_endpoint": f"{AS}/authorize",
            "token_endpoint": f"{token_at}/token",
            "registration_endpoint": f"{AS}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        })  # fmt: skip

    def do_POST(self) -> None:
        form = {k: v[0] for k, v in parse_qs(self.body().decode()).items()}
        if self.path == "/register":
            event("register")
            client = json.loads(json.dumps(form)) if form else {}
            self.answer(201, {**client, "client_id": secrets.token_hex(8),
                              "token_endpoint_auth_method": "none"})  # fmt: skip
        elif self.path == "/token":
            self.token(form)
        else:
            self.answer(404, None)

    def token(self, form: dict[str, str]) -> None:
        grant = form.get("grant_type", "")
        if grant == "authorization_code":
            asked = codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "").encode()
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if asked is None or asked.get("code_challenge") != challenge.decode():
                self.answer(400, {"error": "invalid_grant"})
                return
            if form.get("resource") != f"{MCP}/mcp":
                self.answer(400, {"error": "invalid_target"})
                return
            scope = asked.get("scope", "")
        elif grant != "refresh_token" or form.get("refresh_token") not in refresh:
            self.answer(400, {"error": "invalid_grant"})
            return
        else:
            scope = scopes[form["refresh_token"]]
        event(f"token {grant}")
        token, again = "at-" + secrets.token_hex(16), "rt-" + secrets.token_hex(16)
        access[token] = time.time() + EXPIRES_S
        scopes[token] = scopes[again] = scope
        refresh.add(again)
        issued(token, again)
        body = {"access_token": token, "token_type": "Bearer", "expires_in": EXPIRES_S}
        self.answer(200, {**body, "refresh_token": again, "scope": scope})


if __name__ == "__main__":
    servers = [ThreadingHTTPServer(("127.0.0.1", AS_PORT), Authorization)]
    servers.append(ThreadingHTTPServer(("127.0.0.1", MCP_PORT), Resource))
    for server in servers:
        server.daemon_threads = True
        Thread(target=server.serve_forever, daemon=True).start()
    while True:
        time.sleep(3600)
