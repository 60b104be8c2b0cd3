"""The dim line on stderr while a request is out and nothing of its reply has come.

Without it, the seconds between Enter and the first token (a cold local model can
take a minute) look like a hang. It is a transient Rich `Live` on the stderr
console: it shows only when stderr is a terminal, redraws itself from a thread
(the main thread is blocked reading the response), says how long it has waited
once that is long enough to matter, and erases itself when the first text
arrives or the request ends, leaving nothing in the scrollback. Warnings printed
meanwhile (retries) appear above it.

It is drawn SHOW_AFTER seconds after the request starts, from a timer thread: a
wait shorter than that would only flicker, and the request is then on its way
out, so `ask`'s first request does not wait for Rich's import and console (~40 ms
of CPU on a terminal) nor share the interpreter with them.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.live import Live
    from rich.text import Text

    from skillchat.ui.console import Consoles

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LABEL = "waiting for the model"
SECONDS_AFTER = 3.0  # before this, a count would only flicker
SHOW_AFTER = 0.15  # seconds: a shorter wait is not shown


class _Line:
    """Redrawn ~10 times a second: the frame and the seconds follow the clock."""

    def __init__(self) -> None:
        self.since = time.monotonic()

    def __rich__(self) -> Text:
        from rich.text import Text

        waited = time.monotonic() - self.since
        line = f"{FRAMES[int(waited * 10) % len(FRAMES)]} {LABEL}"
        if waited >= SECONDS_AFTER:
            line += f" · {waited:.0f}s"
        return Text(line, style="muted")


class WaitingLine:
    """`start()` when a request leaves, `stop()` at its first text or its end;
    both idempotent and cheap, so a view may call `stop()` on every chunk."""

    def __init__(self, consoles: Consoles) -> None:
        self._consoles = consoles
        self._live: Live | None = None
        self._timer: threading.Timer | None = None  # the line to come, SHOW_AFTER from start
        self._lock = threading.Lock()  # the timer's thread shows it, the chat's stops it

    def start(self) -> None:
        if self._timer is not None or not self._consoles.err_may_be_terminal():
            return
        self._timer = threading.Timer(SHOW_AFTER, self._show, (_Line(),))
        self._timer.daemon = True
        self._timer.start()

    def _show(self, line: _Line) -> None:
        with self._lock:  # drawn only if this timer was not stopped meanwhile
            if self._timer is not threading.current_thread():
                return
            if not self._consoles.err_is_terminal():
                return
            from rich.live import Live

            self._live = Live(
                line,
                console=self._consoles.err,
                transient=True,
                refresh_per_second=10,
                redirect_stdout=False,  # stdout is the answer's: never routed to stderr
                redirect_stderr=False,
            )
            self._live.start()

    def stop(self) -> None:
        if self._timer is None:
            return
        with self._lock:
            timer, self._timer = self._timer, None
            live, self._live = self._live, None
        timer.cancel()
        if live is not None:
            live.stop()
