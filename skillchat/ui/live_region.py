"""A streamed reply's terminal output in few bytes: pieces printed for good, and a
live region at the bottom redrawn only where it changed.

Rich writes every segment as `ESC[<style>m text ESC[0m`, pads each line to the
terminal's width with spaces (a code block's background with coloured spaces), and
its `Live` redraws the whole region after every print above it. A streamed 20k-token
answer came to eight times the bytes `llm` writes for the same text. Here the lines
Rich renders are written so:

- neighbouring segments of one style are merged, and a change of style sends only
  the attributes that change (`ESC[38;5;204m`), with a reset only where one is
  dropped (written `ESC[m`, `ESC[;1m`: an empty parameter is 0); in a printed
  piece the style carries over from line to line;
- trailing blanks are left out; a trailing run with a background is painted by
  "erase to end of line" in that background, as terminals do (background colour
  erase); every line shorter than the screen ends by erasing the rest of its row,
  so a line written over an old one, or on a row a newline scrolled in while a
  background was set, needs nothing more;
- the live region remembers the lines it shows, and a redraw rewrites only the
  rows that differ; a print above it writes over the region (rows left over are
  erased) and the region is drawn again on the next update.

The cursor sits on the region's last row (any column), or at the start of the row
where the region would begin when none is shown; it is hidden while the region is up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.segment import Segment
    from rich.style import Style

_PLAIN: tuple[frozenset[str], str | None, str | None] = (frozenset(), None, None)
# Attributes that show on a blank: trailing blanks with them are written out.
_VISIBLE_ON_BLANK = {
    "4",
    "7",
    "9",
    "21",
    "53",
}  # underline, reverse, strike, 2x underline, overline

_Sgr = tuple[frozenset[str], str | None, str | None]  # attributes, foreground, background


def _parse(codes: str) -> _Sgr:
    """`1;38;5;231;48;5;235` as (attributes, foreground, background)."""
    parts = codes.split(";")
    attrs: set[str] = set()
    fg = bg = None
    i = 0
    while i < len(parts):
        code = parts[i]
        if code in ("38", "48"):
            size = 3 if parts[i + 1 : i + 2] == ["5"] else 5
            color = ";".join(parts[i : i + size])
            fg, bg = (color, bg) if code == "38" else (fg, color)
            i += size
            continue
        number = int(code) if code.isdigit() else -1
        if 30 <= number <= 37 or 90 <= number <= 97:
            fg = code
        elif 40 <= number <= 47 or 100 <= number <= 107:
            bg = code
        elif code not in ("", "0", "39", "49"):
            attrs.add(code)
        i += 1
    return frozenset(attrs), fg, bg


def _change(old: _Sgr, new: _Sgr) -> str:
    """The escape that turns the terminal's style `old` into `new` ("" if equal)."""
    if old == new:
        return ""
    if new == _PLAIN:
        return "\x1b[m"  # an empty parameter is 0 (ECMA-48): `ESC[0m` in one byte less
    attrs, fg, bg = new
    if old[0] - attrs:  # an attribute goes: only a reset (the empty first parameter) drops it
        codes = ["", *sorted(attrs), *(c for c in (fg, bg) if c)]
    else:
        codes = sorted(attrs - old[0])
        if fg != old[1]:
            codes.append(fg or "39")
        if bg != old[2]:
            codes.append(bg or "49")
    return f"\x1b[{';'.join(codes)}m"


