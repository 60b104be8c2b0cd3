"""The litellm backend's HTTP client follows no redirect to another origin.

(The native backends' client, wire.py, follows no redirect at all.) A chat request
carries the whole conversation (and, for OpenAI's API, the key in a header). The
SDKs under litellm follow redirects by default, and a 307 or 308 re-sends the
request *with its body*: one redirect from the configured server (a compromised
proxy, a hostile "OpenAI-compatible" endpoint, a typo'd domain) would hand the
conversation to a host the user never named. httpx drops the Authorization header
on such a hop, but not the body.

So the client checks each redirect before it is followed: one that stays on the
same origin (scheme, host and port: `/v1/chat/completions` → `/v1/chat/completions/`)
is followed as before; one to another origin raises `CrossOriginRedirect`, which the
backends report as one line (`provider_error`), not retried.
"""

from __future__ import annotations

from typing import Any

import httpx

from skillchat.errors import InternalSignal

_DEFAULT_PORTS = {"http": 80, "https": 443}


class CrossOriginRedirect(httpx.HTTPError, InternalSignal):
    """The server answered with a redirect to another origin; it was not followed.
    An httpx error, so the SDK carries it out of its response hook."""

    def __init__(self, target: str) -> None:
        super().__init__(f"redirect to {target} not followed")
        self.target = target


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port), the default port written out."""
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


def refuse_cross_origin(response: httpx.Response) -> None:
    """httpx response hook: raise before a redirect to another origin is followed."""
    if not response.has_redirect_location:
        return
    source = response.request.url
    target = source.join(response.headers["location"])
    if origin(target) != origin(source):
        scheme, host, port = origin(target)
        raise CrossOriginRedirect(f"{scheme}://{host}:{port}")


def guarded_client(base_url: str | None = None, **options: Any) -> httpx.Client:
    """An `openai.DefaultHttpxClient` (the SDK's own defaults) that refuses redirects
    to another origin; `options` go to it as they are.

    For a plain `http://` server (a local one, usually) no certificates are loaded:
    that costs 20-70 ms per client, and a client that only follows redirects within
    its origin never speaks TLS. Its context still verifies, against no authority, so
    TLS would fail rather than go unchecked; not when a proxy is configured (the
    proxy may be reached over TLS)."""
    import openai

    if base_url and base_url.lower().startswith("http://") and not _proxied():
        import ssl

        options.setdefault("verify", ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    return openai.DefaultHttpxClient(event_hooks={"response": [refuse_cross_origin]}, **options)


def _proxied() -> bool:
    """Whether the environment names a proxy for plain HTTP (httpx would use it)."""
    from urllib.request import getproxies

    proxies = getproxies()
    return bool(proxies.get("http") or proxies.get("all"))
