"""How a chat's replies reach the user: the views, listeners of its events (engine/emit.py).

- `TerminalView` (stdout is a terminal): the reply rendered as Markdown while it
  streams (ui/markdown_stream.py): finished blocks are printed once, for good; only
  the last screenful of the block still being written is live, so scrolling back
  shows every block once and the cost per chunk does not grow with the answer;
  ui/live_region.py writes it in few bytes and redraws only the rows that changed.
- `PipeView` (stdout is a file or pipe): stdout gets only the answer, raw. A reply
  that may call tools is held until it ends: only then is it known to be the
  answer and not narration before tool calls (which goes to stderr with the cards);
  the protocol sends tool calls after the text, so no earlier moment is honest. A
  reply to a request without tools can only be the answer: it is written as it
  streams. Held text is flushed to stdout if the reply is cut (Ctrl-C, SIGTERM).
- `CardsView` (`--json`): cards and notices on stderr, the text only in the JSON.
- `ReplView` (the interactive session): the terminal view with numbered cards,
  whose records it keeps for `/show N`.

Every view shows the waiting line (ui/waiting.py) on a terminal's stderr from shortly
after a request leaves until its first text; a forked skill's conversation is a
live card there instead (ui/fork_view.py), collapsed to one line when it ends.
Cards, notices and diagnostics always go to stderr (ui/console.py). The model's
text reaches the terminal only through ui/safe.py: control characters visible,
Markdown links printed with their target (in a pipe too: an answer saved to a file
is read on a terminal later).
"""

from __future__ import annotations

import sys
import threading
import time
from importlib import import_module
from typing import TYPE_CHECKING

from skillchat.engine.emit import ForkEnded, ForkStarted, TextEnd, ToolRecord, ViewListener
from skillchat.ui import safe
from skillchat.ui.waiting import SHOW_AFTER, WaitingLine

if TYPE_CHECKING:
    from skillchat.engine.events import Usage
    from skillchat.ui.console import Consoles
    from skillchat.ui.fork_view import ForkCards
    from skillchat.ui.live_region import LiveRegion


class CardsView(ViewListener):
    """Cards and notices on stderr; the reply text is not shown (`--json`). Every
    view writes through the consoles of its front end."""

    def __init__(self, consoles: Consoles) -> None:
        self.consoles = consoles
        self.waiting_line = WaitingLine(consoles)
        self._forks: ForkCards | None = None  # on a terminal: the running forks' cards

    def waiting(self, tools: bool) -> None:
        self.waiting_line.start()

    def text(self, chunk: str) -> None:
        self.waiting_line.stop()

    def end_text(self, how: TextEnd) -> None:
        self.waiting_line.stop()

    def tool(self, record: ToolRecord) -> None:
        from skillchat.ui.cards import tool_card

        self.consoles.err.print(tool_card(record))

    def notice(self, message: str) -> None:
        if self._forks is not None:
            self._forks.pause()
        self.consoles.warn(message)

    def done(self, message: str) -> None:
        self.consoles.err.print(safe.line(("✓ ", "ok"), message), soft_wrap=True)

    def fork(self, event: ForkStarted | ForkEnded) -> None:
        from skillchat.ui import fork_view  # with the cards: when a fork runs

        self.waiting_line.stop()
        if self._forks is None and self.consoles.err_is_terminal():
            self._forks = fork_view.ForkCards(self.consoles.err)
        if isinstance(event, ForkStarted):
            if self._forks is not None:
                self._forks.start(event)
            else:  # a pipe: plain lines, for good
                self.consoles.err.print(fork_view.started_line(event))
        elif self._forks is not None:
            self._forks.end(event)
        else:
            self.consoles.err.print(fork_view.ended_line(event))

    def fork_tool_started(self, fork: int) -> None:
        if self._forks is not None:
            self._forks.pause()

    def fork_tool(self, fork: int, record: ToolRecord) -> None:
        from skillchat.ui import fork_view

        if self._forks is not None:
            self._forks.tool(fork, record)
        else:
            self.consoles.err.print(fork_view.tool_line(record))

    def fork_usage(self, fork: int, usage: Usage) -> None:
        if self._forks is not None:
            self._forks.usage(fork, usage)

    def fork_waiting(self, fork: int, waiting: bool) -> None:
        if self._forks is not None:
            self._forks.waiting(fork, waiting)
        elif waiting:
            self.waiting_line.start()
        else:
            self.waiting_line.stop()


