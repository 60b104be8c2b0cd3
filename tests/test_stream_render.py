"""What a terminal really shows while a reply streams, and what it keeps.

`skillchat ask` runs in a pseudo-terminal; everything it writes is played through
`pyte`, a terminal emulator, whose history keeps the lines that scrolled off the
top, as a terminal's scrollback does. A block taller than the screen must be in
that scrollback once (a live region taller than the screen used to leave a copy
per redraw). The waiting line must show before the first token and be gone after.
A piped `ask` killed with SIGTERM must still write out what it had received.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pexpect
import pyte
import pytest
from helpers import REAL_SKILLS, session_options
from openai_server import ScriptedServer, call, reply

from skillchat.ui import safe
from skillchat.ui.markdown_stream import BlockSplitter, finished_piece

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"
CORPUS = REAL_SKILLS
ROWS, COLUMNS = 24, 100


class Terminal:
    """`skillchat ARGS` on a ROWSxCOLUMNS pty, its output fed to a pyte screen with
    a scrollback."""

    def __init__(self, *args: str) -> None:
        self.screen = pyte.HistoryScreen(COLUMNS, ROWS, history=100_000, ratio=0.5)
        self.stream = pyte.ByteStream(self.screen)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "skillchat", *args],
            env={**os.environ, "TERM": "xterm-256color"},
            dimensions=(ROWS, COLUMNS),
            timeout=30,
        )

    def read(self, timeout: float = 0.05) -> bool:
        """Feed what is there to the screen; False at the end of the output."""
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.stream.feed(data)
        return True

    def until(self, seen: str, deadline: float = 30) -> None:
        """Read until the screen shows `seen`."""
        end = time.monotonic() + deadline
        while seen not in "\n".join(self.screen.display):
            assert time.monotonic() < end, f"{seen!r} never shown:\n" + self.text()
            assert self.read(), f"ended before {seen!r} was shown:\n" + self.text()

    def finish(self) -> int:
        while self.read(timeout=1):
            pass
        self.child.close()
        return self.child.exitstatus

    def lines(self) -> list[str]:
        """The scrollback, then the screen, each line without trailing blanks."""
        history = [
            "".join(line[x].data for x in range(COLUMNS)) for line in self.screen.history.top
        ]
        return [line.rstrip() for line in [*history, *self.screen.display]]

    def text(self) -> str:
        return "\n".join(self.lines())


def ask_on_terminal(server: ScriptedServer, *args: str) -> Terminal:
    return Terminal("ask", *session_options(server, SKILLS), *args)


CODE = "```python\n" + "".join(f"value_{n:03d} = {n}  # line {n}\n" for n in range(80)) + "```\n"
LIST = "".join(f"- item number {n:03d} of the list\n" for n in range(60))


def test_blocks_taller_than_the_screen_are_in_the_scrollback_once(server: ScriptedServer) -> None:
    """An 80-line code block, then a 60-item list, on a 24-row screen: one `ask`."""
    answer = f"Here it is:\n\n{CODE}\nAnd a list:\n\n{LIST}\nThat is all.\n"
    server.script(reply(answer, chunks=len(answer) // 8, chunk_delay=0.002))
    terminal = ask_on_terminal(server, "show me")
    assert terminal.finish() == 0, terminal.text()
    lines = terminal.lines()
    for unique in ("value_042 = 42  # line 42", "item number 042 of the list"):
        assert sum(unique in line for line in lines) == 1, terminal.text()
    # Every line of each block is there, in order, once; the text around them too.
    code = [int(m[1]) for line in lines if (m := re.search(r"value_(\d{3}) = ", line))]
    items = [int(m[1]) for line in lines if (m := re.search(r"item number (\d{3})", line))]
    assert code == list(range(80)), terminal.text()
    assert items == list(range(60)), terminal.text()
    for text in ("Here it is:", "And a list:", "That is all."):
        assert sum(text in line for line in lines) == 1, terminal.text()


def test_the_waiting_line_shows_until_the_first_token_then_goes(server: ScriptedServer) -> None:
    server.script(reply("The answer is 42.", hold="answer"))
    terminal = ask_on_terminal(server, "hi")
    terminal.until("waiting for the model")
    terminal.until("waiting for the model · 3s")  # the seconds, once there are a few
    server.release("answer")
    terminal.until("The answer is 42.")
    assert terminal.finish() == 0
    shown = terminal.text()
    assert "waiting for the model" not in shown, shown  # erased, not left in the scrollback
    assert shown.count("The answer is 42.") == 1


def test_the_waiting_line_comes_back_for_each_request(server: ScriptedServer) -> None:
    server.script(
        reply("Let me look.", calls=[call("list_skills")]),
        reply("Found them.", hold="second"),
    )
    terminal = ask_on_terminal(server, "which skills?")
    terminal.until("list_skills")  # the card of the first round
    terminal.until("waiting for the model")  # the second request is out
    server.release("second")
    terminal.until("Found them.")
    assert terminal.finish() == 0
    assert "waiting for the model" not in terminal.text()


def read_pty(fd: int, screen: pyte.Screen, stream: pyte.ByteStream) -> None:
    while select.select([fd], [], [], 0.05)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed its end
            return
        if not data:
            return
        stream.feed(data)


@pytest.mark.parametrize("tools", [True, False], ids=["held", "streamed"])
def test_sigterm_on_a_pipe_writes_what_arrived(server: ScriptedServer, tools: bool) -> None:
    """stdout is a pipe, stderr a terminal (its waiting line goes with the first
    piece of text, two words, read). A reply that may call tools is held until it
    ends; SIGTERM mid-reply (it goes silent after 20 pieces) must still write out
    what arrived, and exit 143."""
    server.script(reply("word " * 200, chunks=100, stall_after=20, hold="seen"))
    master, slave = pty.openpty()
    screen = pyte.Screen(COLUMNS, ROWS)
    stream = pyte.ByteStream(screen)
    # A real process on a pty's stderr: the subject is its SIGTERM and exit 143.
    argv = [sys.executable, "-m", "skillchat", "ask", *session_options(server, SKILLS)]
    argv += [] if tools else ["--no-tools"]
    proc = subprocess.Popen(
        [*argv, "count"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    os.close(slave)
    try:
        deadline = time.monotonic() + 30
        shown = False
        while time.monotonic() < deadline:  # the waiting line appears, then goes
            read_pty(master, screen, stream)
            waiting = "waiting for the model" in "\n".join(screen.display)
            if shown and not waiting:
                break
            if waiting and not shown:  # seen: now the reply may come and erase it
                server.release("seen")
            shown = shown or waiting
        else:
            raise AssertionError("the waiting line never came and went")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        read_pty(master, screen, stream)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143
    assert "terminated" in "\n".join(screen.display)
    assert out.startswith(b"word word") and out.count(b"word") < 200, out[-200:]


def render(text: str, parts: list[str]) -> tuple[str, str]:
    """`text` rendered whole, and rendered as the terminal view prints it: the
    pieces the splitter lets go, spaced, fed the line cuts of `parts`."""

    def console() -> object:
        from rich.console import Console

        return Console(file=io.StringIO(), width=80, color_system=None)

    whole = console()
    whole.print(safe.markdown(text))
    pieces = console()
    splitter, blank = BlockSplitter(), False
    for source in [splitter.feed(line) for line in parts] + [splitter.rest()]:
        if source:
            piece, blank = finished_piece(splitter.preamble() + source, blank)
            if piece is not None:
                pieces.print(piece)
    return whole.file.getvalue(), pieces.file.getvalue()


SAMPLE = """# Title

