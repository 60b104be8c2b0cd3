"""Where output goes: the answer to stdout, everything else (cards, progress,
warnings) to stderr, so `skillchat ask ... > file` captures only the answer.

Rich already honours NO_COLOR and drops styling when a stream is not a terminal;
`is_terminal` lets commands choose plain text (tab-separated, no tables) for pipes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@cache
def out() -> Console:
    """The console for the command's result (stdout)."""
    from rich.console import Console

    from skillchat.ui.theme import theme

    return Console(soft_wrap=False, highlight=False, theme=theme())


@cache
def err() -> Console:
    """The console for cards, progress and diagnostics (stderr)."""
    from rich.console import Console

    from skillchat.ui.theme import theme

    return Console(stderr=True, highlight=False, theme=theme())


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def warn(message: str) -> None:
    """One warning line on stderr, never markup-interpreted, never hard-wrapped
    (a terminal wraps it visually; a log or a grep gets it whole). Warnings quote
    skill and file names and provider text: control characters are made visible
    (ui/safe.py) and secrets masked (ui/redact.py)."""
    from skillchat.ui import safe
    from skillchat.ui.redact import redact

    err().print(safe.line(("warning: ", "warning"), redact(message)), soft_wrap=True)


def error_line(message: str) -> str:
    """`message` fit for an error line: one line, secrets masked, control characters
    visible."""
    from skillchat.ui import safe
    from skillchat.ui.redact import redact

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
