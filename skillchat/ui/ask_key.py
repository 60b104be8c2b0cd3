"""A question at the terminal answered by one key, no Enter: the consent cards'
(ui/consent.py) and an MCP server's question (ui/elicit_card.py) all ask this way.

Keys typed before the question was on screen do not answer it: `yes⏎` typed while
the model was still thinking (meant as a chat message, or hasty) would otherwise be
read as consent to a command the user had not seen, and `a` as "always". What the
terminal holds is discarded right before the card is drawn, as the terminal starts
reading single keys: a key pressed the moment the question shows is its answer.
Ctrl-C, Enter, Escape or end of input at the question means no.

Apart from the cards because it is the terminal's side of every question (its mode,
its keys, the forks named as they wait), the same whatever is asked.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from skillchat.ui.safe import text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from skillchat.engine.questions import Questions


def ask_key(console: Console, card: Text, question: str, keys: str, questions: Questions) -> str:
    """Draws `card` and `question`, then reads the answer as one of `keys`: a single
    key press with no Enter (other keys are ignored; Enter, Escape, Ctrl-D, Ctrl-C and
    end of input are "" = no). Not a terminal: a line, its first letter.

    The terminal is put in one-key mode before anything is drawn, which also drops
    the keys typed so far, so nothing typed ahead answers a question not yet seen,
    while a key pressed as soon as the question shows is read, never thrown away;
    and Ctrl-C is "no" from the moment the question is drawn, not an interrupted turn.
    A fork's question is headed by its name; while the key is awaited, forks whose
    questions come next are named after the question as they ask (`questions`).
    """
    stream = sys.stdin
    with terminal_mode(_one_key) as fd:
        if questions.asker is not None:
            console.print(text(f"{questions.asker}, running on its own, asks:", style="muted"))
        console.print(card)
        if questions.on_question is not None:
            questions.on_question()
        try:
            console.print(text(question, style="strong"), end="")
            if fd is None:
                line = stream.readline().strip().lower()
                return line[:1] if line[:1] in keys else ""
            named: set[str] = set()
            while True:
                if not select.select([fd], [], [], 0.05)[0]:
                    if waiting := [n for n in questions.waiting() if n not in named]:
                        named.update(waiting)
                        said = f"({', '.join(waiting)} waits to ask next) "
                        console.print(text(said, style="muted"), end="")
                    continue
                key = os.read(fd, 1).decode(errors="replace").lower()
                if key in ("", "\r", "\n", "\x1b", "\x04"):
                    return ""
                if key in keys:
                    return key
        except KeyboardInterrupt:  # Ctrl-C still raises SIGINT in one-key mode
            return ""


def _one_key(fd: int, mode: list[Any]) -> None:
    """Keys one by one, not echoed; what was typed before dropped."""
    import termios
    import tty

    tty.setcbreak(fd, termios.TCSAFLUSH)


@contextmanager
def terminal_mode(change: Callable[[int, list[Any]], None]) -> Iterator[int | None]:
    """stdin's terminal changed by `change(fd, its mode)` (which drops the keys typed
    so far with `TCSAFLUSH`), given back as it was at the end: its descriptor; None
    when stdin is not a terminal (a pipe, a file, not POSIX)."""
    saved = None
    with suppress(ImportError, OSError, ValueError, AttributeError):  # not POSIX
        import termios

        fd = sys.stdin.fileno()
        with suppress(termios.error):  # a pipe or a file
            saved = termios.tcgetattr(fd)
    if saved is None:
        yield None
        return
    change(fd, list(saved))
    try:
        yield fd
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
