"""The `litellm` backend: every provider that is not OpenAI-compatible.

Importing litellm costs seconds and, left alone, fetches a price map from the
internet and prints banners; this module is imported only by
`select.make_backend` when the litellm backend is chosen, and quietens litellm
before and right after importing it.

litellm's exceptions subclass the openai SDK's, so the openai backend's
`provider_error` maps them. Two litellm habits need undoing here: a failure
mid-stream arrives wrapped in `MidStreamFallbackError`, and a stream that ends
without a finish_reason (a cut connection) gets a made-up "stop" finish.
Its OpenAI SDK clients get skillchat's HTTP client, which follows no redirect to
another origin (origin.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import

import litellm  # after the environment set-up above
from litellm.exceptions import MidStreamFallbackError

from skillchat.backend_table import NO_KEY
from skillchat.engine.backends.base import ReplyDeadline, Timeouts
from skillchat.engine.backends.openai_backend import PLACEHOLDER_KEY, describe_base
from skillchat.engine.backends.origin import guarded_client
from skillchat.engine.backends.provider_errors import malformed, provider_error
from skillchat.engine.backends.sse import chunk_delta, is_empty
from skillchat.engine.context_window import find_window
from skillchat.engine.events import Delta, Usage
from skillchat.errors import MalformedChunk, ProviderError
from skillchat.target import Target


def _quieten() -> None:
    """Nothing litellm prints may reach the user's terminal in a normal run."""
    litellm.suppress_debug_info = True
    litellm.set_verbose = False
    litellm.telemetry = False
    litellm.disable_streaming_logging = True  # no per-chunk logging thread work
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


_quieten()
# The HTTP client of every OpenAI SDK client litellm builds (the OpenAI-compatible
# providers, any api_base): no redirect to another origin is followed (origin.py).
litellm.client_session = guarded_client()


# Providers whose streams litellm reads as OpenAI chunks, where an invented finish is
# known to mean a cut (checked against the test server). For the others litellm's
# finish bookkeeping differs by provider, so their streams are taken as they come.
_OPENAI_WIRE = {"openai", "custom_openai", "openrouter", "mistral"}


def _provider(model: str, api_base: str | None) -> str | None:
    """The provider litellm will call for `model` (`claude-x` -> anthropic), if it knows."""
    try:
        return litellm.get_llm_provider(model, api_base=api_base)[1]
    except Exception:  # litellm raises BadRequestError for names it cannot place
        return None


def cost(model: str, usage: Usage) -> float | None:
    """The reply's price in USD from litellm's local price map; None for unknown models."""
    try:
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
    except Exception:  # litellm raises assorted types for "no price known"
        return None
    return prompt + completion


class LiteLLMBackend:
    """Streams chat completions through `litellm.completion`."""

    name = "litellm"

    def __init__(self, target: Target, timeouts: Timeouts) -> None:
        self.model = target.model
        self._api_base = target.api_base or None
        self._timeout = timeouts.timeout
        self._reply_timeout = timeouts.reply_timeout
        self._max_tokens = target.max_tokens
        provider = _provider(target.model, self._api_base)
        if provider is None and self._api_base:
            # A server's own id (`Qwen/Qwen2.5-7B-Instruct` on vLLM or LM Studio): sent
            # as is to that OpenAI-compatible server, not placed by litellm's guessing.
            self.model, provider = f"openai/{target.model}", "openai"
        if provider is None:
            raise ProviderError(
                f"litellm does not know which provider serves '{target.model}': write it as "
                "provider/model (e.g. anthropic/claude-sonnet-4-5, ollama_chat/llama3)"
            )
        self._detect_cuts = (
            provider in _OPENAI_WIRE or provider in litellm.openai_compatible_providers
        )
        if self._api_base:
            self.where = describe_base(self._api_base)
        else:
            self.where = f"the {provider} API"
        self._key_env = f"{provider.upper()}_API_KEY"
        # An OpenAI-compatible local server needs no key, but the SDK under litellm does;
        # OpenAI itself does, and saying so beats litellm's error after the fact.
        self._api_key = None
        if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
            if not self._api_base:
                raise ProviderError(NO_KEY)
            self._api_key = PLACEHOLDER_KEY
        self._window: tuple[int | None] | None = None  # looked up once

    def context_window(self) -> int | None:
        """The server's /props window (with an api_base), else the model map's."""
        if self._window is None:
            key = os.environ.get(self._key_env) if self._api_base else None
            self._window = (find_window(self.model, self._api_base, key),)
        return self._window[0]

    def _error(self, exc: BaseException, *, mid_stream: bool) -> ProviderError:
        original = getattr(exc, "original_exception", None)
        if isinstance(exc, MidStreamFallbackError) and original is not None:
            exc = original
        secrets = [os.environ.get(self._key_env, ""), self._api_key or ""]
        return provider_error(
            exc,
            where=self.where,
            model=self.model,
            timeout=self._timeout,
            key_env=self._key_env,
            mid_stream=mid_stream,
            secrets=secrets,
        )

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        """Yield the reply's non-empty deltas; raise ProviderError on any failure."""
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        if self._api_base:
            extra["api_base"] = self._api_base
        if self._api_key:
            extra["api_key"] = self._api_key
        if self._max_tokens is not None:
            extra["max_tokens"] = self._max_tokens  # litellm maps it for each provider
        deadline = ReplyDeadline(self._reply_timeout)
        try:
            yield from self._stream(messages, extra, deadline)
        finally:
            deadline.cancel()

    def _stream(
        self, messages: list[dict[str, Any]], extra: dict[str, Any], deadline: ReplyDeadline
    ) -> Iterator[Delta]:
        try:
            chunks = litellm.completion(
                model=self.model,
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                timeout=self._timeout,
                num_retries=0,
                max_retries=0,
                **extra,
            )
        except Exception as exc:
            raise self._error(exc, mid_stream=False) from exc
        deadline.arm(lambda: _close(chunks))
        try:
            for chunk in chunks:
                delta = chunk_delta(chunk)
                if delta.finish_reason and self._detect_cuts and _made_up_finish(chunks):
                    raise ProviderError(
                        f"the stream was cut off mid-reply by {self.where} (no finish_reason)",
                        retryable=True,
                    )
                if delta.usage is not None:
                    priced = replace(delta.usage, cost=cost(self.model, delta.usage))
                    delta = replace(delta, usage=priced)
                if not is_empty(delta):
                    yield delta
        except ProviderError:
            raise
        except MalformedChunk as exc:
            raise malformed(exc, self.where) from exc
        except Exception as exc:
            if deadline.expired:
                raise deadline.error() from exc
            raise self._error(exc, mid_stream=True) from exc
        finally:
            _close(chunks)


def _made_up_finish(stream: Any) -> bool:
    """True when litellm invented the finish_reason because the provider never sent one.

    `CustomStreamWrapper` records the provider's finish in `received_finish_reason`
    (or `intermittent_finish_reason`) and, at end of stream without one, emits "stop".
    """
    return (
        hasattr(stream, "received_finish_reason")
        and stream.received_finish_reason is None
        and getattr(stream, "intermittent_finish_reason", None) is None
    )


def _close(stream: Any) -> None:
    """Release the HTTP response of an abandoned stream (the wrapper has no sync close)."""
    close = getattr(getattr(stream, "completion_stream", None), "close", None)
    if callable(close):
        close()
