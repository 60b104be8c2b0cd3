"""Tool cards: every tool call shown to the user as a small Rich panel.

A card says which tool ran, with what arguments, and what came back: size, whether
it was cut, errors in red, and a preview collapsed to its first and last lines, so
a 2 MB file read costs a dozen lines of terminal. get_skill's card never shows the
SKILL.md body (the tool's `preview` is the file list). Everything model- or
file-provided goes through ui/safe.py: a `Text`, never markup, so a `[red]` in a
file stays literal, and control characters are shown, not obeyed; the tool's name
and arguments also show their invisible characters (`safe.exact`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillchat.engine.emit import ToolRecord
from skillchat.ui.safe import clean, exact

if TYPE_CHECKING:
    from rich.console import RenderableType

MAX_LINES = 8
MAX_LINE_CHARS = 160
MAX_ARGUMENT_CHARS = 120


def human_size(size: int) -> str:
    """Bytes as a short figure: 812 B, 1.6 KB, 2.0 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def format_arguments(raw: str) -> str:
    """`skill_name="pdf", file_path="a.md"`, or the raw text when it is not a JSON object."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return _clip(" ".join(raw.split()), MAX_ARGUMENT_CHARS)
    if not isinstance(args, dict):
        return _clip(raw, MAX_ARGUMENT_CHARS)
    parts = [
        f"{key}={_clip(json.dumps(value, ensure_ascii=False), MAX_ARGUMENT_CHARS)}"
        for key, value in args.items()
    ]
    return ", ".join(parts)


def collapse(text: str, max_lines: int = MAX_LINES) -> list[str]:
    """At most `max_lines` lines: the first ones, a "… N more lines" marker, the last two."""
    lines = [_clip(line, MAX_LINE_CHARS) for line in text.rstrip("\n").splitlines()]
    if len(lines) <= max_lines:
        return lines
    head, tail = max_lines - 3, 2
    hidden = len(lines) - head - tail
    return [*lines[:head], f"… {hidden} more lines …", *lines[-tail:]]


def _loaded_again(record: ToolRecord) -> bool:
    """The user's own `/name` (or `/retry` of one) for a skill already in the chat:
    not sent again, which is no error of theirs."""
    return record.synthetic and record.result.error_code == "ALREADY_IN_CONTEXT"


def summary(record: ToolRecord) -> str:
    """The card's corner line: size and truncation, or the error code."""
    result = record.result
    if _loaded_again(record):
        return "already loaded"
    if result.is_error:
        return f"error: {result.error_code or 'ERROR'}"
    parts = [human_size(result.size)] if result.size is not None else []
    parts.append("truncated" if result.truncated else "complete")
    return " · ".join(parts)


def tool_card(record: ToolRecord, number: int | None = None) -> RenderableType:
    """The panel for one tool call; `number` (the REPL's `/show N`) leads its title."""
    from rich.panel import Panel
    from rich.text import Text

    again = _loaded_again(record)
    error = record.result.is_error and not again
    title = Text(f"#{number} " if number is not None else "", style="muted")
    title.append(exact(record.name, style="strong"))
    if record.synthetic:  # added by skillchat, not called by the model
        skill = json.loads(record.arguments).get("skill_name")
        title.append(clean(f" · /{skill}") if skill else " · attached", style="muted")
    body = Text()
    body.append("args  ", style="muted")
    body.append(exact(format_arguments(record.arguments) or "(none)"))
    preview = collapse(clean(record.result.preview))
    if again:
        preview = ["already in this chat, unchanged: not sent again"]
    if preview:
        body.append("\n")
        body.append("\n".join(preview), style="error" if error else "")
    return Panel(
        body,
        title=title,
        title_align="left",
        subtitle=Text(clean(summary(record)), style="error" if error else "muted"),
        subtitle_align="right",
        border_style="card.border.error" if error else "card.border",
    )
