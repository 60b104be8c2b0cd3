"""The `openai` backend: the official SDK, for OpenAI and any OpenAI-compatible server.

Importing this module imports `openai` (~0.5 s), so only `select.make_backend`
imports it, when a model is about to be called. The helpers `chunk_to_delta` and
`provider_error` are shared with the litellm backend, whose chunks and exceptions
are shaped like (and subclass) the SDK's.

The SDK's own retries are off (`max_retries=0`): skillchat retries in
engine/retry.py, where it knows whether any of the reply was already shown. A
timeout is not retried: `timeout` is the whole wait for a silent server. The HTTP
client follows no redirect to another origin (origin.py).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai

from skillchat.config import Settings
from skillchat.engine.backends.base import reply_timeout_error
from skillchat.engine.backends.origin import CrossOriginRedirect, guarded_client
from skillchat.engine.backends.select import NO_KEY
from skillchat.engine.backends.sse import arguments_text, iter_data, payload_delta, text_field
from skillchat.engine.context_window import find_window
from skillchat.engine.events import Delta, ToolCallFragment, Usage
from skillchat.engine.messages import clean_text
from skillchat.engine.pricing import price
from skillchat.engine.retry import parse_retry_after
from skillchat.errors import MalformedChunk, ProviderError

OPENAI_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_KEY = "sk-no-key"
# OpenAI-style keys (sk-..., sk-proj-..., sk-ant-..., sk-or-...) echoed back by a provider.
_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{8,}")
_CUT = "the stream was cut off mid-reply"
_TRANSPORT = (openai.APIConnectionError, httpx.TransportError)


def describe_base(url: str) -> str:
    """A URL fit for an error message: any `user:password@` removed."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def _fragment(tc: Any) -> ToolCallFragment:
    function = getattr(tc, "function", None)
    index = getattr(tc, "index", None)
    call_id = getattr(tc, "id", None)
    name = getattr(function, "name", None)
    return ToolCallFragment(
        index=index if isinstance(index, int) and not isinstance(index, bool) else None,
        id=clean_text(str(call_id)) if call_id not in (None, "") else None,
        name=clean_text(str(name)) if name not in (None, "") else None,
        arguments=arguments_text(getattr(function, "arguments", None)),
    )


def chunk_to_delta(chunk: Any) -> Delta:
    """Reduce one chat.completion.chunk (SDK or litellm object) to a Delta.

    The SDKs build chunks without validating them, so every field is checked here:
    a wrong type raises MalformedChunk (one provider error, never a TypeError deep in
    the loop), and text is cleaned of lone surrogates before anything keeps it.
    """
    text, finish = None, None
    fragments: tuple[ToolCallFragment, ...] = ()
    choices = getattr(chunk, "choices", None)
    if choices is not None and not isinstance(choices, list | tuple):
        raise MalformedChunk(f"'choices' is {type(choices).__name__}, not a list")
    if choices:
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        if delta is not None:
            text = text_field(getattr(delta, "content", None), "content")
            calls = getattr(delta, "tool_calls", None) or ()
            if not isinstance(calls, list | tuple):
                raise MalformedChunk(f"'tool_calls' is {type(calls).__name__}, not a list")
            fragments = tuple(_fragment(tc) for tc in calls)
        finish = text_field(getattr(choice, "finish_reason", None), "finish_reason")
    usage = None
    if (u := getattr(chunk, "usage", None)) is not None:
        usage = Usage(
            prompt_tokens=_count(getattr(u, "prompt_tokens", 0)),
            completion_tokens=_count(getattr(u, "completion_tokens", 0)),
            total_tokens=_count(getattr(u, "total_tokens", 0)),
        )
    return Delta(text=text, tool_calls=fragments, finish_reason=finish, usage=usage)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def is_empty(delta: Delta) -> bool:
    """True for chunks that carry nothing (the role-only first chunk, keep-alives)."""
    return not (delta.text or delta.tool_calls or delta.finish_reason or delta.usage)


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
            return ProviderError(f"{_CUT} by {where} ({detail})", retryable=True)
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


