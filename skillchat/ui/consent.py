"""The REPL's consent to run a command: shown in full, then yes / no / always.

A command the skill's `allowed-tools` pre-approve (trusted skills only) runs without
the question, saying so. "Always" holds for that skill (or for commands without a
skill) in this chat only.
Ctrl-C or end of input at the question means no. While the command runs, a live card
shows the tail of its output; the tool card with the exit code follows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.text import Text

from skillchat.config import Settings
from skillchat.sandbox.command_tool import RunRequest, Verdict
from skillchat.sandbox.runner import OutputSink
from skillchat.ui.console import out
from skillchat.ui.safe import clean, exact


class ReplConsent:
    """Asks the user before each command; remembers "always" per skill."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.always: set[str | None] = set()

    def __call__(self, request: RunRequest) -> Verdict:
        if request.verdict.kind == "approved":  # allowed-tools of a trusted skill
            out().print(
                Text(clean(f"run_command pre-approved: {request.verdict.reason}"), style="dim")
            )
            return Verdict("approved")
        if self.settings.run_allow or request.skill_name in self.always:
            return Verdict("approved")
        console = out()
        card = Text("run_command wants to run\n", style="bold yellow")
        card.append("  $ ")
        card.append(exact(request.command))
        card.append("\n  skill: ", style="dim")
        card.append(exact(request.skill_name or "(none)", style="dim"))
        card.append(
            clean(
                f" · in {request.cwd} · "
                f"network: {'ON' if request.network else 'off'} · "
                f"workspace writes: {'ON' if request.writes else 'off'} · "
                f"timeout {request.timeout_s:g} s\n  asking because: {request.verdict.reason}"
            ),
            style="dim",
        )
        console.print(card)
        console.print(
            Text("Run it? [y]es / [n]o / [a]lways for this skill: ", style="bold"), end=""
        )
        try:
            answer = sys.stdin.readline().strip().lower()
        except KeyboardInterrupt:
            answer = ""
        console.print(Text(answer or "no"))
        if answer in ("a", "always"):
            self.always.add(request.skill_name)
            return Verdict("approved")
        if answer in ("y", "yes"):
            return Verdict("approved")
        return Verdict("refused", "the user declined to run this command")


TAIL_LINES = 8


@contextmanager
def live_card(request: RunRequest) -> Iterator[OutputSink]:
    """While a command runs: a card with the command and the tail of its output,
    redrawn as output arrives, and gone when the run ends (the tool card that
    follows has the exit code, the duration and the tail)."""
    from rich.live import Live
    from rich.panel import Panel

    tail: list[str] = [""]
    title = Text("run_command · running", style="bold")

    def card() -> Panel:
        body = Text("$ ", style="bold")
        body.append(exact(request.command, style="bold"))
        body.append("\n")
        body.append(clean("\n".join(tail[-TAIL_LINES:])), style="dim")
        return Panel(body, title=title, title_align="left", border_style="yellow")

    with Live(card(), console=out(), transient=True, auto_refresh=False) as live:

        def sink(stream: str, text: str) -> None:
            lines = text.split("\n")
            tail[-1] += lines[0]
            tail.extend(lines[1:])
            del tail[: -TAIL_LINES - 1]
            live.update(card(), refresh=True)

        yield sink
