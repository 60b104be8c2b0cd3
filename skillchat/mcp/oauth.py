"""OAuth 2.1 for HTTP MCP servers: the SDK's authorization-code flow, held to skillchat's rules.

The SDK's `OAuthClientProvider` (an httpx auth) does what the spec's authorization
section asks on a 401 or a 403 `insufficient_scope`: protected-resource metadata
(the `WWW-Authenticate` `resource_metadata`, then the well-known paths), the
authorization server's metadata (OAuth, then OIDC well-knowns, in the spec's order)
with its issuer checked, a client id (the `[mcp.NAME]` `client_id`/`client_secret`,
a client ID metadata document at `client_metadata_url`, or dynamic registration),
PKCE S256, the `resource` indicator, scopes from the challenge, refresh. Around it:

- A chat never asks for a login. When the server wants one (no token, a token it
  refuses that cannot be refreshed, a scope it lacks) the connection or the call
  fails with one line naming `skillchat mcp login NAME`, before any request to the
  authorization server: nothing is registered or stored. A scope the server asked
  for more of is kept (mcp/tokens.py) and asked for at the next login.
- A token past its expiry, or refused with a 401, is refreshed quietly once.
- Every request of the flow goes to https, or http on a loopback host; the
  authorization server's endpoints are on its issuer's origin; its answers are
  bounded (mcp/http.py). A flow that breaks any of these stops, in one line.
- `skillchat mcp login NAME` (mcp/login.py) is the one place the flow runs whole,
  with `Authorize`: the URL shown to the user, the redirect taken on a loopback
  listener with its state checked.

Tokens live in the user's private token file only; the SDK's log is silenced (hub.py).
The SDK is pinned exactly (pyproject.toml): `Provider` overrides its `_auth_flow` (the
extension point its base class documents), `_initialize` (the expiry and metadata
kept with the tokens) and `_perform_authorization_code_grant` (a kept step-up scope).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)

from skillchat.errors import McpError
from skillchat.mcp.tokens import TokenFile
from skillchat.mcp_config import McpServerConfig, expand

# The redirect URI a chat registers nothing with (it never authorizes; see above).
_NO_REDIRECT = "http://127.0.0.1/callback"


@dataclass
class Authorize:
    """How `mcp login` takes the user through the authorization: `show` gets the URL
    (printed, a browser opened), `redirected` waits for the redirect's code."""

    redirect_uri: str
    show: Callable[[str], Awaitable[None]]
    redirected: Callable[[], Awaitable[AuthorizationCodeResult]]


