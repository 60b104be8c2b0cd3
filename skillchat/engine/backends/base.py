"""The backend contract: stream one chat completion as `Delta`s.

A backend raises `ProviderError` (never an SDK exception) with `retryable` set
for 429/5xx/connection faults and `retry_after` from the provider when given.
The loop retries only while nothing of the reply has been shown.
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
