"""Styles are names in one Rich theme (skillchat/ui/theme.py): no module spells a
colour, every name a module uses is in the theme, and every console has it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rich.console import Console
from rich.text import Text

from skillchat.ui.console import Consoles
from skillchat.ui.theme import STYLES, theme

PACKAGE = Path(__file__).resolve().parents[1] / "skillchat"
COLOURS = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}
ATTRIBUTES = {"bold", "dim", "italic", "underline", "reverse", "blink", "strike", "not", "on"}
WORDS = COLOURS | {f"bright_{c}" for c in COLOURS} | ATTRIBUTES
# Where a style name is written as such: a `style=`/`border_style=` argument, or a
# (style, text) line of chats/export.py. (The styles of ui/safe.line's (text, style)
# pairs look like any other pair to a pattern: the colour test above covers them.)
NAMED = re.compile(r"""style="([a-z][a-z.]*)"|\("([a-z][a-z.]*)", f""")


def strings(path: Path) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_no_module_spells_a_colour() -> None:
    """A literal made only of Rich's colour and attribute words is a look, not a name."""
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {value!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "theme.py"
        for line, value in strings(path)
        if set(value.split()) <= WORDS and set(value.split()) - {"on", "not"}
    ]
    assert found == [], "\n".join(found)


def test_every_style_name_written_is_in_the_theme() -> None:
    """A name missing from the theme would print unstyled (a Panel's border would
    raise): the modules that print are searched for the names they write."""
    printing = [*(PACKAGE / "ui").glob("*.py"), *(PACKAGE / "cli").glob("*.py")]
    used = {
        match.group(1) or match.group(2)
        for path in [*printing, PACKAGE / "chats" / "export.py"]
        for match in NAMED.finditer(path.read_text(encoding="utf-8"))
    }
    assert {"error", "consent.title", "transcript.role"} <= used, "the pattern has gone stale"
    assert used <= set(STYLES), sorted(used - set(STYLES))


def test_every_console_renders_the_names() -> None:
    consoles = Consoles()
    for console in (consoles.out, consoles.err):
        for name in STYLES:
            assert console.get_style(name) == theme().styles[name]


def test_a_name_renders_as_its_style() -> None:
    console = Console(
        theme=theme(), color_system="standard", force_terminal=True, no_color=False, width=40
    )
    with console.capture() as captured:
        console.print(Text("boom", style="error"))
    assert "\x1b[31mboom" in captured.get()
