"""`auto_compact`: a chat that still passes its context budget once old tool results
are elided has its older turns summarised (engine/compaction.py), at most once a
turn, so a failed summary is not asked for again before every request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.engine.turn import Step, Turn

if TYPE_CHECKING:
    from skillchat.engine.loop import Chat


class AutoCompaction(Step):
    def before_request(self, chat: Chat, turn: Turn) -> None:
        if not (turn.may_compact and chat.settings.auto_compact):
            return
        if not chat.window.fits(turn.system, chat.messages, chat.budget()):
            turn.may_compact = False
            chat.compact(turn.system, auto=True)