class _Storage:
    """The SDK's token storage over the server's token file. At a login, what the
    flow obtains is held until the login succeeds (`commit`): a flow that fails
    half-way (a registration done, then a wrong issuer) leaves nothing behind."""

    def __init__(self, file: TokenFile, config: McpServerConfig, login: bool) -> None:
        self.file, self.config, self.login = file, config, login
        self.pending: dict[str, Any] = {}

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self.pending.get("tokens") if self.login else self.file.get("tokens")
        return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = tokens.model_dump(mode="json", exclude_none=True)
        if self.login:
            self.pending["tokens"] = record
        else:
            self.file.tokens_saved(record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.config.client_id is not None:  # pre-registered: the config's
            secret = self.config.client_secret
            return OAuthClientInformationFull(
                client_id=expand(self.config.client_id),
                client_secret=expand(secret) if secret is not None else None,
                token_endpoint_auth_method="client_secret_basic" if secret else "none",
            )
        # A login registers anew: its redirect URI is on a new port.
        client = self.pending.get("client") if self.login else self.file.get("client")
        return (
            OAuthClientInformationFull.model_validate(client) if isinstance(client, dict) else None
        )

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        record = client_info.model_dump(mode="json", exclude_none=True)
        if self.login:
            self.pending["client"] = record
        elif self.config.client_id is None:
            self.file.save(client=record)

    def commit(self, discovered: dict[str, Any]) -> None:
        """The login succeeded: its tokens, registration and the metadata `discovered`
        (where a refresh goes) replace what was kept."""
        self.file.data = dict(discovered)
        if self.config.client_id is None and "client" in self.pending:
            self.file.data["client"] = self.pending["client"]
        self.file.tokens_saved(self.pending["tokens"])


class Provider(OAuthClientProvider):
    """The SDK's provider for one server, as the module docstring says."""

    def __init__(self, config: McpServerConfig, authorize: Authorize | None) -> None:
        self.name = config.name
        self.file = TokenFile(config.name, config.url or "").load()
        self.authorize = authorize
        self.failure = ""  # why the flow stopped, in one line (the SDK's error is not shown)
        self.authorized = False  # a login's authorization was completed
        metadata = OAuthClientMetadata(
            client_name="skillchat",
            redirect_uris=[authorize.redirect_uri if authorize else _NO_REDIRECT],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        self.storage = _Storage(self.file, config, authorize is not None)
        super().__init__(
            config.url or "",
            metadata,
            self.storage,
            redirect_handler=self._show,
            callback_handler=authorize.redirected if authorize else None,
            client_metadata_url=config.client_metadata_url,
        )

    async def _initialize(self) -> None:
        """The kept tokens, when they expire, and the metadata they came with (the
        token endpoint a refresh goes to)."""
        await super()._initialize()
        self.context.token_expiry_time = self.file.expires_at()
        metadata, resource = self.file.get("metadata"), self.file.get("resource_metadata")
        if not self.storage.login and isinstance(metadata, dict):
            self.context.oauth_metadata = OAuthMetadata.model_validate(metadata)
        if not self.storage.login and isinstance(resource, dict):
            prm = ProtectedResourceMetadata.model_validate(resource)
            self.context.protected_resource_metadata = prm
            if prm.authorization_servers:
                self.context.auth_server_url = str(prm.authorization_servers[0])

    def commit(self) -> None:
        """`mcp login` succeeded: keep what it obtained (mcp/login.py)."""
        found = {
            "metadata": self.context.oauth_metadata,
            "resource_metadata": self.context.protected_resource_metadata,
        }
        self.storage.commit(
            {k: v.model_dump(mode="json", exclude_none=True) for k, v in found.items() if v}
        )

    async def _show(self, url: str) -> None:
        issuer = str(self.context.oauth_metadata.issuer) if self.context.oauth_metadata else url
        self._check_url(url, same_origin_as=issuer)
        assert self.authorize is not None  # a chat stops at the challenge (_auth_flow)
        await self.authorize.show(url)

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        """The SDK's, asking also for the scope a server stepped up to earlier."""
        wanted = self.file.get("wanted_scope")
        if isinstance(wanted, str):
            scope = self.context.client_metadata.scope
            self.context.client_metadata.scope = union_scopes(scope, wanted)
        code, verifier = await super()._perform_authorization_code_grant()
        self.authorized = True
        return code, verifier

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, each of its requests checked; a 401 first refreshes (once),
        and a chat stops where a login is needed (see the module docstring)."""
        for attempt in (0, 1):
            flow = super()._auth_flow(request)
            try:
                outgoing = await flow.__anext__()
                while True:
                    if outgoing is not request:
                        self._check_request(outgoing)
                    response = yield outgoing
                    if outgoing is request and response.status_code in (401, 403):
                        if (
                            response.status_code == 401
                            and attempt == 0
                            and self.context.can_refresh_token()
                        ):
                            self.context.token_expiry_time = 1.0  # expired: refreshed first
                            break
                        if self.authorize is None and _challenged(response):
                            raise self._stop(self._needs_login(response))
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            except McpError as exc:  # the login's own (mcp/login.py), or ours
                self.failure = self.failure or str(exc)
                raise
            except Exception as exc:  # the SDK's OAuth errors, a bad answer of the server
                raise self._stop(f"could not log in: {_why(exc)}") from None
            finally:
                await flow.aclose()

    def _needs_login(self, response: httpx2.Response) -> str:
        if response.status_code == 403:
            granted = self.context.current_tokens.scope if self.context.current_tokens else None
            wanted = union_scopes(granted, extract_field_from_www_auth(response, "scope"))
            self.file.save(wanted_scope=wanted)
            more = f" (scope {wanted})" if wanted else ""
            return f"needs more access{more}: run `skillchat mcp login {self.name}`"
        return f"needs a login: run `skillchat mcp login {self.name}`"

    def _stop(self, line: str) -> McpError:
        """Why the flow stops, as said after "MCP server 'NAME' "."""
        self.failure = line
        return McpError(line)

    def _check_request(self, request: httpx2.Request) -> None:
        """Each request of the flow, and the endpoints of an authorization server
        once its metadata is read: where the code, the verifier or a secret goes."""
        self._check_url(str(request.url))
        metadata = self.context.oauth_metadata
        if metadata is not None:
            endpoints = (metadata.authorization_endpoint, metadata.token_endpoint)
            for endpoint in (*endpoints, metadata.registration_endpoint):
                if endpoint is not None:
                    self._check_url(str(endpoint), same_origin_as=str(metadata.issuer))

    def _check_url(self, url: str, same_origin_as: str | None = None) -> None:
        """https, or http on a loopback host; on the issuer's origin when given."""
        parsed = urlparse(url)
        if parsed.scheme != "https" and not (
            parsed.scheme == "http" and _loopback(parsed.hostname)
        ):
            raise self._stop(f"refused its authorization server: {_origin(url)} is not https")
        if same_origin_as is not None and _origin(url) != _origin(same_origin_as):
            raise self._stop(
                f"refused its authorization server: "
                f"{_origin(same_origin_as)} sends to another origin, {_origin(url)}"
            )


def _challenged(response: httpx2.Response) -> bool:
    """A 401, or a 403 asking for more scope: what only a login answers."""
    if response.status_code == 401:
        return True
    return extract_field_from_www_auth(response, "error") == "insufficient_scope"


def _loopback(host: str | None) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


def _origin(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.scheme}://{parsed.netloc}".lower()


def _why(exc: BaseException) -> str:
    """An error of the flow in one line of at most 200 characters, without its
    values' secrets: the SDK's messages name states and issuers, never tokens."""
    from skillchat.mcp.catalog import neutral

    text = str(exc) or type(exc).__name__
    if "State parameter mismatch" in text:
        text = "the redirect's state is not the login's"
    return neutral(" ".join(text.split()), 200)
