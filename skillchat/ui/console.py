"""Where output goes: the answer to stdout, everything else (cards, progress,
warnings) to stderr, so `skillchat ask ... > file` captures only the answer.

There is no console of the module or of the process: each run of the command line
has one `Consoles` (made by cli/invocation.py's `consoles_of`, once per
invocation) and passes it to what prints: the views, the waiting line, the consent cards of `ask`
and the REPL, the REPL's slash commands, the one-shot commands' tables and
warnings. A run owns its output, and a test hands in consoles of its own. Each
Rich console is built at its first use: `ask` does not pay for one it never prints
to.

Rich already honours NO_COLOR and drops styling when a stream is not a terminal;
`is_terminal` lets commands choose plain text (tab-separated, no tables) for pipes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def _console(*, stderr: bool, light: bool = False) -> Console:
    """A console in the one theme: stdout's does not wrap a long line by itself."""
    from rich.console import Console

    from skillchat.ui.theme import theme

    if stderr:
        return Console(stderr=True, highlight=False, theme=theme(light))
    return Console(soft_wrap=False, highlight=False, theme=theme(light))


class Consoles:
    """The stdout and stderr consoles of one front end, each made at its first use
    (a Rich console costs start-up time `ask` does not always need to pay)."""

    def __init__(self, out: Console | None = None, err: Console | None = None) -> None:
        self._out = out
        self._err = err
        self.light = False  # the light theme's colours (`[ui] theme`, ui/background.py)

    def use_light(self) -> None:
        """Draw in the light theme from now on (consoles made already included;
        Rich is not imported for those still to be made)."""
        self.light = True
        for console in (self._out, self._err):
            if console is not None:
                from rich.theme import Theme

                from skillchat.ui.theme import LIGHT

                console.push_theme(Theme(LIGHT))

    @property
    def out(self) -> Console:
        """The answer, the command's result."""
        if self._out is None:
            self._out = _console(stderr=False, light=self.light)
        return self._out

    @property
    def err(self) -> Console:
        """Cards, progress, warnings, diagnostics."""
        if self._err is None:
            self._err = _console(stderr=True, light=self.light)
        return self._err

    def err_may_be_terminal(self) -> bool:
        """False only where `err_is_terminal` is: known without making the console
        (so without importing Rich) unless it is made already."""
        if self._err is not None:
            return self._err.is_terminal
        return _may_be_terminal(sys.stderr)

    def err_is_terminal(self) -> bool:
        """Whether the stderr console writes to a terminal, as Rich decides it; for a
        pipe or a file (`ask ... 2> log`) known without making the console, so a
        command that never prints there through Rich never imports it."""
        if self._err is None and not _may_be_terminal(sys.stderr):
            return False
        return self.err.is_terminal

    def warn(self, message: str) -> None:
        """One warning line on stderr, never markup-interpreted, never hard-wrapped
        (a terminal wraps it visually; a log or a grep gets it whole). Warnings quote
        skill and file names and provider text: control characters are made visible
        (ui/safe.py) and secrets masked (skillchat/redact.py).

        Before anything else went to stderr through Rich, the line is written
        plain: a warning ahead of `ask`'s first request (the catalog's shortened
        descriptions) does not import Rich on the request's way out (~30 ms of
        CPU). The text is the same; only the colour of "warning:" is Rich's."""
        if self._err is None:
            from skillchat.redact import redact
            from skillchat.ui import safe

            sys.stderr.write(f"warning: {safe.clean(redact(message))}\n")
            sys.stderr.flush()
            return
        self.err.print(_warning(message), soft_wrap=True)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _may_be_terminal(stream: TextIO) -> bool:
    """False only where a console of ours would say it is no terminal: not a tty,
    and neither of the variables that make Rich treat any stream as one."""
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def _warning(message: str) -> Text:
    from skillchat.redact import redact
    from skillchat.ui import safe

    return safe.line(("warning: ", "warning"), redact(message))


def error_line(message: str) -> str:
    """`message` fit for an error line: one line, secrets masked, control characters
    visible."""
    from skillchat.redact import redact
    from skillchat.ui import safe

    return safe.one_line(redact(message))


@contextmanager
def keys_unechoed() -> Iterator[None]:
    """While a reply streams, keys typed on the terminal are not echoed.

    An echoed `^C` (or any typed-ahead text) lands inside the region Rich's Live
    redraws, shifting it: the interrupted reply was then printed twice. Typed keys
    still reach the next prompt; the terminal's mode is restored on the way out.
    """
    try:
        import termios
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):  # stdin is not a terminal
        yield
        return
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~(termios.ECHO | getattr(termios, "ECHOCTL", 0))
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
