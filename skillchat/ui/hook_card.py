"""The REPL's questions about hooks (skillchat/hooks/dispatch.py): trust a project's
or a skill's hook before it first runs, or let a call through that a `pre_tool_use`
hook wants the user to decide. Yes or no; a trusted hook stays trusted until its
line or a file it names changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.redact import redact
from skillchat.ui.safe import clean, exact, text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from skillchat.hooks.dispatch import HookQuestion


def hook_card(question: HookQuestion) -> tuple[Text, str]:
    """The card and the question to put to the user."""
    hook = question.hook
    if question.kind == "trust":
        card = text("a hook that is not trusted wants to run\n", style="consent.title")
    else:
        card = text("a hook asks you about this tool call\n", style="consent.title")
    card.append("  event: ", style="muted")
    card.append(exact(hook.event))
    card.append("\n  from: ", style="muted")
    card.append(exact(hook.where))
    card.append("\n  command: ", style="muted")
    card.append(exact(redact(hook.command)))  # a token in it stays off the screen
    where = "in the sandbox" if hook.sandboxed else "on this machine, as you"
    card.append(f"\n  runs: {where}", style="muted")
    if question.kind == "trust":
        card.append(clean(f"\n  files: {question.detail}"), style="muted")
        return card, "Trust and run it? [y]es / [n]o: "
    card.append(clean(f"\n  why: {question.detail}"), style="muted")
    return card, "Allow the call? [y]es / [n]o: "


def shown(console: Console, answer: str) -> bool:
    console.print(text("yes" if answer == "y" else "no"))
    return answer == "y"
