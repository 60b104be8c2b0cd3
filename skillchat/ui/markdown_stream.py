"""Markdown that streams onto a terminal, scrolls back clean and costs linear time.

A reply arrives a few characters at a time. Rendering all of it again per chunk
costs O(n²) (a 50k-token answer took 100 s of CPU), and a Rich `Live` region taller
than the screen cannot be redrawn: the cursor cannot move above the top row, so
every redraw left another copy of the part that had scrolled off. So:

- `BlockSplitter` reads the text one complete line at a time, once, remembering
  whether a fence is open, whether a list is going on, which reference labels are
  used and defined. It lets go of lines only where cutting cannot change the
  render: at a blank line followed by a line that starts a new top-level block
  (not indented, not the next item of the same list), and after a closing fence
  at the margin. Those finished blocks are printed for good, once.
- What is not finished (the open block) is shown live, but only its last screenful
  (`LiveTail`): rendering it costs the screen, not the block, and the region never
  outgrows the terminal. The whole block is printed once, when it closes.
- Printed pieces are separated as Rich separates the blocks of one document (a
  blank line, none after a rule), so the scrollback reads like the final render.
- Reference links: definitions seen so far are put before every piece rendered;
  a block using a `[text][label]` whose definition has not arrived yet is held
  (shown live) until it does or the reply ends. A shortcut `[label]` is not held
  (most bracketed words are not links): it resolves if its definition came first.
- A table is never shown half-parsed: the live tail leaves out a row still being
  written and a header whose delimiter row has not come.

Everything rendered goes through ui/safe.py (control characters made visible, links
shown with their target).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from skillchat.ui import safe

if TYPE_CHECKING:
    from markdown_it.token import Token
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.markdown import Markdown

_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_DEFINITION = re.compile(r" {0,3}\[((?:[^\]\\]|\\.)+)\]:")
_FULL_REF = re.compile(r"\]\[((?:[^\]\\]|\\.)+)\]")  # [text][label]
_COLLAPSED_REF = re.compile(r"\[((?:[^\]\\]|\\.)+)\]\[\]")  # [label][]
_HTML_BLOCK = re.compile(r" {0,3}</?[A-Za-z!?]")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_TABLE_DELIMITER = re.compile(r" {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*")


def _label(raw: str) -> str:
    """A reference label as CommonMark matches it: case and inner spacing ignored."""
    return " ".join(raw.split()).casefold()


class BlockSplitter:
    """The open (unfinished) part of a streamed Markdown text, as complete lines.

    `feed` takes complete lines (each ending in a newline) and returns the text
    that is finished for good, if any; each line is looked at once.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []  # the open region, complete lines
        self.definitions: dict[str, str] = {}  # label -> its definition line
        self.fence_line: int | None = None  # index in `lines` of the open fence
        self.table_head: int | None = None  # index of the header row of the table going on
        self._fence = ("", 0, 0)  # the open fence's character, length and indent
        self._blank = False  # the last line was blank (outside a fence)
        self._in_list = False
        self._html = False  # in an HTML block: raw lines up to a blank one, no fences
        self._missing: set[str] = set()  # full/collapsed references not defined yet

    def feed(self, line: str) -> str | None:
        """Add one complete line; the finished text it lets go, if any."""
        bare = line.rstrip("\r\n")
        if self.fence_line is not None:
            self.lines.append(line)
            char, length, indent = self._fence
            closing = bare.lstrip(" ")
            indented = len(bare) - len(closing) > 3  # then it is code, not a fence
            closing = closing.rstrip(" \t")
            if not indented and closing.startswith(char * length) and not closing.strip(char):
                self.fence_line = None
                if indent == 0 and not self._in_list:  # not inside a list item
                    return self._let_go(len(self.lines))
            return None
        if not bare.strip():
            self.lines.append(line)
            self._blank, self.table_head, self._html = True, None, False
            return None
        finished = None
        if self._blank and self.lines and self._starts_block(bare):
            finished = self._let_go(len(self.lines))
        self._blank = False
        self._read(bare)
        self.lines.append(line)
        return finished

    def _starts_block(self, bare: str) -> bool:
        """After a blank line: does `bare` begin a block that cannot continue the
        one before? (Indented lines may belong to a list item: not cut there.)"""
        if bare[0] in " \t":
            return False
        return not (self._in_list and _LIST_ITEM.match(bare))

    def _read(self, bare: str) -> None:
        """Note what a line outside a fence opens or uses."""
        if _LIST_ITEM.match(bare):
            self._in_list = True
        elif self._blank_before() and bare[0] not in " \t":
            self._in_list = False
        if self._blank_before() and _HTML_BLOCK.match(bare):
            self._html = True
        fence = None if self._html else _FENCE.fullmatch(bare)
        if fence and not (fence[2][0] == "`" and "`" in fence[3]):
            self.fence_line = len(self.lines)
            self._fence = (fence[2][0], len(fence[2]), len(fence[1]))
            self._in_list = self._in_list and bool(fence[1])  # at the margin it ends a list
            return
        if self.lines and _TABLE_DELIMITER.fullmatch(bare) and "|" in self.lines[-1]:
            self.table_head = len(self.lines) - 1
        definition = _DEFINITION.match(bare)
        if definition:
            label = _label(definition[1])
            self.definitions.setdefault(label, bare)
            self._missing.discard(label)
            return
        if "][" in bare:
            plain = _CODE_SPAN.sub("", bare)
            used = [*_FULL_REF.findall(plain), *_COLLAPSED_REF.findall(plain)]
            self._missing.update(lab for lab in map(_label, used) if lab not in self.definitions)

    def _blank_before(self) -> bool:
        return not self.lines or not self.lines[-1].strip()

    def _let_go(self, end: int) -> str | None:
        """The first `end` lines, unless a reference in them is still undefined."""
        if self._missing:
            return None
        finished, self.lines = "".join(self.lines[:end]), self.lines[end:]
        self.table_head = None
        return finished

    def rest(self) -> str:
        """Everything still open, let go (the reply ended)."""
        rest, self.lines = "".join(self.lines), []
        self.fence_line = self.table_head = None
        self._blank = self._in_list = self._html = False
        self._missing.clear()
        return rest

    def preamble(self) -> str:
        """The reference definitions seen so far, to put before a piece rendered."""
        if not self.definitions:
            return ""
        return "".join(f"{d}\n" for d in self.definitions.values()) + "\n"

    def tail(self, rows: int, partial: str, budget: int) -> str:
        """About the last `rows` lines of the open region and `partial` (the line
        being written), at most ~`budget` characters, still parsing as what they
        are: the open fence or the table header is put back on top when cut off."""
        lines = self.lines
        start = max(0, len(lines) - rows)
        head: list[str] = []
        if self.fence_line is not None and self.fence_line < start:
            head = [lines[self.fence_line]]
        elif self.table_head is not None and self.table_head < start:
            head = lines[self.table_head : self.table_head + 2]
        body = "".join(lines[start:])
        if self.fence_line is None and "|" in partial:
            partial = ""  # a table row being written: shown once whole
        if self.fence_line is None and self.table_head is None and lines:
            last = lines[-1]
            if "|" in last and (len(lines) == 1 or not lines[-2].strip()) and not partial:
                body = body[: len(body) - len(last)]  # a header waiting for its delimiter
        body += partial
        if len(body) > budget:
            body = body[-budget:]
            cut = body.find("\n")
            body = body[cut + 1 :] if 0 <= cut < len(body) - 1 else body
        return "".join(head) + body


