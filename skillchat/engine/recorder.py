"""Where the loop's complete messages go: the `Recorder` a saved chat implements
(chats/recorder.py), kept apart so the loop and compaction (engine/compaction.py)
both hand it their messages without importing each other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from skillchat.engine.events import Usage
from skillchat.safe_io.read import FileText


class Recorder(Protocol):
    """Where complete messages go as they join the transcript (a saved chat)."""

    def message(
        self, message: dict[str, Any], *, interrupted: bool = False, usage: Usage | None = None
    ) -> None:
        """`message` is complete; `interrupted` marks a reply cut by Ctrl-C, `usage`
        is an assistant message's own request."""

    def attached(self, workspace: str, files: Sequence[FileText]) -> None:
        """`files` of the workspace (its real path) were attached, in the messages
        just recorded."""

    def compacted(self, messages: list[dict[str, Any]], kept: int, info: dict[str, Any]) -> None:
        """`messages` (a summary, re-attached skills) replace all but the last `kept`
        messages of the chat; `info` says what it was compacted from."""
