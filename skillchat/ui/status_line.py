"""The REPL's bottom line, shaped by the user as Codex's `tui.status_line` is:
`[ui] status_line = ["model", "context", "cost"]` picks the items and their order.

Items: `model`, `chat` (its id), `skills` (activated in this chat), `tokens` (used
in this session's chat, those read from the prompt cache said), `cost` (when the
provider's prices are known), `context` (how full the model's window is, as
`/context` measures it, taken after each turn: measuring on every keystroke would
cost a redraw). The default is the line as it always was: model, chat, skills,
tokens. Whatever the choice, what must not go unseen stays: files attached for
the next message, forks' tokens, and NOT SAVED. An unknown item is one line at
start and left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillchat.ui.fork_view import fork_tokens
from skillchat.ui.safe import one_line

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl

ITEMS = ("model", "chat", "skills", "tokens", "cost", "context")
DEFAULT = ("model", "chat", "skills", "tokens")


def status_items(configured: Sequence[str] | None, warn: Callable[[str], None]) -> list[str]:
    """The items to show, in order; unknown ones said once and left out."""
    if configured is None:
        return list(DEFAULT)
    unknown = [item for item in configured if item not in ITEMS]
    if unknown:
        shown = ", ".join(one_line(item, 40) for item in unknown)
        warn(f"[ui] status_line: unknown item(s) {shown} left out (known: {', '.join(ITEMS)})")
    return [item for item in configured if item in ITEMS]


def status_line(repl: Repl, items: Sequence[str]) -> str:
    """One line, control characters visible (names come from skills and the config)."""
    chat = repl.session.chat
    parts: list[str] = []
    for item in items:
        if item == "model":
            parts.append(repl.session.target.model)
        elif item == "chat":
            parts.append(f"chat {repl.recorder.chat_id or 'new'}")
        elif item == "skills" and chat.activated:
            parts.append("skills: " + ", ".join(chat.activated))
        elif item == "tokens":
            cached = f" ({repl.cached:,} cached)" if repl.cached else ""
            parts.append(f"{repl.tokens:,} tokens{cached}")
        elif item == "cost" and repl.cost is not None:
            parts.append(f"${repl.cost:.4f}")
        elif item == "context" and repl.context_share is not None:
            parts.append(f"context {repl.context_share:.0f}%")
    if chat.attachments and chat.attachments.pending:
        parts.append(f"attached: {len(chat.attachments.pending)} for the next message")
    parts += fork_tokens(repl.fork_runs)
    if repl.recorder.failure:
        parts.append("NOT SAVED")
    return one_line(" · ".join(parts))