# Rich renders these after their children, whose ends already ask for a blank line:
# they begin with one of their own, at the top of a document too.
_OPENS_WITH_BLANK = {"bullet_list_open", "ordered_list_open", "table_open", "blockquote_open"}


def _top(markdown: Markdown) -> list[Token]:
    """The top-level block tokens of a parsed piece (opening and self-contained)."""
    return [t for t in markdown.parsed if t.level == 0 and t.nesting >= 0]


def _blank_above(markdown: Markdown, blank_first: bool) -> bool:
    """Whether to put a blank line above `markdown`, whose piece follows one that
    wants a blank line after it (`blank_first`), for the spacing of one document."""
    top = _top(markdown)
    return blank_first and bool(top) and top[0].type not in _OPENS_WITH_BLANK


def finished_piece(source: str, blank_first: bool) -> tuple[RenderableType | None, bool]:
    """A finished piece to print for good (`None` if it renders nothing: only
    reference definitions), and whether the next piece wants a blank line above.

    Spaced as Rich's Markdown spaces the top-level blocks of one document: a blank
    line between two, none after a rule.
    """
    from rich.console import Group
    from rich.text import Text

    markdown = safe.markdown(source)
    top = _top(markdown)
    if not top:
        return None, blank_first
    piece = Group(Text(), markdown) if _blank_above(markdown, blank_first) else markdown
    return piece, top[-1].type != "hr"


class LiveTail:
    """The renderable of the live region: the last screenful of the open block.

    It reads the stream's state when drawn, so every redraw shows the current text,
    and costs only what fits on the screen (ui/live_region.py writes only the rows
    that changed).
    """

    def __init__(self, splitter: BlockSplitter) -> None:
        self.splitter = splitter
        self.partial = ""
        self.blank_first = False  # a blank line separates it from the piece above

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        rows = max(1, console.height - 1)  # one row spare: the cursor's
        budget = rows * max(options.max_width, 20) * 2
        source = self.splitter.tail(rows, self.partial, budget)
        if not source.strip():
            return
        markdown = safe.markdown(self.splitter.preamble() + source)
        lines = console.render_lines(markdown, options.update(height=None), pad=False)
        at_start = len(self.splitter.lines) <= rows
        if at_start and _blank_above(markdown, self.blank_first):
            lines.insert(0, [])
        for n, line in enumerate(lines[-rows:]):
            if n:
                yield Segment.line()
            yield from line
