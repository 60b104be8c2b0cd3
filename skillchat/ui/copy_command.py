"""`/copy [N]`: the last answer of the chat, or its Nth (1 the first), to the
clipboard (ui/clipboard.py); printed plainly, control characters made visible,
when nothing could take it. An answer is a reply of the model's with text and no
tool calls: narration before a tool round is not one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillchat.errors import UsageError
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl


def answers(messages: list[dict[str, Any]]) -> list[str]:
    return [
        m["content"]
        for m in messages
        if m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
        and m["content"].strip()
        and not m.get("tool_calls")
    ]


def copy_answer(repl: Repl, arg: str) -> None:
    from skillchat.ui.clipboard import copy

    found = answers(repl.session.chat.messages)
    if not found:
        raise UsageError("nothing to copy: no answer in this chat yet")
    if arg and (not arg.isdigit() or not 1 <= int(arg) <= len(found)):
        raise UsageError(f"/copy takes the number of an answer: 1-{len(found)} (none: the last)")
    number = int(arg) if arg else len(found)
    text = found[number - 1]
    out = repl.consoles.out
    ways = copy(text, out.file if out.is_terminal else None)
    what = f"answer {number} ({safe.counted(len(text), 'character')})"
    if ways:
        out.print(safe.line((f"copied {what} to the clipboard: {' and '.join(ways)}", "muted")))
        return
    out.print(safe.line((f"no clipboard here: {what} below, to select by hand", "warning")))
    out.print(safe.text(text))
