"""Text from outside skillchat, made harmless for a terminal.

Skill names, descriptions and bodies, file contents and file names, the model's
text, tool names and arguments, tool results and provider errors are all written
by someone else. Printed raw, a string can drive the terminal: `ESC ]52;` writes the
user's clipboard, `ESC ]8;` makes a link that hides its target, `ESC ]0;` retitles
the window, `ESC [2J` wipes the screen, a carriage return or a backspace overprints
what the user sees, and a bidi override (U+202E) reorders a line so that it reads
differently from what it is. Printed through Rich markup, `[/bold]` crashes the
command and `[link=...]` makes a link.

So every such string goes through `clean` (or `one_line`, or the renderables built
on it) before it is printed, wherever it is printed:

- a C0 control character other than newline and tab becomes its Unicode control
  picture (ESC → ␛, BEL → ␇, backspace → ␈, a lone carriage return → ␍; `\\r\\n`
  becomes a plain newline first, so Windows files read normally), DEL becomes ␡;
- a C1 control character (U+0080-U+009F, which some terminals obey as ESC
  sequences) and a bidi embedding, override or isolate (U+202A-U+202E,
  U+2066-U+2069) become the visible text `<U+009B>`;
- the result is only ever handed to Rich as `Text` or `Markdown`, never as markup.

Where the exact characters matter (a command the user is asked to approve, a tool
call's arguments), `exact` also shows what prints as nothing or as a plain space:
zero-width and joiner characters (U+200B-U+200D, U+2060, U+FEFF), direction marks
(U+200E, U+200F, U+061C), every other format character, tag characters
(U+E0000-U+E007F), variation selectors, and spaces other than U+0020 (U+00A0 ...).
Each becomes a `<U+200B>` marker in reverse video, so two commands that look the
same on the card are the same. (Not in `clean`: a model's reply may use a zero-width
joiner or a variation selector inside an emoji.)

Visible rather than dropped: the user sees that the text held something odd, and
a deleted character cannot join two harmless halves into one harmful sequence.
Rich's Markdown is still rendered for the model's replies, with `hyperlinks=False`:
a link prints its target beside its text instead of becoming a terminal hyperlink
whose target the user cannot see.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.markdown import Markdown
    from rich.text import Text

_PICTURES = {
    **{chr(c): chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\n\t"},
    "\x7f": "\u2421",  # ␡
}
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# The characters JSON leaves raw that a terminal may still obey (JSON escapes C0).
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

# What prints as nothing or as a space, other than C0/C1 (every Unicode format
# character, category Cf, is here: tests/test_cards.py checks it against unicodedata).
_INVISIBLE = re.compile(
    "[\u00a0\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
MARKER_STYLE = "marker"  # ui/theme.py


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return _PICTURES.get(char) or f"<U+{ord(char):04X}>"


def clean(text: str) -> str:
    """`text` with every character a terminal could obey made visible; newlines
    and tabs kept (`\\r\\n` read as a newline)."""
    if _UNSAFE.search(text) is None:  # the common case: no copy, one C-speed scan
        return text
    return _UNSAFE.sub(_visible, text.replace("\r\n", "\n"))


def one_line(text: str, limit: int | None = None) -> str:
    """`clean(text)` on one line: runs of whitespace (newlines too) become one
    space, and the result is cut to `limit` characters with an ellipsis."""
    if text.isprintable() and "  " not in text and text.strip(" ") == text:
        flat = text  # already one clean line (the common case: a listing's 10,000 titles)
    else:
        flat = " ".join(clean(text).split())
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1] + "…"
    return flat


def text(value: str, style: str = "") -> Text:
    """A Rich `Text` of `clean(value)`: styled, never parsed for markup."""
    from rich.text import Text

    return Text(clean(value), style=style)


def exact(value: str, style: str = "") -> Text:
    """`text(value, style)` with every invisible character also shown, as a
    `<U+200B>` marker in reverse video: for what the user approves or checks
    character by character (commands, tool arguments)."""
    from rich.text import Text

    shown = Text(style=style)
    end = 0
    for match in _INVISIBLE.finditer(value):
        shown.append(clean(value[end : match.start()]))
        shown.append(f"<U+{ord(match.group()):04X}>", style=MARKER_STYLE)
        end = match.end()
    shown.append(clean(value[end:]))
    return shown


def line(*parts: str | tuple[str, str]) -> Text:
    """One `Text` from plain strings and (string, style) pairs, each part cleaned:
    the safe `Text.assemble`."""
    from rich.text import Text

    return Text.assemble(*(clean(p) if isinstance(p, str) else (clean(p[0]), p[1]) for p in parts))


def markdown(source: str) -> Markdown:
    """`source` rendered as Markdown after `clean`, links shown with their target."""
    from rich.markdown import Markdown

    return Markdown(clean(source), hyperlinks=False)


def json_text(document: Any, indent: int | None = None) -> str:
    """`json.dumps(document, ensure_ascii=False)` with the characters JSON leaves
    raw but a terminal may obey (DEL, C1, bidi controls) written as `\\uXXXX`
    escapes: the same JSON to a parser, nothing live on a terminal. (Outside
    strings JSON has only ASCII, so every such character is inside a string.)"""
    dumped = json.dumps(document, ensure_ascii=False, indent=indent)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 skill`, `3 skills`: a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
