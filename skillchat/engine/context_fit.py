"""Keeping every request within the context budget (`context_max_chars`, or the
model's window: engine/context_window.py), however long the chat and however
much the model reads in one round.

In order, each request:

1. Tool results the model has already seen are elided, oldest first (skill bodies and
   files: the bulk of a skills chat, and the one part it can fetch again; the ledger
   forgets them so it gets them afresh).
2. If the turn in progress alone does not fit (many files read at once), its largest
   results are replaced by a note telling the model to read less at once.
3. If the whole chat still does not fit, the oldest turns are left out of the request,
   cut only before a user message so no tool result is sent without its call. They
   stay in the chat and the store.

The user is told once for each step, and again only when step 3 leaves out more.
Before step 3, the loop compacts the chat when `auto_compact` is on (older turns
become the model's summary: engine/compaction.py), so step 3 is the last resort.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillchat.engine.messages import (
    SizeCache,
    message_size,
    over_budget_results,
    oversized_round,
    recent_turns,
)
from skillchat.tools.context import ContextLedger

ELIDED = "[elided to save context: call the tool again if you need this]"
TOO_MUCH = (
    "[not sent: this round's results do not fit in the context together; "
    "read fewer or smaller files at once]"
)


class ContextFit:
    """One chat's context budget: what was elided, what the last request left out."""

    def __init__(self, ledger: ContextLedger, notice: Callable[[str], None]) -> None:
        self.ledger = ledger
        self.notice = notice
        self.sizes = SizeCache()
        self.left_out = 0  # messages the last request left out

    def elide(self, message: dict[str, Any], stub: str = ELIDED) -> None:
        """Take a tool result's content out of the context (it is served again if asked)."""
        message["content"] = stub
        self.ledger.forget(message["tool_call_id"])

    def fit(self, system: str | None, messages: list[dict[str, Any]], budget: int) -> None:
        """Steps 1 and 2: shrink tool results in `messages` (in place) until they fit
        in `budget` with the system prompt."""
        room = budget - _system_size(system)
        stale = over_budget_results(messages, room, ELIDED, self.sizes)
        for message in stale:
            self.elide(message)
        if stale:
            self.notice(
                f"the chat passed its context budget ({budget:,} characters): {len(stale)} "
                "earlier tool result(s) taken out of the context; the model can fetch them again"
            )
        unsent = oversized_round(messages, room, TOO_MUCH, self.sizes)
        for message in unsent:
            self.elide(message, TOO_MUCH)
        if unsent:
            self.notice(
                f"the model read more in one round than the context budget ({budget:,} characters) "
                f"holds: {len(unsent)} result{'s' if len(unsent) != 1 else ''} not sent; "
                "it was told to read less at once"
            )

    def fits(self, system: str | None, messages: list[dict[str, Any]], budget: int) -> bool:
        """True when the request would carry every message (step 3 leaves none out):
        when it would not, compaction (engine/compaction.py) can do better."""
        room = budget - _system_size(system)
        return len(recent_turns(messages, room, self.sizes)) == len(messages)

    def outgoing(
        self, system: str | None, messages: list[dict[str, Any]], budget: int
    ) -> list[dict[str, Any]]:
        """Step 3: the request's messages, the system prompt first."""
        head = [{"role": "system", "content": system}] if system else []
        messages = answered(messages)
        sent = recent_turns(messages, budget - _system_size(system), self.sizes)
        left_out = len(messages) - len(sent)
        if left_out > self.left_out:
            self.notice(
                f"the chat is longer than the context budget ({budget:,} characters): its "
                f"{left_out} oldest message{'s are' if left_out != 1 else ' is'} left out of the "
                "request (still in the chat)"
            )
        self.left_out = left_out
        return head + sent


def answered(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` without a user message that the next one follows directly: a turn
    that failed (a provider error, a timeout) left it unanswered, and sent again with
    every later message it would pile up (two, three questions in a row, the model
    answering old ones). It stays in the chat and its saved file; `/retry` sends it
    again on purpose."""
    return [
        m
        for i, m in enumerate(messages)
        if not (
            m.get("role") == "user"
            and i + 1 < len(messages)
            and messages[i + 1].get("role") == "user"
        )
    ]


def _system_size(system: str | None) -> int:
    return message_size({"role": "system", "content": system}) if system else 0
