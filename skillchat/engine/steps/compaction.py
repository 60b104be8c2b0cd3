"""`auto_compact`: a chat that still passes its context budget once old tool results
are elided has its older turns summarised (engine/compaction.py), at most once a
turn, so a failed summary is not asked for again before every request."""

from __future__ import annotations

from skillchat.engine.turn import Step, StepContext, Turn


class AutoCompaction(Step):
    def before_request(self, chat: StepContext, turn: Turn) -> None:
        if not (turn.may_compact and chat.settings.limits.auto_compact):
            return
        if not chat.window.fits(turn.system, chat.messages, chat.budget()):
            turn.may_compact = False
            chat.compact(turn.system, auto=True)
