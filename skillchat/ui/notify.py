"""Telling a user who looked away: a turn that took `[ui] notify_after_s` seconds
or more has ended, or a question (a command's consent, an install, a server's
question) waits for a key in a turn that has run that long (a question a second
after Enter finds the user still looking: a bell then is noise).

How (`[ui] notify`): `bell` (BEL: most terminals flash, beep or mark the tab),
`osc9` (`ESC ] 9 ; text BEL`: a desktop notification in iTerm2, WezTerm, Windows
Terminal, kitty), `osc777` (`ESC ] 777 ; notify ; title ; text BEL`: foot, VTE
terminals, urxvt), or `off`. Only the REPL notifies, and only to a terminal: `ask`
is scripted or watched. The text is fixed: nothing a model or a server wrote goes
into the sequence.
"""

from __future__ import annotations

import time
from typing import IO

WAYS = ("bell", "osc9", "osc777", "off")
TITLE = "skillchat"


def sequence(way: str, message: str) -> str:
    if way == "osc9":
        return f"\x1b]9;{TITLE}: {message}\x07"
    if way == "osc777":
        return f"\x1b]777;notify;{TITLE};{message}\x07"
    return "\x07" if way == "bell" else ""


class Notifier:
    """One REPL's notifications; `terminal` is None when stdout is not a terminal."""

    def __init__(self, way: str, after_s: float, terminal: IO[str] | None) -> None:
        self.way = way if terminal is not None else "off"
        self.after_s = after_s
        self.terminal = terminal
        self.started: float | None = None

    def turn_started(self) -> None:
        self.started = time.monotonic()

    def turn_ended(self) -> None:
        if self._long():
            self._send("the answer is ready")
        self.started = None

    def question(self) -> None:
        if self._long():
            self._send("a question waits for you")

    def _long(self) -> bool:
        return self.started is not None and time.monotonic() - self.started >= self.after_s

    def _send(self, message: str) -> None:
        if self.terminal is not None and (text := sequence(self.way, message)):
            self.terminal.write(text)
            self.terminal.flush()
