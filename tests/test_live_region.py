"""The terminal writer of streamed replies (ui/live_region.py): what it leaves on a
terminal (pyte, an emulator) is what Rich's own output leaves, in fewer bytes."""

from __future__ import annotations

import io

import pyte
from rich.console import Console
from test_stream_render import SAMPLE

from skillchat.ui import safe
from skillchat.ui.live_region import LiveRegion

ROWS, COLUMNS = 60, 80
TEXT = SAMPLE + "\n```python\ndef f(x):\n    return x * 2  # doubled\n```\n\nThe **end**.\n"


def console(file: io.StringIO) -> Console:
    return Console(file=file, force_terminal=True, width=COLUMNS, height=ROWS, color_system="256")


def screen_of(output: str) -> list[list[tuple[str, str, str, bool, bool]]]:
    """Each cell: its character, background, and for a visible character its
    colour, bold and underline (a blank's colour shows nothing)."""
    screen = pyte.Screen(COLUMNS, ROWS)
    pyte.Stream(screen).feed(output.replace("\n", "\r\n"))
    rows = []
    for y in range(ROWS):
        line = screen.buffer[y]
        cells = []
        for x in range(COLUMNS):
            c = line[x]
            shown = c.data != " "
            fg = c.fg if shown else ""
            cells.append((c.data, c.bg, fg, shown and c.bold, c.underscore))
        rows.append(cells)
    return rows


def rich_output(text: str) -> str:
    file = io.StringIO()
    console(file).print(safe.markdown(text))
    return file.getvalue()


def test_a_printed_piece_looks_as_rich_prints_it_in_fewer_bytes() -> None:
    ours = io.StringIO()
    region = LiveRegion(console(ours))
    region.print(safe.markdown(TEXT))
    region.close()
    theirs = rich_output(TEXT)
    assert screen_of(ours.getvalue()) == screen_of(theirs)
    assert len(ours.getvalue()) < len(theirs) / 2


def test_updates_rewrite_only_what_changed_and_leave_nothing_behind() -> None:
    ours = io.StringIO()
    region = LiveRegion(console(ours))
    region.update(safe.markdown("# Title\n\nfirst line\n\n- a\n- b\n- c\n"))
    before = len(ours.getvalue())
    region.update(safe.markdown("# Title\n\nfirst line\n\n- a\n- b\n- c, longer\n"))
    redraw = ours.getvalue()[before:]
    assert "Title" not in redraw and "c, longer" in redraw  # unchanged rows skipped
    region.update(safe.markdown("# Title\n\n```\ncode\n```\n"))  # fewer rows: the rest erased
    region.print(safe.markdown(TEXT))
    region.update(safe.markdown("a tail"))
    region.update(None)
    region.close()
    assert screen_of(ours.getvalue()) == screen_of(rich_output(TEXT))