class PipeView(CardsView):
    """Only the answer on stdout, as plain text."""

    def __init__(self, consoles: Consoles) -> None:
        super().__init__(consoles)
        self._held: list[str] = []
        self._streaming = False  # this reply cannot call tools: written as it comes
        self._wrote = ""  # the last character written while streaming
        self._cr = ""  # a trailing "\r" kept back: it may be half of "\r\n"

    def waiting(self, tools: bool) -> None:
        super().waiting(tools)
        self._streaming = not tools

    def text(self, chunk: str) -> None:
        self.waiting_line.stop()
        if not self._streaming:
            self._held.append(chunk)
            return
        chunk, self._cr = self._cr + chunk, ""
        if chunk.endswith("\r"):
            chunk, self._cr = chunk[:-1], "\r"
        if chunk:
            sys.stdout.write(safe.clean(chunk))
            sys.stdout.flush()
            self._wrote = chunk[-1]

    def end_text(self, how: TextEnd) -> None:
        self.waiting_line.stop()
        if self._streaming:
            if self._cr or self._wrote:
                sys.stdout.write(safe.clean(self._cr) + ("" if self._wrote == "\n" else "\n"))
                sys.stdout.flush()
            self._wrote = self._cr = ""
            return
        text, self._held = "".join(self._held), []
        if not text:
            return
        stream = sys.stdout if how in ("answer", "interrupted") else sys.stderr
        text = safe.clean(text)
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()


class TerminalView(CardsView):
    """The reply as Markdown, streamed: finished blocks printed once, the open
    block's last screenful live (ui/markdown_stream.py)."""

    REDRAW_EVERY = 0.1  # seconds: the live tail is redrawn at most this often

    def __init__(self, consoles: Consoles) -> None:
        super().__init__(consoles)
        self._preloaded = False
        self._begin()

    def _begin(self) -> None:
        """A new reply: nothing open, nothing printed (its stream state is made with
        its first text, `_open`: a REPL at its prompt has not needed it yet)."""
        self._partial: list[str] = []  # the line being written, in pieces
        self._blank = False  # the next piece printed wants a blank line above it
        self._drawn = 0.0
        self._live: LiveRegion | None = None

    def _open(self) -> LiveRegion:
        """The reply's first text: its splitter, live tail and live region."""
        from skillchat.ui.live_region import LiveRegion
        from skillchat.ui.markdown_stream import BlockSplitter, LiveTail

        self.waiting_line.stop()
        self._splitter = BlockSplitter()
        self._tail = LiveTail(self._splitter)
        self._live = LiveRegion(self.consoles.out)
        return self._live

    def waiting(self, tools: bool) -> None:
        super().waiting(tools)
        self.preload()

    def preload(self) -> None:
        """Import rich.markdown (~80 ms) in a daemon thread, once: `ask` does it while
        its first request is out, the REPL once its prompt is on screen. It starts
        SHOW_AFTER later, as the waiting line does: a request on its way out does
        not share the interpreter with an import."""
        if not self._preloaded:
            self._preloaded = True
            timer = threading.Timer(SHOW_AFTER, import_module, ("rich.markdown",))
            timer.daemon = True
            timer.start()

    def text(self, chunk: str) -> None:
        live = self._live if self._live is not None else self._open()
        if "\n" in chunk:
            first, *lines, last = chunk.split("\n")
            lines = ["".join(self._partial) + first, *lines]
            self._partial = [last] if last else []
            self._tail.partial = last
            for line in lines:
                finished = self._splitter.feed(line + "\n")
                if finished:
                    self._print(finished)
        else:
            self._partial.append(chunk)
        now = time.monotonic()
        if now - self._drawn >= self.REDRAW_EVERY:
            self._tail.partial = "".join(self._partial)
            live.update(self._tail)
            self._drawn = now

    def _print(self, source: str) -> None:
        """Print a finished piece for good, where the live tail was: the tail is drawn
        again at the next redraw (at most REDRAW_EVERY later, with the next chunk)."""
        from skillchat.ui.markdown_stream import finished_piece

        piece, self._blank = finished_piece(self._splitter.preamble() + source, self._blank)
        self._tail.blank_first = self._blank
        if piece is not None and self._live is not None:
            self._live.print(piece)

    def end_text(self, how: TextEnd) -> None:
        self.waiting_line.stop()
        if self._live is not None:
            rest = self._splitter.rest() + "".join(self._partial)
            if rest.strip():
                self._print(rest)
            self._live.close()
        self._begin()


class ReplView(TerminalView):
    """The terminal view of the REPL: cards numbered #1, #2... (per chat), so that
    `/show N` can print the whole result a card shortened."""

    def __init__(self, consoles: Consoles) -> None:
        super().__init__(consoles)
        self.records: list[ToolRecord] = []
        self.forks: dict[int, ForkEnded] = {}  # card number -> the fork it reports
        self._ended: list[ForkEnded] = []  # forks whose card has not come yet

    def fork(self, event: ForkStarted | ForkEnded) -> None:
        super().fork(event)
        if isinstance(event, ForkEnded):
            self._ended.append(event)

    def tool(self, record: ToolRecord) -> None:
        self.records.append(record)
        from skillchat.ui import fork_view
        from skillchat.ui.cards import tool_card

        # A reply's cards come after all its calls ran, in order: so did its forks.
        if self._ended and fork_view.is_fork_result(record):
            self.forks[len(self.records)] = self._ended.pop(0)

        self.consoles.err.print(tool_card(record, number=len(self.records)))
