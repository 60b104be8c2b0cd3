"""A provider's failure as one actionable, key-free line, however it arrived.

Two ways in, one wording (timeouts, refused connections, cut streams, HTML pages
from the wrong server, 401/403/404/429/5xx, and what is retryable):

- `http_error`, `stream_error` and `wire_error`, for the backends that speak HTTP
  themselves over wire.py: an answer's status, headers and bounded body, an
  `{"error": ...}` event mid-stream, a connection's `WireError`.
- `provider_error`, for the exceptions litellm raises (they subclass the `openai`
  SDK's). It imports `openai` and `httpx` when called, which litellm has loaded;
  importing this module imports no SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from skillchat.engine.retry import Headers, parse_retry_after
from skillchat.errors import MalformedChunk, ProviderError, WireError

# OpenAI-style keys (sk-..., sk-proj-..., sk-ant-..., sk-or-...) echoed back by a provider.
_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{8,}")
CUT = "the stream was cut off mid-reply"
# An error answer's body is read this far: its message is at the start, and a
# hostile server's endless body is not waited for.
ERROR_BODY_LIMIT = 8192


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
    import httpx
    import openai

    from skillchat.engine.backends.origin import CrossOriginRedirect

    detail = _clean(_detail(exc), secrets)
    links = _chain(exc)
    redirect = next((e for e in links if isinstance(e, CrossOriginRedirect)), None)
    if redirect is not None:
        return _redirected(where, redirect.target)
    if any(isinstance(e, openai.APITimeoutError | httpx.TimeoutException) for e in links):
        return _timed_out(where, timeout)
    transport = [
        e for e in links if isinstance(e, openai.APIConnectionError | httpx.TransportError)
    ]
    if transport:
        detail = _clean(str(transport[-1]), secrets)
        refused = "connection refused" in detail.lower()
        return _unreachable(where, detail, mid_stream=mid_stream, refused=refused)
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    return _answered(
        status if isinstance(status, int) else None,
        detail,
        getattr(exc, "code", None) or "",
        headers,
        where=where,
        model=model,
        key_env=key_env,
    )


def http_error(
    status: int,
    headers: Headers,
    body: bytes,
    *,
    where: str,
    model: str,
    key_env: str,
    secrets: Iterable[str] = (),
) -> ProviderError:
    """An error answer (`status`, its headers, the first `ERROR_BODY_LIMIT` bytes of
    its body) as one line. The provider's message is read from the body as the
    `openai` SDK reads it (`{"error": {"message", "code"}}`), so the line is the one
    the SDK's exception gave."""
    text = body.decode("utf-8", "replace").strip()
    error: Any = text
    said = text or f"Error code: {status}"
    try:
        parsed = json.loads(text)
    except ValueError:
        pass
    else:
        error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
        said = f"Error code: {status} - {parsed}"
    message = error.get("message") if isinstance(error, dict) else None
    detail = _clean(message if isinstance(message, str) else said, secrets)
    code = (error.get("code") if isinstance(error, dict) else None) or ""
    return _answered(status, detail, code, headers, where=where, model=model, key_env=key_env)


def stream_error(
    error: Any, *, where: str, model: str, key_env: str, secrets: Iterable[str] = ()
) -> ProviderError:
    """An `{"error": ...}` event in a stream that began with 200 (no status of its own)."""
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    detail = _clean(message, secrets)
    return _answered(None, detail, "", None, where=where, model=model, key_env=key_env)


def wire_error(exc: WireError, *, where: str, timeout: float, mid_stream: bool) -> ProviderError:
    """A connection's failure (engine/backends/wire.py) as one line."""
    if exc.redirect is not None:
        return _redirected(where, exc.redirect)
    if exc.timed_out:
        return _timed_out(where, timeout)
    return _unreachable(where, _clean(str(exc), ()), mid_stream=mid_stream, refused=exc.refused)


def _redirected(where: str, target: str) -> ProviderError:
    if target.startswith("/"):
        return ProviderError(
            f"the server at {where} redirected to {target}; not followed (check --api-base: "
            "the chat's requests go only where it says)"
        )
    return ProviderError(
        f"the server at {where} redirected to another origin ({target}); "
        "not followed (the conversation was not sent there)"
    )


def _timed_out(where: str, timeout: float) -> ProviderError:
    # Not retried: `timeout` is how long the user waits for a silent server, and
    # each retry would wait it again (60 s became four minutes with 3 retries).
    return ProviderError(
        f"timed out after {timeout:g}s waiting for {where} (no answer; "
        "`timeout` in the config sets how long to wait)"
    )


def _unreachable(where: str, detail: str, *, mid_stream: bool, refused: bool) -> ProviderError:
    """A connection that could not be made, or broke mid-reply."""
    if mid_stream:
        return ProviderError(f"{CUT} by {where} ({detail})", retryable=True)
    if refused:
        # On this machine a refusal means nothing listens: retrying only delays
        # the answer (a remote one may be a restart or a balancer).
        return ProviderError(
            f"cannot connect to {where}: connection refused — is the server running?",
            retryable=not _loopback(where),
        )
    return ProviderError(f"cannot connect to {where}: {detail}", retryable=True)


def _answered(
    status: int | None,
    detail: str,
    code: Any,
    headers: Headers | None,
    *,
    where: str,
    model: str,
    key_env: str,
) -> ProviderError:
    """The line for what the server said: an error status (None for an error that
    came without one), the provider's message, its error code, the headers."""
    if _is_html(detail):  # a web server or a proxy's page: retrying gets the same page
        answered = f" (HTTP {status})" if status is not None else ""
        return ProviderError(
            f"{where} answered with a web page{answered}, not the OpenAI API: is this an "
            "OpenAI-compatible server? (check --api-base; it usually ends in /v1)"
        )
    if status is None:
        if "api_key" in detail or "api key" in detail.lower():
            return ProviderError(f"no API key for {where}: set {key_env}")
        return ProviderError(f"the provider failed at {where}: {detail}")
    retry_after = parse_retry_after(headers)
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
