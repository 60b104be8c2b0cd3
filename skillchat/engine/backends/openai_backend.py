"""The `openai` backend: chat completions over wire.py, for OpenAI and any
OpenAI-compatible server (and, as gemini_backend.py, Google's endpoint).

No SDK: importing `openai` cost ~0.5 s of every `ask` before its request, for one
POST whose body skillchat builds anyway and whose answer sse.py reads. The request
is the one the SDK sent: `POST {base}/chat/completions`, the same JSON body,
`Authorization: Bearer KEY` (and `OpenAI-Organization` / `OpenAI-Project` from
`OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`, as the SDK read them). An error status is
read (a few KiB at most) and worded by provider_errors.py exactly as the SDK's
exception was; a connection's failure (`WireError`) too.

One `Wire` per backend, so one kept-alive connection for a chat's every request
and tool round, the `/props` probe included. No retries here: skillchat retries in
engine/retry.py, where it knows whether any of the reply was already shown. A
timeout is not retried: `timeout` is the whole wait for a silent server.

Requests to OpenAI's own API (no `api_base`) carry `prompt_cache_key`, the same for
every request of a chat, so OpenAI routes them to the machine that cached the
chat's prefix; other servers may refuse a field they do not know.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from skillchat.engine.backends.base import Timeouts, reply_timeout_error
from skillchat.engine.backends.provider_errors import (
    CUT,
    ERROR_BODY_LIMIT,
    http_error,
    malformed,
    stream_error,
    wire_error,
)
from skillchat.engine.backends.sse import chunk_delta, is_empty, iter_data
from skillchat.engine.backends.wire import Wire, WireResponse
from skillchat.engine.context_window import find_window
from skillchat.engine.events import Delta
from skillchat.engine.pricing import price
from skillchat.errors import MalformedChunk, ProviderError, WireError
from skillchat.target import Target

OPENAI_URL = "https://api.openai.com/v1"
# Sent without a key, as the SDK (which refused to start without one) was given:
# local servers ignore it. litellm's OpenAI client gets it too.
PLACEHOLDER_KEY = "sk-no-key"


def describe_base(url: str) -> str:
    """A URL fit for an error message: any `user:password@` removed."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def cache_key(messages: list[dict[str, Any]]) -> str:
    """The chat's `prompt_cache_key`: a hash of its start (the first user message),
    the same for every request and turn of the chat, resumed or not."""
    first = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    digest = hashlib.sha256(json.dumps(first, sort_keys=True).encode()).hexdigest()
    return f"skillchat-{digest[:32]}"


def _chat_message(message: dict[str, Any]) -> dict[str, Any]:
    """`message` as chat completions take it: the thinking blocks an Anthropic model's
    reply keeps (anthropic_backend.py) left out, for a chat moved to this server."""
    if "thinking_blocks" not in message:
        return message
    return {k: v for k, v in message.items() if k != "thinking_blocks"}


