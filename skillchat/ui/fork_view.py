"""What the user sees of a forked skill's conversation (engine/fork.py), on stderr.

A fork shows as a header line when it starts (which skill, which model, the task),
one nested line per tool call it makes (the card's title and summary on one line,
so a fork that reads ten files costs ten lines, not ten cards), the waiting line
while its model works, and a closing line with its outcome, requests, tool calls
and tokens; then the parent's get_skill card carries its answer. The REPL keeps
each fork's transcript for `/show N` of that card (`transcript_lines`).
Everything the fork's model or files wrote goes through ui/safe.py.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillchat.engine.emit import ForkEnded, ForkStarted, ToolRecord
from skillchat.ui.cards import format_arguments, summary
from skillchat.ui.safe import line

if TYPE_CHECKING:
    from rich.text import Text

TASK_CHARS = 100


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def started_line(event: ForkStarted) -> Text:
    """`⑂ digest #1 runs on its own on gpt-x: summarise the reference`."""
    head = f"⑂ {event.skill} #{event.fork} runs on its own on {event.model}: "
    return line((head, "strong"), _clip(event.task, TASK_CHARS))


def tool_line(fork: str, record: ToolRecord) -> Text:
    """`  │ read_file_in_skill skill_name="digest" · 70.3 KB complete`."""
    error = record.result.is_error
    args = _clip(format_arguments(record.arguments), TASK_CHARS)
    return line(
        ("  │ ", "muted"),
        (record.name, "strong"),
        f" {args}",
        (f" · {summary(record)}", "error" if error else "muted"),
    )


def ended_line(event: ForkEnded) -> Text:
    """`  └ answered · 2 requests · 1 tool call · 1,234 tokens`."""
    s = event.summary
    calls = s.get("tool_calls", 0)
    text = (
        f"  └ {s.get('outcome')} · {s.get('requests', 0)} requests · {calls} tool call"
        f"{'' if calls == 1 else 's'} · {s.get('tokens', 0):,} tokens on {event.model}"
    )
    return line((text, "muted" if s.get("outcome") == "answered" else "warning"))


def is_fork_result(record: ToolRecord) -> bool:
    """A get_skill card whose result is a fork's (its answer or why there is none)."""
    try:
        value = json.loads(record.result.content)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("forked") is True


def transcript_lines(event: ForkEnded) -> list[tuple[str, str] | str]:
    """The fork's whole transcript for `/show N`: the task, then each message,
    results and texts in full."""
    head = f"fork #{event.fork}: {event.skill} on {event.model}, task: {event.task}"
    lines: list[tuple[str, str] | str] = [(head, "strong")]
    for message in event.messages:
        role = str(message.get("role"))
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        lines.append((f"{role}:", "transcript.role"))
        if text:
            lines.append(text)
        for call in message.get("tool_calls") or []:
            function: dict[str, Any] = call.get("function") or {}
            lines.append(
                (f"→ {function.get('name')} {function.get('arguments')}", "transcript.call")
            )
    return lines
