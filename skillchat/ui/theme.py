"""skillchat's styles by name: one Rich theme, which every console is made with.

Code says what a piece of text is (`"error"`, `"consent.title"`), never how it looks:
the look of the whole program is this table, so a colour changes in one place and
a reader sees at once which things share a look on purpose. Rich resolves a name
against the printing console's theme when it renders, which is why consoles come
from ui/console.py (tests that build their own pass `theme()`). Names are plain
strings, so a module below `ui` (chats/export.py) can use them without importing
this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.theme import Theme

STYLES: dict[str, str] = {
    # What every part of the program says the same way.
    "error": "red",
    "warning": "yellow",
    "ok": "green",
    "muted": "dim",  # secondary text: hints, sizes, notes, progress
    "strong": "bold",  # the thing a line is about: a name, an id, a model
    "key": "cyan",  # a key of a shown result (/show)
    "marker": "reverse",  # an invisible character made visible (ui/safe.py)
    # Skills in tables and reports.
    "skill": "bold cyan",
    # Tool cards (ui/cards.py).
    "card.border": "cyan",
    "card.border.error": "red",
    # run_command's consent card and its running panel (ui/consent.py).
    "consent.title": "bold yellow",
    "consent.border": "yellow",
    # A panel of facts (`skills show`).
    "panel.border": "cyan",
    # `chats show`'s transcript (chats/export.py).
    "transcript.role": "bold cyan",
    "transcript.compaction": "bold magenta",
    "transcript.call": "yellow",
}


# On a light background (`[ui] theme`, ui/background.py): yellow and cyan are
# unreadable on white; the same meanings in darker colours.
LIGHT: dict[str, str] = {
    "warning": "dark_orange3",
    "key": "blue",
    "skill": "bold blue",
    "card.border": "blue",
    "consent.title": "bold dark_orange3",
    "consent.border": "dark_orange3",
    "panel.border": "blue",
    "transcript.role": "bold blue",
    "transcript.call": "dark_orange3",
}


def theme(light: bool = False) -> Theme:
    """The theme of every console (Rich is imported only when a console is made)."""
    from rich.theme import Theme

    return Theme({**STYLES, **LIGHT} if light else STYLES)
