"""The REPL's card for an MCP server's question (`elicitation/create`).

The card names the server that asks (its config name: the user's own), then shows
its message and each field with its type, whether it is required, its default and
its choices; every text of the server's was cleaned when the form was read
(mcp/elicit.py) and is drawn without markup. One key answers: [a]nswer, [d]ecline,
[c]ancel (Enter, Escape, Ctrl-C: cancel), as every question does (ui/consent.py:
typed-ahead keys dropped). Answering reads each field on a line of its own, in the
terminal's line mode, what was typed before the field showed dropped; an empty line
takes the default (or leaves an optional field out), and a value that does not fit
the field's type, choices or bounds is said and asked again. End of input at a
field cancels. A URL-mode question shows the URL, never opens it: [a]ccept says the
user opened it themselves.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from skillchat.errors import McpError
from skillchat.mcp.elicit import ElicitAnswer, Field, Form, checked
from skillchat.ui.ask_key import ask_key, terminal_mode
from skillchat.ui.safe import clean, exact, text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from skillchat.engine.questions import Questions
    from skillchat.ui.console import Consoles


class ElicitCard:
    """Asks the user a server's question (see the module docstring)."""

    def __init__(self, consoles: Consoles, questions: Questions) -> None:
        self.consoles = consoles
        self.questions = questions

    @property
    def console(self) -> Console:
        return self.consoles.out

    def __call__(self, form: Form) -> ElicitAnswer:
        console = self.console
        if form.problem:
            line = f"MCP server '{form.server}' asked a question: declined ({form.problem})"
            console.print(text(line, style="warning"))
            return ElicitAnswer("decline")
        card = text(f"MCP server '{form.server}' asks\n", style="consent.title")
        card.append("  ")
        card.append(exact(form.message or "(no message)"))
        if form.url is not None:
            card.append("\n  open this address yourself (skillchat does not): ", style="muted")
            card.append(exact(form.url))
            prompt = "Opened it? [a]ccept / [d]ecline / [c]ancel: "
        else:
            for item in form.fields:
                card.append_text(_field_line(item))
            prompt = "[a]nswer / [d]ecline / [c]ancel: "
        key = ask_key(console, card, prompt, "adc", self.questions)
        action = {"a": "accept", "d": "decline"}.get(key, "cancel")
        console.print(text({"a": "answer", "d": "decline"}.get(key, "cancel")))
        if action != "accept" or form.url is not None:
            return ElicitAnswer(action)  # type: ignore[arg-type]
        content: dict[str, Any] = {}
        for item in form.fields:
            value = self._read(item)
            if value is _CANCELLED:
                console.print(text("cancelled", style="muted"))
                return ElicitAnswer("cancel")
            if value is not None:
                content[item.name] = value
        return ElicitAnswer("accept", content)

    def _read(self, item: Field) -> Any:
        """One field's value, typed until it fits; None: left out; `_CANCELLED`."""
        shown = _shown(item.default)
        hint = f" [{shown}]" if shown else (" (required)" if item.required else "")
        while True:
            line = _line(self.console, text(f"  {item.title or item.name}{hint}: ", "strong"))
            if line is None:
                return _CANCELLED
            if line == "":
                if item.default is not None:
                    return item.default
                if not item.required:
                    return None
                self.console.print(text("    required", style="warning"))
                continue
            try:
                return checked(item, line)
            except McpError as why:
                self.console.print(text(f"    must be {why}", style="warning"))


_CANCELLED = object()


def _shown(value: Any) -> str:
    """A default as it would be typed (a list's choices joined by commas)."""
    if value is None:
        return ""
    return ", ".join(value) if isinstance(value, list) else str(value)


def _field_line(item: Field) -> Text:
    """A field's line on the card; its name, default and choices are the server's
    (kept exact for the answer), cleaned here for the screen."""
    kind = f"list of {item.kind}" if item.kind == "array" else item.kind
    line = text(f"\n  · {item.name}", style="strong")
    line.append(f" ({kind}{', required' if item.required else ''})", style="muted")
    if item.title:
        line.append(clean(f" {item.title}"))
    if item.description:
        line.append(clean(f": {item.description}"), style="muted")
    if item.choices:
        labels = item.labels or item.choices
        pairs = zip(item.choices, labels, strict=True)
        shown = [f"{c} ({label})" if label != c else c for c, label in pairs]
        line.append(clean(f"\n      one of: {', '.join(shown)}"), style="muted")
    if item.default is not None:
        line.append(clean(f"\n      default: {_shown(item.default)}"), style="muted")
    if item.minimum is not None or item.maximum is not None:
        low = "" if item.minimum is None else f"{item.minimum:g}"
        high = "" if item.maximum is None else f"{item.maximum:g}"
        line.append(f"\n      between {low or '…'} and {high or '…'}", style="muted")
    return line


def _line(console: Console, prompt: Text) -> str | None:
    """A line typed after `prompt` showed (echoed, line mode; typed-ahead dropped);
    None at end of input or Ctrl-C."""
    with terminal_mode(_line_mode):
        try:
            console.print(prompt, end="")
            line = sys.stdin.readline()
        except KeyboardInterrupt:
            return None
    return line.rstrip("\r\n").strip() if line else None


def _line_mode(fd: int, mode: list[Any]) -> None:
    """Whole lines, echoed; what was typed before dropped."""
    import termios

    mode[3] |= termios.ICANON | termios.ECHO
    termios.tcsetattr(fd, termios.TCSAFLUSH, mode)