class LineWriter:
    """Encodes Rich's rendered lines for one console (its colour system)."""

    def __init__(self, console: Console) -> None:
        from rich.console import COLOR_SYSTEMS

        self.console = console
        self._system = COLOR_SYSTEMS.get(console.color_system or "")
        self._styles: dict[Style | None, _Sgr] = {None: _PLAIN}

    def _sgr(self, style: Style | None) -> _Sgr:
        found = self._styles.get(style)
        if found is None:
            assert style is not None  # the plain style is in the table from the start
            rendered = style.render("x", color_system=self._system) if self._system else "x"
            codes = rendered[2 : rendered.index("m")] if rendered.startswith("\x1b[") else ""
            found = self._styles[style] = _parse(codes)
        return found

    def lines(self, renderable: RenderableType, *, fresh_from: int | None = None) -> list[str]:
        """`renderable` as encoded lines, each painting its whole row.

        Lines before `fresh_from` (all of them when it is None) stand alone, from
        and back to the plain style, so that the live region can compare them with
        the rows it shows and skip those that did not change. From `fresh_from` on,
        the lines are printed one after the other on blank rows: a line starts in
        the style the one before ended in (a code block's background and colour
        carry over), and needs no erasing unless a background was set when the
        newline scrolled its row in."""
        console = self.console
        rendered = console.render_lines(renderable, console.options.update(height=None), pad=False)
        encoded: list[str] = []
        state = _PLAIN
        for n, segments in enumerate(rendered):
            alone = fresh_from is None or n < fresh_from
            text, state = self.line(segments, state, blank=not (alone or state[2]))
            if alone:
                text, state = text + _change(state, _PLAIN), _PLAIN
            encoded.append(text)
        if encoded and state != _PLAIN:
            encoded[-1] += _change(state, _PLAIN)
        return encoded

    def line(self, segments: list[Segment], state: _Sgr, *, blank: bool) -> tuple[str, _Sgr]:
        """One rendered line, written from the style `state` (on a `blank` row: the
        rest of it needs no erasing in the default background), and its end style.

        A newline keeps the style: a row a newline scrolls in may be painted in the
        background then, but every line paints its whole row (it reaches the edge,
        or ends by erasing the rest in its own or the default background)."""
        width = self.console.width
        if self.console.no_color:
            from rich.segment import Segment

            segments = list(Segment.remove_color(segments))
        runs: list[tuple[str, _Sgr]] = []
        for segment in segments:
            if segment.control or not segment.text:
                continue
            sgr = self._sgr(segment.style)
            if runs and runs[-1][1] == sgr:
                runs[-1] = (runs[-1][0] + segment.text, sgr)
            else:
                runs.append((segment.text, sgr))
        cells = sum(map(_cells, (text for text, _ in runs)))
        fill: str | None = None  # the background the rest of the row is erased in
        while runs:  # trailing blanks: left out, or erased in their background
            text, sgr = runs[-1]
            kept = text.rstrip(" ")
            if kept == text or sgr[0] & _VISIBLE_ON_BLANK or (sgr[2] and cells < width):
                break  # written out as they are
            cells -= len(text) - len(kept)
            if kept:
                runs[-1] = (kept, sgr)
            else:
                runs.pop()
            if sgr[2]:  # they reach the edge: erasing to the end of the row paints them
                fill = sgr[2]
            if kept or sgr[2]:
                break
        parts: list[str] = []
        for text, sgr in runs:
            if not (sgr[0] & _VISIBLE_ON_BLANK or text.strip(" ")):
                # Blanks show only their background: the colour and bold at hand do.
                sgr = (state[0] - _VISIBLE_ON_BLANK, state[1], sgr[2])
            parts.append(_change(state, sgr))
            parts.append(text)
            state = sgr
        if cells < width and (fill or not blank):
            # Erase the rest, in the background only (no underline, no reverse).
            erase = (state[0] - _VISIBLE_ON_BLANK, state[1], fill)
            parts.append(_change(state, erase) + "\x1b[K")
            state = erase
        return "".join(parts), state


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


class LiveRegion:
    """The bottom rows of the terminal, rewritten in place (see the module's docstring)."""

    def __init__(self, console: Console) -> None:
        self.writer = LineWriter(console)
        self.file = console.file
        self._shown: list[str] = []
        self._write("\x1b[?25l")  # no cursor jumping about while the region moves

    def _home(self) -> str:
        """From the cursor to the start of the region's first row."""
        rows = len(self._shown)
        return "" if not rows else "\r" + (f"\x1b[{rows - 1}A" if rows > 1 else "")

    def _write(self, text: str) -> None:
        self.file.write(text)
        self.file.flush()

    def print(self, renderable: RenderableType) -> None:
        """Print `renderable` for good where the region begins (rows the region
        already shows as they should be are kept); the region is taken down (drawn
        again by the next `update`)."""
        shown = self._shown
        lines = self.writer.lines(renderable, fresh_from=len(shown))
        parts = [self._home()]
        for n, line in enumerate(lines):
            parts.append("\n" if n < len(shown) and shown[n] == line else f"{line}\n")
        if len(shown) > len(lines):
            parts.append("\x1b[J")
        self._write("".join(parts))
        self._shown = []

    def update(self, renderable: RenderableType | None) -> None:
        """Show `renderable` (None: nothing) in the region, rewriting changed rows."""
        lines = self.writer.lines(renderable) if renderable is not None else []
        shown = self._shown
        parts = [self._home()]
        for n, line in enumerate(lines):
            if n:
                parts.append("\n")
            if n >= len(shown) or shown[n] != line:
                parts.append(line)
        if len(lines) < len(shown):  # rows left over below: erased
            parts.append("\n\x1b[J\x1b[A" if lines else "\x1b[J")
        self._shown = lines
        self._write("".join(parts))

    def close(self) -> None:
        """Take the region down and give the cursor back."""
        self.update(None)
        self._write("\x1b[?25h")
