"""How a chat's replies reach the user: the `View`s of engine/loop.py.

- `TerminalView` (stdout is a terminal): the reply rendered as Markdown while it
  streams. Finished blocks are printed once, for good; only the block still being
  written lives in a Rich `Live`, so a long answer neither flickers nor costs a
  re-parse of everything per chunk, and scrolling back shows it whole.
- `PipeView` (stdout is a file or pipe): stdout gets only the answer, raw. Each
  reply is held until it ends, because only then is it known to be the answer and
  not narration before tool calls (which goes to stderr with the cards).
- `CardsView` (`--json`): cards and notices on stderr, the text only in the JSON.
- `ReplView` (the interactive session): the terminal view with numbered cards,
  whose records it keeps for `/show N`.

Cards, notices and diagnostics always go to stderr (ui/console.py). The model's
text reaches the terminal only through ui/safe.py: control characters visible,
Markdown links printed with their target (in a pipe too: an answer saved to a file
is read on a terminal later).
"""

from __future__ import annotations

import re
import sys
import threading
import time
from importlib import import_module
from typing import TYPE_CHECKING

from skillchat.engine.loop import TextEnd, ToolRecord
from skillchat.ui import safe
from skillchat.ui.cards import tool_card
from skillchat.ui.console import err, out, warn

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.live import Live

_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)


def stable_prefix(text: str) -> int:
    """Length of the part of `text` made of finished Markdown blocks: up to the last
    blank line that is not inside a fenced code block (0 when there is none)."""
    end = text.rfind("\n\n")
    while end > 0:
        if len(_FENCE.findall(text, 0, end)) % 2 == 0:
            return end + 2
        end = text.rfind("\n\n", 0, end)
    return 0


class CardsView:
    """Cards and notices on stderr; the reply text is not shown (`--json`)."""

    def text(self, chunk: str) -> None:
        pass

    def end_text(self, how: TextEnd) -> None:
        pass

    def tool(self, record: ToolRecord) -> None:
        err().print(tool_card(record))

    def notice(self, message: str) -> None:
        warn(message)


class PipeView(CardsView):
    """Only the answer on stdout, as plain text."""

    def __init__(self) -> None:
        self._held: list[str] = []

    def text(self, chunk: str) -> None:
        self._held.append(chunk)

    def end_text(self, how: TextEnd) -> None:
        text, self._held = "".join(self._held), []
        if not text:
            return
        stream = sys.stdout if how in ("answer", "interrupted") else sys.stderr
        text = safe.clean(text)
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()


class TerminalView(CardsView):
    """The reply as Markdown, streamed."""

    REDRAW_EVERY = 0.1  # seconds: a re-parse of the live tail per chunk would be wasted

    def __init__(self, *, preload: bool = True) -> None:
        self._text = ""
        self._done = 0  # chars of _text already printed for good
        self._drawn = 0.0
        self._live: Live | None = None
        self._preloaded = False
        if preload:
            self.preload()

    def preload(self) -> None:
        """Import rich.markdown (~80 ms) in a daemon thread, once: `ask` does it while
        the first request is out, the REPL once its prompt is on screen."""
        if not self._preloaded:
            self._preloaded = True
            threading.Thread(target=import_module, args=("rich.markdown",), daemon=True).start()

    def _tail(self) -> RenderableType:
        return safe.markdown(self._text[self._done :])

    def text(self, chunk: str) -> None:
        if self._live is None:
            from rich.live import Live

            self._live = Live(console=out(), auto_refresh=False, vertical_overflow="visible")
            self._live.start()
        self._text += chunk
        split = stable_prefix(self._text)
        now = time.monotonic()
        if split > self._done:  # print the finished blocks for good; the live tail shrinks
            finished, self._done = self._text[self._done : split], split
            self._live.update(self._tail(), refresh=True)  # the tail first, or it lingers
            self._live.console.print(safe.markdown(finished))
            self._drawn = now
        elif now - self._drawn >= self.REDRAW_EVERY:
            self._live.update(self._tail(), refresh=True)
            self._drawn = now

    def end_text(self, how: TextEnd) -> None:
        if self._live is not None:
            self._live.update(self._tail())
            self._live.stop()
        self._live, self._text, self._done, self._drawn = None, "", 0, 0.0


class ReplView(TerminalView):
    """The terminal view of the REPL: cards numbered #1, #2... (per chat), so that
    `/show N` can print the whole result a card shortened."""

    def __init__(self) -> None:
        super().__init__(preload=False)  # not before the prompt is on screen
        self.records: list[ToolRecord] = []

    def tool(self, record: ToolRecord) -> None:
        self.records.append(record)
        err().print(tool_card(record, number=len(self.records)))
