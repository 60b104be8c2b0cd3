"""The `openai` backend: the official SDK, for OpenAI and any OpenAI-compatible server.

Importing this module imports `openai` (~0.5 s), so only `select.make_backend`
imports it, when a model is about to be called. Its chunks are read by sse.py, as
the litellm backend's are; litellm's exceptions subclass the SDK's, so both map
them through provider_errors.py.

The SDK's own retries are off (`max_retries=0`): skillchat retries in
engine/retry.py, where it knows whether any of the reply was already shown. A
timeout is not retried: `timeout` is the whole wait for a silent server. The HTTP
client follows no redirect to another origin (origin.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import openai

from skillchat.config import Settings
from skillchat.engine.backends.base import describe_base, reply_timeout_error
from skillchat.engine.backends.origin import guarded_client
from skillchat.engine.backends.provider_errors import CUT, malformed, provider_error
from skillchat.engine.backends.sse import chunk_delta, is_empty, iter_data
from skillchat.engine.context_window import find_window
from skillchat.engine.events import Delta
from skillchat.engine.pricing import price
from skillchat.errors import MalformedChunk, ProviderError

OPENAI_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_KEY = "sk-no-key"


class OpenAIBackend:
    """Streams chat completions through `openai.OpenAI`."""

    name = "openai"

    def __init__(self, settings: Settings) -> None:
        key = os.environ.get("OPENAI_API_KEY", "")
        if not settings.api_base and (env_base := os.environ.get("OPENAI_BASE_URL")):
            # The SDK would send there anyway: say so, and price it as the unknown
            # server it is, not at OpenAI's prices.
            settings = replace(settings, api_base=env_base)
        # No key and no server of one's own was refused by the row's key check.
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
                delta = chunk_delta(payload)
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
            raise ProviderError(f"{CUT} by {self.where} (no finish_reason)", retryable=True)


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
