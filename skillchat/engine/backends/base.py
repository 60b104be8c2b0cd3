"""The backend contract: stream one chat completion as `Delta`s.

A backend is built from a `Target` (where the chat's requests go: skillchat/target.py)
and its `Timeouts`, never from the whole settings. It raises `ProviderError` (never
an SDK exception) with `retryable` set for 429/5xx/connection faults and
`retry_after` from the provider when given. The loop retries only while nothing of
the reply has been shown. `context_window` lets the context budget follow the
model's real limit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from skillchat.engine.events import Delta
from skillchat.errors import ProviderError

if TYPE_CHECKING:
    from skillchat.sections import ModelSettings
    from skillchat.target import Target


@dataclass(frozen=True)
class Timeouts:
    """What a backend needs of the user's settings beside its target: how long a
    silent server is waited for (`timeout`), and a whole reply (`reply_timeout`)."""

    timeout: float
    reply_timeout: float

    @classmethod
    def of(cls, model: ModelSettings) -> Timeouts:
        return cls(model.timeout, model.reply_timeout)


class Backend(Protocol):
    name: str

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        """Yield the reply's deltas; the last carries `usage` when the provider sends it."""
        ...

    def context_window(self) -> int | None:
        """The model's context window in tokens, when the server or litellm's model map
        says (engine/context_window.py); None when unknown. Looked up once, on first
        call, bounded in time: the loop asks when it first needs a budget."""
        ...


# What makes a chat's backends: select.make_backend, or the REPL's BackgroundBackend.
BackendFor = Callable[["Target", Timeouts], Backend]


class ReplyDeadline:
    """The overall deadline of one reply (`reply_timeout`), however steadily it drips.

    The read timeout of the HTTP client ends a silent stream, but a server that sends
    a byte (a keep-alive comment, a token) every few seconds would never trip it. A
    timer thread closes the response when the time is up; the read in progress then
    fails, and `error()` turns that failure into the deadline's own message.

        deadline = ReplyDeadline(seconds)
        response = ...; deadline.arm(response.close)
        try: ... read ...
        except SomeError: if deadline.expired: raise deadline.error()
        finally: deadline.cancel()
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._close: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def arm(self, close: Callable[[], None]) -> None:
        """What to call when time is up (at once if it already is)."""
        with self._lock:
            self._close = close
            late = self.expired
        if late:
            close()

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            close = self._close
        if close is not None:
            close()

    def cancel(self) -> None:
        self._timer.cancel()

    def error(self) -> ProviderError:
        return reply_timeout_error(self.seconds)


def reply_timeout_error(seconds: float) -> ProviderError:
    """The error of a reply stopped at its `reply_timeout`."""
    return ProviderError(
        f"the reply took longer than reply_timeout ({seconds:g}s): stopped, "
        "keeping what arrived (raise it with --reply-timeout)"
    )
