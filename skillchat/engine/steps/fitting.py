"""Before each request, the transcript is fitted into the context budget: old tool
results elided first (engine/context_fit.py); what still does not fit is left for
compaction (steps/compaction.py), then the oldest turns are left out of the request."""

from __future__ import annotations

from skillchat.engine.turn import Step, StepContext, Turn


class Fitting(Step):
    def before_request(self, chat: StepContext, turn: Turn) -> None:
        chat.window.fit(turn.system, chat.messages, chat.budget())
