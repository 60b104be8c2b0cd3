"""Which theme the REPL draws in (`[ui] theme`): `dark` (the default, as always),
`light`, or `auto`: the terminal's own background.

`auto` asks the cheapest source first: `COLORFGBG` (set by rxvt, Konsole and
others: `15;0` is light text on black), then the terminal itself with OSC 11
(`ESC ] 11 ; ? BEL`, answered `ESC ] 11 ; rgb:RRRR/GGGG/BBBB` by xterm, VTE,
kitty, iTerm2, WezTerm, foot...), waiting at most `QUERY_TIMEOUT`. A terminal that
does not answer in time, or an answer that is not one, is dark. `auto` is not the
default because the query delays the first prompt by up to that wait on a
terminal that never answers.
"""

from __future__ import annotations

import os
import re
import select
import sys

QUERY_TIMEOUT = 0.15  # seconds: a local terminal answers in about a millisecond
_ANSWER = re.compile(rb"\x1b\]11;rgb:([0-9a-f]{1,4})/([0-9a-f]{1,4})/([0-9a-f]{1,4})", re.I)
LIGHT_COLOURS = {7, 15}  # the background indexes COLORFGBG names light


def is_light(choice: str) -> bool:
    if choice != "auto":
        return choice == "light"
    if (hint := os.environ.get("COLORFGBG")) is not None:
        background = hint.rpartition(";")[2]
        return background.isdigit() and int(background) in LIGHT_COLOURS
    answer = _query()
    return answer is not None and light_answer(answer)


def light_answer(answer: bytes) -> bool:
    """True when an OSC 11 answer names a background lighter than mid-grey."""
    match = _ANSWER.search(answer)
    if match is None:
        return False
    red, green, blue = (int(part, 16) / (16 ** len(part) - 1) for part in match.groups())
    return bool(0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.5)


def _query() -> bytes | None:
    """The terminal's answer to OSC 11, or None (not a terminal, no answer in time)."""
    try:
        import termios
        import tty
    except ImportError:  # not POSIX
        return None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        new = termios.tcgetattr(fd)
        new[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, new)
        sys.stdout.write("\x1b]11;?\x07")
        sys.stdout.flush()
        answer = b""
        while not answer.endswith((b"\x07", b"\x1b\\")):
            ready, _, _ = select.select([fd], [], [], QUERY_TIMEOUT)
            if not ready or len(answer) > 64:
                break
            answer += os.read(fd, 64)
        return answer or None
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
