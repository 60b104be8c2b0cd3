"""Bounded retries of a model call, only while nothing of the reply was shown.

A retry after text reached the screen would show the user a reply twice (or two
different replies spliced together), so once a delta has been yielded any failure
propagates unchanged. Before that, retryable `ProviderError`s (429, 5xx,
connection, a stream cut before its first delta) are retried with
exponential backoff and jitter, honouring the provider's Retry-After: at most
MAX_DELAY for one wait and MAX_TOTAL_WAIT for all of them, so a Retry-After of a
day ends the command with a message instead of hanging it.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any, Protocol

from skillchat.engine.events import Delta
from skillchat.errors import ProviderError

BASE_DELAY = 0.5
MAX_DELAY = 60.0
# All the waiting one request may do across its retries. A provider asking for more
# (a Retry-After of an hour, a day) is not waited for: the user is told at once.
MAX_TOTAL_WAIT = 120.0


class Headers(Protocol):
    """An answer's headers, looked up by name case-insensitively (httpx.Headers,
    http.client's HTTPMessage; a dict of lowercase names)."""

    def get(self, name: str, /) -> Any: ...


def parse_retry_after(headers: Headers | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    """The wait before retry number `attempt` (1-based), capped at MAX_DELAY.

    The provider's Retry-After wins when given; otherwise 0.5 s, 1 s, 2 s, ...
    with "equal jitter" so clients that failed together do not retry together.
    """
    if retry_after is not None:
        return min(retry_after, MAX_DELAY)
    ceiling = min(BASE_DELAY * 2.0 ** (attempt - 1), MAX_DELAY)
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def stream_with_retries(
    open_stream: Callable[[], Iterator[Delta]],
    *,
    max_retries: int,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[int, float, ProviderError], None] | None = None,
) -> Generator[Delta, None, None]:
    """Yield the deltas of `open_stream()`, reopening it after a retryable failure.

    `on_retry(attempt, delay, error)` is called before each wait (to tell the user).
    When retries run out, the last error is raised with "; gave up after N retries"
    appended, so the one-line message says that skillchat already tried.
    """
    attempt = 0
    waited = 0.0
    while True:
        shown = False
        try:
            for delta in open_stream():
                shown = True
                yield delta
            return
        except ProviderError as err:
            if shown or not err.retryable:
                raise
            if attempt >= max_retries:
                if attempt == 0:
                    raise
                plural = "retry" if attempt == 1 else "retries"
                raise ProviderError(
                    f"{err}; gave up after {attempt} {plural}",
                    retryable=True,
                    retry_after=err.retry_after,
                ) from err
            if err.retry_after is not None and err.retry_after > MAX_DELAY:
                raise ProviderError(
                    f"{err}; it asks to wait {err.retry_after:,.0f}s (Retry-After), more than "
                    f"skillchat waits ({MAX_DELAY:g}s): try again later",
                    retry_after=err.retry_after,
                ) from err
            delay = backoff_delay(attempt + 1, err.retry_after)
            if waited + delay > MAX_TOTAL_WAIT:
                raise ProviderError(
                    f"{err}; gave up after {attempt} retries and {waited:.0f}s of waiting",
                    retryable=True,
                    retry_after=err.retry_after,
                ) from err
            attempt += 1
            waited += delay
            if on_retry is not None:
                on_retry(attempt, delay, err)
            sleep(delay)
