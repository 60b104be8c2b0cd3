"""A provider's failure as one actionable, key-free line: `provider_error` and `malformed`.

Both backends raise through here: the litellm backend's exceptions subclass the
`openai` SDK's, so one mapping serves both (timeouts, refused connections, cut
streams, HTML pages from the wrong server, 401/403/404/429/5xx, and what is
retryable). Importing it imports `openai`, as the backends do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpx
import openai

from skillchat.engine.backends.origin import CrossOriginRedirect
from skillchat.engine.retry import parse_retry_after
from skillchat.errors import MalformedChunk, ProviderError

# OpenAI-style keys (sk-..., sk-proj-..., sk-ant-..., sk-or-...) echoed back by a provider.
_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{8,}")
CUT = "the stream was cut off mid-reply"
_TRANSPORT = (openai.APIConnectionError, httpx.TransportError)


def _clean(text: str, secrets: Iterable[str]) -> str:
    """One line of provider text, secrets and key-like tokens masked, clipped."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _KEY_PATTERN.sub("sk-***", text)
    text = " ".join(text.split())
    return text[:200] + ("..." if len(text) > 200 else "")


def _detail(exc: BaseException) -> str:
    """The provider's own message, without the SDK's or litellm's wrapping."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        said = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(said, str):
            return said
    message = str(getattr(exc, "message", None) or exc)
    # litellm: "litellm.RateLimitError: RateLimitError: OpenAIException - <message>"
    return re.sub(r"^(litellm\.\w+: )?(\w+Error: )?(\w+Exception - )?", "", message)


def _is_html(detail: str) -> bool:
    """An error body that is an HTML page, not an API's JSON error."""
    start = detail.lstrip()[:15].lower()
    return start.startswith("<!doctype html") or start.startswith("<html")


def _loopback(where: str) -> bool:
    """`where` is a URL on this machine (localhost, 127.x, ::1)."""
    host = urlsplit(where).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from (litellm wraps transport errors
    in status errors, e.g. a refused connection in an InternalServerError 500)."""
    links: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in links:
        links.append(seen)
        seen = seen.__cause__ or seen.__context__
    return links


def provider_error(
    exc: BaseException,
    *,
    where: str,
    model: str,
    timeout: float,
    key_env: str,
    mid_stream: bool,
    secrets: Iterable[str] = (),
) -> ProviderError:
    """Map an SDK (or litellm) exception to one actionable, key-free line.

    `mid_stream` says the response had started, so a dropped connection is a cut
    reply rather than a server that cannot be reached.
    """
    detail = _clean(_detail(exc), secrets)
    links = _chain(exc)
    redirect = next((e for e in links if isinstance(e, CrossOriginRedirect)), None)
    if redirect is not None:
        return ProviderError(
            f"the server at {where} redirected to another origin ({redirect.target}); "
            "not followed (the conversation was not sent there)"
        )
    if any(isinstance(e, openai.APITimeoutError | httpx.TimeoutException) for e in links):
        # Not retried: `timeout` is how long the user waits for a silent server, and
        # each retry would wait it again (60 s became four minutes with 3 retries).
        return ProviderError(
            f"timed out after {timeout:g}s waiting for {where} (no answer; "
            "`timeout` in the config sets how long to wait)"
        )
    transport = [e for e in links if isinstance(e, _TRANSPORT)]
    if transport:
        detail = _clean(str(transport[-1]), secrets)
        if mid_stream:
            return ProviderError(f"{CUT} by {where} ({detail})", retryable=True)
        if "connection refused" in detail.lower():
            # On this machine a refusal means nothing listens: retrying only delays
            # the answer (a remote one may be a restart or a balancer).
            return ProviderError(
                f"cannot connect to {where}: connection refused — is the server running?",
                retryable=not _loopback(where),
            )
        return ProviderError(f"cannot connect to {where}: {detail}", retryable=True)
    status = getattr(exc, "status_code", None)
    if _is_html(detail):  # a web server or a proxy's page: retrying gets the same page
        answered = f" (HTTP {status})" if isinstance(status, int) else ""
        return ProviderError(
            f"{where} answered with a web page{answered}, not the OpenAI API: is this an "
            "OpenAI-compatible server? (check --api-base; it usually ends in /v1)"
        )
    if not isinstance(status, int):
        if "api_key" in detail or "api key" in detail.lower():
            return ProviderError(f"no API key for {where}: set {key_env}")
        return ProviderError(f"the provider failed at {where}: {detail}")
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    retry_after = parse_retry_after(headers)
    code = getattr(exc, "code", None) or ""
    if status == 401:
        return ProviderError(f"authentication failed (401) at {where}: check {key_env}")
    if status == 403:
        return ProviderError(f"permission denied (403) at {where}: {detail}")
    if status == 404:
        if code == "model_not_found" or "model" in detail.lower():
            return ProviderError(f"model '{model}' not found (404) at {where}: check --model")
        return ProviderError(
            f"not found (404) at {where}: check --api-base (it usually ends in /v1)"
        )
    if status == 429:
        # Out of credit, not busy: retrying cannot help. litellm drops the code,
        # so OpenAI's message is matched too.
        if code == "insufficient_quota" or "current quota" in detail.lower():
            return ProviderError(f"quota exceeded (429) at {where}: {detail}")
        return ProviderError(
            f"rate limited (429) by {where}", retryable=True, retry_after=retry_after
        )
    if status >= 500:
        return ProviderError(
            f"server error ({status}) from {where}: {detail}",
            retryable=True,
            retry_after=retry_after,
        )
    if status in (408, 409):
        return ProviderError(
            f"request failed ({status}) at {where}: {detail}",
            retryable=True,
            retry_after=retry_after,
        )
    return ProviderError(f"the request was rejected ({status}) by {where}: {detail}")


def malformed(exc: ValueError | MalformedChunk, where: str) -> ProviderError:
    """The one-line error for a reply the server garbled (not retried: it would be
    shown twice if any of it was)."""
    what = f"a chunk that is not JSON ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else exc
    return ProviderError(f"a malformed reply from {where}: {_clean(str(what), ())}")