class OpenAIBackend:
    """Streams chat completions through `openai.OpenAI`."""

    name = "openai"

    def __init__(self, settings: Settings) -> None:
        key = os.environ.get("OPENAI_API_KEY", "")
        if not settings.api_base and (env_base := os.environ.get("OPENAI_BASE_URL")):
            # The SDK would send there anyway: say so, and price it as the unknown
            # server it is, not at OpenAI's prices.
            settings = replace(settings, api_base=env_base)
        if not key and not settings.api_base:
            raise ProviderError(NO_KEY)
        self._key = key or PLACEHOLDER_KEY
        self.model = settings.model.removeprefix("openai/")
        self._user_model = settings.model
        self._timeout = settings.timeout
        self._reply_timeout = settings.reply_timeout
        # Each read waits at most this long: a silent server is cut at `timeout`, and
        # one silent past `reply_timeout` is noticed then (see _until).
        self._wait = httpx.Timeout(
            settings.timeout, read=min(settings.timeout, settings.reply_timeout)
        )
        # OpenAI's own API takes max_completion_tokens (its reasoning models refuse
        # max_tokens); other OpenAI-compatible servers know max_tokens.
        self._max_tokens: dict[str, int] = {}
        if settings.max_tokens is not None:
            key = "max_tokens" if settings.api_base else "max_completion_tokens"
            self._max_tokens = {key: settings.max_tokens}
        self.where = describe_base(settings.api_base or OPENAI_URL)
        # Prices are OpenAI's: a local server reusing a model name costs nothing known.
        self._priced = not settings.api_base
        self._api_base = settings.api_base
        self._window: tuple[int | None] | None = None  # looked up once
        # The SDK's HTTP client; the /props probe goes through it too (no TLS set-up
        # of its own, and the request reuses the probe's connection).
        self._http = guarded_client(settings.api_base)
        self._client = openai.OpenAI(
            base_url=settings.api_base or None,
            api_key=self._key,
            timeout=settings.timeout,
            max_retries=0,
            http_client=self._http,
        )

    def context_window(self) -> int | None:
        """The server's /props window, else the model map's (see Backend)."""
        if self._window is None:
            key = None if self._key == PLACEHOLDER_KEY else self._key
            self._window = (find_window(self.model, self._api_base, key, self._http),)
        return self._window[0]

    def _error(self, exc: BaseException, *, mid_stream: bool) -> ProviderError:
        return provider_error(
            exc,
            where=self.where,
            model=self._user_model,
            timeout=self._timeout,
            key_env="OPENAI_API_KEY",
            mid_stream=mid_stream,
            secrets=(self._key,),
        )

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        """Yield the reply's non-empty deltas; raise ProviderError on any failure.

        A body that ends without [DONE], or a connection dropped mid-body (httpx's
        errors), is reported as a cut reply unless the finish chunk already arrived.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            **self._max_tokens,
        }
        if tools:
            body["tools"] = tools
        yield from self._stream(body, time.monotonic() + self._reply_timeout)

    def _stream(self, body: dict[str, Any], deadline: float) -> Iterator[Delta]:
        # The client's documented generic `post`, not `chat.completions.create`: the
        # same request, headers, auth and status errors, without importing
        # `openai.resources` (~0.25 s at startup) or deep-copying the request through
        # the SDK's TypedDict transforms on every round; and the raw response, read
        # by sse.py, not a Pydantic object built per chunk.
        try:
            response = self._client.post(
                "/chat/completions",
                body=body,
                cast_to=httpx.Response,
                stream=True,
                options={"timeout": self._wait},
            )
        except openai.OpenAIError as exc:
            if time.monotonic() >= deadline:
                raise reply_timeout_error(self._reply_timeout) from exc
            raise self._error(exc, mid_stream=False) from exc
        finished = False
        chunks = _until(deadline, self._reply_timeout, response.iter_bytes())
        try:
            for data in iter_data(chunks):
                if data.startswith("[DONE]"):
                    break
                payload = json.loads(data)
                if isinstance(payload, dict) and payload.get("error"):
                    raise _stream_error(payload["error"], response.request)
                delta = payload_delta(payload)
                finished = finished or bool(delta.finish_reason)
                if delta.usage is not None and self._priced:
                    usage = replace(delta.usage, cost=price(self.model, delta.usage))
                    delta = replace(delta, usage=usage)
                if not is_empty(delta):
                    yield delta
        except (ValueError, MalformedChunk) as exc:  # a chunk that is not JSON, or not a chunk
            raise malformed(exc, self.where) from exc
        except (openai.OpenAIError, httpx.HTTPError) as exc:
            if time.monotonic() >= deadline:
                raise reply_timeout_error(self._reply_timeout) from exc
            if finished:
                return  # only the trailing usage chunk was lost
            raise self._error(exc, mid_stream=True) from exc
        finally:
            response.close()
        if not finished:
            raise ProviderError(f"{_CUT} by {self.where} (no finish_reason)", retryable=True)


def _until(deadline: float, seconds: float, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """`chunks`, ended at the reply's deadline however steadily they drip.

    Checked as each piece of the body arrives (keep-alive comments too), so no timer
    thread is needed: a read waits at most the read timeout, itself at most
    `reply_timeout` (`_wait`), and one that times out past the deadline is reported
    as the deadline (`_stream`).
    """
    for chunk in chunks:
        if time.monotonic() >= deadline:
            raise reply_timeout_error(seconds)
        yield chunk


def _stream_error(error: Any, request: httpx.Request) -> openai.APIError:
    """An `{"error": ...}` event mid-stream, raised as the SDK's own Stream raises it."""
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return openai.APIError(message=message, request=request, body=error)
