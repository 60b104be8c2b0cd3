"""Drive `skillchat`'s interactive session in a real pseudo-terminal (pexpect), as a
person at a terminal would: keys in, screen output read back.

prompt-toolkit asks the terminal where the cursor is (`ESC[6n`) and draws its bottom
toolbar only once it knows; a real terminal answers at once, so `expect` answers
every such query it reads. `expect` matches substrings of the raw output, escape
sequences included, so its patterns should be runs of text printed in one style;
what it returns has the escape sequences removed, for checking whole lines.
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import os
import re
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pyte

PROMPT = "❯"
CPR_QUERY = "\x1b[6n"
ESC_ENTER = "\x1b\r"  # what Alt+Enter sends
UP = "\x1b[A"
# prompt-toolkit turns bracketed paste off when a line is accepted, on for the next prompt.
LINE_DONE = "\x1b[?2004l"
PROMPT_START = "\x1b[?2004h"
_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[@-_])")
# What the screen is fed at a time: an escape sequence, a run of text within a line, a
# line break, or a lone ESC (a sequence cut at the end of a read; pyte keeps its state).
_PIECES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[@-_])|[^\x1b\r\n]+|[\r\n]|\x1b")


def plain(text: str) -> str:
    """`text` without terminal escape sequences."""
    return _ESCAPES.sub("", text)


def paste(text: str) -> str:
    """`text` as a terminal sends a paste: in bracketed-paste markers."""
    return f"\x1b[200~{text}\x1b[201~"


class PtySession:
    """One `python -m skillchat ARGS` in a 40x120 pty, with the caller's environment."""

    def __init__(
        self,
        *args: str,
        cwd: Path | None = None,
        timeout: float = 60,  # a bound for a state that never comes, not a pace (load 30 took 40 s)
        env: dict[str, str] | None = None,
    ) -> None:
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "skillchat", *args],
            cwd=str(cwd) if cwd else None,
            env={**os.environ, "TERM": "xterm-256color", **(env or {})},
            encoding="utf-8",
            dimensions=(40, 120),
            timeout=timeout,
        )
        self.output: list[str] = []  # everything read so far, for failure messages

    def expect(self, text: str, timeout: float | None = None) -> str:
        """Wait for `text`, answering cursor-position queries; returns what came before,
        as plain text."""
        before: list[str] = []
        while True:
            try:
                index = self.child.expect_exact([CPR_QUERY, text], timeout=timeout or -1)
            except (pexpect.TIMEOUT, pexpect.EOF) as exc:
                seen = plain("".join([*self.output, self.child.before or ""]))[-3000:]
                raise AssertionError(f"{text!r} never appeared; the screen got:\n{seen}") from exc
            before.append(self.child.before)
            self.output += [self.child.before, self.child.after]
            if index == 0:
                self.child.send("\x1b[1;1R")
            else:
                return plain("".join(before))

    def screen(self) -> str:
        """The 40x120 terminal as pyte draws everything printed so far."""
        display = pyte.Screen(120, 40)
        pyte.Stream(display).feed("".join(self.output))
        return "\n".join(line.rstrip() for line in display.display)

    def until_screen(self, seen: Callable[[list[str]], bool], timeout: float = 30) -> list[str]:
        """Read until the screen, as a terminal would show it (pyte, fed everything
        printed so far), satisfies `seen`; returns its lines. For states that raw
        output cannot tell apart: a completion menu that shows `notes.md` before the
        line itself is completed prints the same text.

        Output is fed piece by piece (an escape sequence, a run of text on one line),
        and what comes after the piece that showed the state stays unread for `expect`:
        the next prompt, drawn in the same chunk, is still there to wait for, while a
        prompt drawn before the state (in the same chunk) is not taken for it."""
        screen = pyte.Screen(120, 40)
        stream = pyte.Stream(screen)
        stream.feed("".join(self.output))
        pending = self.child.buffer  # read by an earlier expect, not matched yet
        self.child.buffer = ""
        if seen(screen.display):
            self._unread(pending)
            return screen.display
        deadline = time.monotonic() + timeout
        while True:
            if CPR_QUERY in pending:
                self.child.send("\x1b[1;1R")
            for piece in _PIECES.finditer(pending):
                stream.feed(piece.group())
                if seen(screen.display):
                    self.output.append(pending[: piece.end()])
                    # Its cursor-position queries are answered already: not again.
                    self._unread(pending[piece.end() :].replace(CPR_QUERY, ""))
                    return screen.display
            if pending:
                self.output.append(pending)
            if time.monotonic() > deadline:
                shown = "\n".join(line.rstrip() for line in screen.display)
                raise AssertionError(f"the screen never got there; it shows:\n{shown}")
            try:
                pending = self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                pending = ""

    def redrawn(self) -> None:
        """Wait for the line to be drawn again after prompt-toolkit printed above it (the
        Ctrl-C hint, an editor's failure). It prints with the terminal back in cooked
        mode, where the kernel itself takes Ctrl-U and Ctrl-D as line edits and Ctrl-C
        as a signal: a key meant for skillchat waits for this."""
        self.expect(PROMPT_START)

    def _unread(self, text: str) -> None:
        """Put `text` back before what pexpect holds unread. pexpect searches only the
        "fresh" end of its buffer, as long as what it has read since its last match
        (`_before`): both are set, or a pattern in the middle of `text` goes unseen."""
        unread = text + self.child.buffer
        self.child.buffer = unread
        self.child._before = self.child.buffer_type()
        self.child._before.write(unread)

    def prompt(self) -> str:
        """Wait for the next prompt; returns the output since the last wait."""
        before = self.expect(PROMPT_START)
        return before + self.expect(PROMPT)

    def run(self, text: str) -> str:
        """Type `text`, press Enter, and return what was printed before the next prompt."""
        self.line(text)
        self.expect(LINE_DONE)
        return self.prompt()

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def pending_input(self) -> int:
        """How many typed bytes skillchat's terminal holds, not yet read (FIONREAD on
        its stdin). A pty hands written keys to the terminal's line discipline
        asynchronously (a kernel work item), so under load keys "typed" a moment ago
        may not be there yet; a test about typed-ahead keys waits for this instead.
        Asked of the terminal's own device (named by the master side), not
        through skillchat's /proc entries, which a non-dumpable skillchat keeps from
        its user (mcp/spawn.py `hide_environment`)."""
        libc = ctypes.CDLL(None)
        libc.ptsname.restype = ctypes.c_char_p
        device = libc.ptsname(self.child.child_fd)
        fd = os.open(device, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            count = array.array("i", [0])
            fcntl.ioctl(fd, termios.FIONREAD, count)
            return count[0]
        finally:
            os.close(fd)

    def line(self, text: str) -> None:
        """Type `text` and press Enter."""
        self.child.send(text + "\r")

    def interrupt(self) -> None:
        self.child.sendintr()

    def quit(self) -> int:
        """Ctrl-D on an empty prompt; the exit status."""
        self.child.sendeof()
        return self.wait()

    def wait(self) -> int:
        """Read to the end and return the exit status."""
        while True:
            index = self.child.expect_exact([CPR_QUERY, pexpect.EOF], timeout=-1)
            self.output.append(self.child.before)
            if index == 1:
                break
            self.child.send("\x1b[1;1R")
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