class OpenAIBackend:
    """Streams chat completions from `target`'s server (OpenAI's without one)."""

    name = "openai"
    url = OPENAI_URL  # the provider's own API, when the target names no server
    key_env = "OPENAI_API_KEY"
    prefix = "openai/"  # taken off the model id before it is sent
    base_env: str | None = "OPENAI_BASE_URL"  # where the SDK sent without an api_base
    own_fields = True  # OpenAI's own API: max_completion_tokens, prompt_cache_key

    def __init__(self, target: Target, timeouts: Timeouts) -> None:
        api_base = target.api_base
        if not api_base and self.base_env:
            # Where the SDK sent, and still does for a user who set it: said, and
            # priced as the unknown server it is, not at OpenAI's prices.
            api_base = os.environ.get(self.base_env) or None
        self._key = os.environ.get(self.key_env, "")
        self._user_model = target.model
        self.model = target.model.removeprefix(self.prefix)
        self._timeout = timeouts.timeout
        self._reply_timeout = timeouts.reply_timeout
        # OpenAI's own API takes max_completion_tokens (its reasoning models refuse
        # max_tokens); other OpenAI-compatible servers know max_tokens.
        self._extra: dict[str, Any] = {}
        own = self.own_fields and not api_base
        if target.max_tokens is not None:
            self._extra["max_completion_tokens" if own else "max_tokens"] = target.max_tokens
        base = api_base or self.url
        self.where = describe_base(base)
        # Prices are the provider's: a server of one's own reusing a model name
        # costs nothing known.
        self._priced = not api_base
        self._cached = own
        self._api_base = api_base
        self._path = urlsplit(base).path.rstrip("/") + "/chat/completions"
        origin = urlsplit(base)._replace(path="", query="", fragment="")
        # Each read waits at most this long: a silent server is cut at `timeout`,
        # and one silent past `reply_timeout` is noticed then (see _until).
        wait = min(timeouts.timeout, timeouts.reply_timeout)
        self._wire = Wire(urlunsplit(origin), timeout=timeouts.timeout, read_timeout=wait)
        self._headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self._key or PLACEHOLDER_KEY}",
        }
        if self.own_fields:
            for header, env in (("OpenAI-Organization", "OPENAI_ORG_ID"),
                                ("OpenAI-Project", "OPENAI_PROJECT_ID")):  # fmt: skip
                if value := os.environ.get(env):
                    self._headers[header] = value
        self._window: tuple[int | None] | None = None  # looked up once

    def context_window(self) -> int | None:
        """The server's /props window (a server that can answer it), else the model
        map's (see Backend)."""
        if self._window is None:
            self._window = (
                find_window(self.priced_as, self._api_base, self._key or None, self._wire),
            )
        return self._window[0]

    @property
    def priced_as(self) -> str:
        """The model's name in litellm's model map (prices and windows)."""
        return self.model

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        """Yield the reply's non-empty deltas; raise ProviderError on any failure.

        A body that ends without [DONE], or a connection dropped mid-body, is
        reported as a cut reply unless the finish chunk already arrived.
        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_chat_message(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            **self._extra,
        }
        if tools:
            body["tools"] = tools
        if self._cached:
            body["prompt_cache_key"] = cache_key(messages)
        yield from self._stream(body, time.monotonic() + self._reply_timeout)

    def _fail(self, exc: WireError, deadline: float, *, mid_stream: bool) -> ProviderError:
        if time.monotonic() >= deadline:
            return reply_timeout_error(self._reply_timeout)
        return wire_error(exc, where=self.where, timeout=self._timeout, mid_stream=mid_stream)

    def _stream(self, body: dict[str, Any], deadline: float) -> Iterator[Delta]:
        try:
            response = self._wire.post(self._path, body, self._headers)
        except WireError as exc:
            raise self._fail(exc, deadline, mid_stream=False) from exc
        try:
            if response.status >= 400:
                raise self._status_error(response)
            yield from self._deltas(response, deadline)
        finally:
            response.close()

    def _status_error(self, response: WireResponse) -> ProviderError:
        try:
            said = response.read(ERROR_BODY_LIMIT)
        except WireError:
            said = b""
        return http_error(
            response.status,
            response.headers,
            said,
            where=self.where,
            model=self._user_model,
            key_env=self.key_env,
            secrets=(self._key,),
        )

    def _deltas(self, response: WireResponse, deadline: float) -> Iterator[Delta]:
        finished = False
        chunks = _until(deadline, self._reply_timeout, response.iter_bytes())
        try:
            for data in iter_data(chunks):
                if data.startswith("[DONE]"):
                    break
                payload = json.loads(data)
                if isinstance(payload, dict) and payload.get("error"):
                    raise stream_error(
                        payload["error"],
                        where=self.where,
                        model=self._user_model,
                        key_env=self.key_env,
                        secrets=(self._key,),
                    )
                delta = chunk_delta(payload)
                finished = finished or bool(delta.finish_reason)
                if delta.usage is not None and self._priced:
                    usage = replace(delta.usage, cost=price(self.priced_as, delta.usage))
                    delta = replace(delta, usage=usage)
                if not is_empty(delta):
                    yield delta
        except (ValueError, MalformedChunk) as exc:  # a chunk that is not JSON, or not a chunk
            raise malformed(exc, self.where) from exc
        except WireError as exc:
            if finished and time.monotonic() < deadline:
                return  # only the trailing usage chunk was lost
            raise self._fail(exc, deadline, mid_stream=True) from exc
        if not finished:
            raise ProviderError(f"{CUT} by {self.where} (no finish_reason)", retryable=True)


def _until(deadline: float, seconds: float, chunks: Iterator[bytes]) -> Iterator[bytes]:
    """`chunks`, ended at the reply's deadline however steadily they drip.

    Checked as each piece of the body arrives (keep-alive comments too), so no timer
    thread is needed: a read waits at most the read timeout, itself at most
    `reply_timeout`, and one that times out past the deadline is reported as the
    deadline (`_fail`).
    """
    for chunk in chunks:
        if time.monotonic() >= deadline:
            raise reply_timeout_error(seconds)
        yield chunk
