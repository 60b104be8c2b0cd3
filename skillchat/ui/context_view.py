"""`/context`: what fills the context window now, one row per part
(engine/context_parts.py measures them), the total against the request budget and
the model's window, and what `/compact` would free. Skill names come from skill
folders: printed through ui/safe.py like every other name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.errors import UsageError
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl

NAME_CHARS = 40  # a skill's row name is cut here: the numbers stay in their column


def show_context(repl: Repl, arg: str) -> None:
    if arg:
        raise UsageError("/context takes no arguments")
    from skillchat.engine.context_parts import measure

    parts = measure(repl.session.chat)
    rows: list[tuple[str, int]] = [
        ("system prompt", parts.system),
        ("skills catalog", parts.catalog),
        ("tool definitions", parts.tools),
    ]
    rows += [(f"skill {safe.one_line(name, NAME_CHARS)}", n) for name, n in parts.skills.items()]
    rows += [
        ("attachments", parts.attachments),
        ("history", parts.history),
        ("tool results", parts.results),
    ]
    width = max(len(name) for name, _ in rows) + 2
    out = repl.consoles.out
    window = parts.window
    for name, count in rows:
        share = f"  {count * 100 / window:4.1f}%" if window else ""
        out.print(safe.line(name.ljust(width), (f"{count:>9,}", "strong"), (share, "muted")))
    total = f"~{parts.total:,} tokens"
    of = f" of the model's {window:,}-token window" if window else " (the model's window: unknown)"
    percent = f" ({parts.total * 100 / window:.0f}%)" if window else ""
    out.print(safe.line(("total ", "strong"), total, of, percent))
    out.print(
        safe.line(
            (f"requests are fitted to ~{parts.budget:,} tokens of prompt and messages", "muted")
        )
    )
    frees = (
        f"/compact would free up to ~{parts.compact_frees:,} tokens (the older turns; "
        "their summary and the re-attached skills take some back)"
        if parts.compact_frees
        else "/compact would free nothing: there are no turns before the last ones it keeps"
    )
    out.print(safe.line((frees, "muted")))
    out.print(safe.line(("estimates: characters / 3, as fitting counts them", "muted")))
