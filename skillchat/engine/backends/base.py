"""The backend contract: stream one chat completion as `Delta`s.

A backend raises `ProviderError` (never an SDK exception) with `retryable` set
for 429/5xx/connection faults and `retry_after` from the provider when given.
The loop retries only while nothing of the reply has been shown.
`context_window` lets the context budget follow the model's real limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from skillchat.engine.events import Delta


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
