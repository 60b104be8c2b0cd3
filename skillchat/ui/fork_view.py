"""What the user sees of a forked skill's conversation (engine/fork.py), on stderr.

On a terminal a running fork is one live card (`ForkCards`, drawn by
ui/live_region.py at the bottom of the screen): which skill on which model and the
task, its last few tool calls as nested lines (the card's title and summary on one
line, so a fork that reads ten files does not print ten cards), and its requests
and tokens so far. When it ends the card collapses to one line that stays: outcome,
requests, tool calls, tokens, model. Forks running at once have a card each, in the
one region. The card is taken down while a fork's tool runs (a command may ask
for consent, with its own card) and while a notice is printed; the next event
draws it again. On a pipe there is no region: a start line, one nested line per
tool call and an end line, for good. The parent's get_skill card then carries the
answer; the REPL keeps each fork's transcript for `/show N` of that card
(`transcript_lines`). Everything the fork's model or files wrote goes through
ui/safe.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.engine.emit import ForkEnded, ForkStarted, ToolRecord
from skillchat.ui.cards import format_arguments, summary
from skillchat.ui.safe import counted, line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from skillchat.engine.events import Usage
    from skillchat.ui.live_region import LiveRegion

TASK_CHARS = 100


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def started_line(event: ForkStarted) -> Text:
    """`⑂ digest #1 runs on its own on gpt-x: summarise the reference`."""
    head = f"⑂ {event.skill} #{event.fork} runs on its own on {event.model}: "
    return line((head, "strong"), _clip(event.task, TASK_CHARS))


def tool_line(record: ToolRecord) -> Text:
    """`  │ read_file_in_skill skill_name="digest" · 70.3 KB complete`."""
    error = record.result.is_error
    args = _clip(format_arguments(record.arguments), TASK_CHARS)
    return line(
        ("  │ ", "muted"),
        (record.name, "strong"),
        f" {args}",
        (f" · {summary(record)}", "error" if error else "muted"),
    )


def ended_line(event: ForkEnded, head: str = "  └ ") -> Text:
    """`  └ answered · 2 requests · 1 tool call · 1,234 tokens on gpt-x` (on a
    terminal, the collapsed card: `⑂ digest #1 answered · ...`)."""
    s = event.summary
    calls = s.get("tool_calls", 0)
    text = (
        f"{head}{s.get('outcome')} · {counted(s.get('requests', 0), 'request')} · "
        f"{counted(calls, 'tool call')} · {s.get('tokens', 0):,} tokens on {event.model}"
    )
    return line((text, "muted" if s.get("outcome") == "answered" else "warning"))


@dataclass
class _Card:
    """A running fork as its card shows it."""

    started: ForkStarted
    tools: list[Text] = field(default_factory=list)
    requests: int = 0
    tokens: int = 0
    waiting: bool = False

    def lines(self) -> list[Text]:
        lines = [started_line(self.started)]
        hidden = len(self.tools) - ForkCards.TOOLS_SHOWN
        if hidden > 0:
            lines.append(line((f"  │ … {counted(hidden, 'earlier tool call')}", "muted")))
        lines += self.tools[-ForkCards.TOOLS_SHOWN :]
        state = "waiting for the model" if self.waiting else "working"
        status = f"  ⋯ {state} · {counted(self.requests, 'request')} · {self.tokens:,} tokens"
        lines.append(line((status, "muted")))
        for text in lines:
            text.no_wrap, text.overflow = True, "ellipsis"  # a row each: the region stays put
        return lines


class ForkCards:
    """The running forks' cards in a live region of a terminal's stderr; each
    collapses to its `ended_line` when its fork ends (see the module's docstring).
    Called on the chat's thread only (engine/parallel_forks.py relays there)."""

    TOOLS_SHOWN = 3  # a card's last tool calls; earlier ones are counted

    def __init__(self, console: Console) -> None:
        self.console = console
        self.cards: dict[int, _Card] = {}
        self._region: LiveRegion | None = None

    def start(self, event: ForkStarted) -> None:
        self.cards[event.fork] = _Card(event)
        self._draw()

    def tool(self, fork: int, record: ToolRecord) -> None:
        if (card := self.cards.get(fork)) is not None:
            card.tools.append(tool_line(record))
            self._draw()

    def usage(self, fork: int, usage: Usage) -> None:
        if (card := self.cards.get(fork)) is not None:
            card.requests += 1
            card.tokens += usage.total_tokens
            self._draw()

    def waiting(self, fork: int, waiting: bool) -> None:
        card = self.cards.get(fork)
        if card is not None and card.waiting != waiting:
            card.waiting = waiting
            self._draw()

    def end(self, event: ForkEnded) -> None:
        """The fork's card collapses to one line, printed for good above the others."""
        self.cards.pop(event.fork, None)
        collapsed = ended_line(event, f"⑂ {event.skill} #{event.fork} ")
        if self._region is None:
            self.console.print(collapsed, soft_wrap=True)
        else:
            self._region.print(collapsed)
        self._draw()

    def pause(self) -> None:
        """Take the cards down (the cursor back) until the next event draws them:
        what comes now (a consent question, a notice) prints as if they were not there."""
        if self._region is not None:
            region, self._region = self._region, None
            region.close()

    def _draw(self) -> None:
        if not self.cards:
            self.pause()
            return
        from rich.console import Group

        from skillchat.ui.live_region import LiveRegion

        if self._region is None:
            self._region = LiveRegion(self.console)
        self._region.update(Group(*(t for c in self.cards.values() for t in c.lines())))


def fork_tokens(runs: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """`forks: 2,310 tokens on local-qwen`, per model, from forks' (model, summary):
    their requests are not in the chat's own usage (`ask`'s last line, the toolbar)."""
    tokens: dict[str, int] = {}
    for model, run in runs:
        tokens[model] = tokens.get(model, 0) + int(run.get("tokens") or 0)
    return [f"forks: {n:,} tokens on {model}" for model, n in tokens.items()]


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