A paragraph
on two lines, with a [reference link][docs] defined at the end.

```python
x = 1

y = 2
```
Right after the fence.

- a
- b

- c, the list goes on (loose)

  still item c

1. one
2. two

---

> quoted

| a | b |
|---|---|
| 1 | 2 |

[docs]: https://example.com/docs
"""


def covering(texts: list[str]) -> list[str]:
    """The fewest texts (greedy) that hold every kind of block, at every depth, and
    every pair of neighbouring top-level blocks that `texts` hold, parsed as Rich
    parses Markdown. What the splitter gets right or wrong is where one block ends
    and the next begins: this keeps every such case the corpus has, and renders 21
    of its 501 files (a sixteenth of its bytes) instead of all of them."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt().enable("strikethrough").enable("table")
    kinds: dict[int, set[str]] = {}
    for n, text in enumerate(texts):
        tokens = parser.parse(text)
        top = [t.type for t in tokens if t.level == 0 and t.nesting >= 0]
        kinds[n] = {f"{a}>{b}" for a, b in pairwise(top)}
        kinds[n] |= {f"{t.type}@{t.level}" for t in tokens}
    wanted = set().union(*kinds.values()) if kinds else set()
    chosen: list[str] = []
    covered: set[str] = set()
    while covered != wanted:
        best = max(kinds, key=lambda n: (len(kinds[n] - covered), -len(texts[n]), -n))
        chosen.append(texts[best])
        covered |= kinds.pop(best)
    return chosen


def test_pieces_render_as_the_whole_answer() -> None:
    """Spacing between blocks, lists with blank lines, fences with blank lines, a
    rule, a table and a reference link defined after its use all come out as the
    whole answer renders; and so does every kind of block boundary found in the
    corpus of real skills (its 500 Markdown files, through `covering`)."""
    texts = [SAMPLE, (REPO / "README.md").read_text()]
    corpus = [p.read_text() for p in sorted(CORPUS.rglob("*.md"))]  # absent: SAMPLE only
    texts += covering(corpus)
    for text in texts:
        whole, pieces = render(text, text.splitlines(keepends=True))
        assert whole == pieces
    whole, _ = render(SAMPLE, [])
    assert "reference link (https://example.com/docs)" in whole
