"""The REPL's consent to run a command: shown in full, then yes / no / always.

"Always" holds for that skill (or for commands without a skill) in this chat only.
Ctrl-C or end of input at the question means no. While the command runs its output
streams under the question, dimmed; the card with the exit code follows.
"""

from __future__ import annotations

import sys

from rich.text import Text

from skillchat.config import Settings
from skillchat.sandbox.command_tool import RunRequest, Verdict, visible
from skillchat.ui.console import out


class ReplConsent:
    """Asks the user before each command; remembers "always" per skill."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.always: set[str | None] = set()

    def __call__(self, request: RunRequest) -> Verdict:
        if self.settings.run_allow or request.skill_name in self.always:
            return Verdict("approved")
        console = out()
        card = Text("run_command wants to run\n", style="bold yellow")
        card.append("  $ ")
        card.append(visible(request.command))
        card.append(
            f"\n  skill: {request.skill_name or '(none)'} · in {request.cwd} · "
            f"network: {'ON' if request.network else 'off'} · "
            f"workspace writes: {'ON' if request.writes else 'off'} · "
            f"timeout {request.timeout_s:g} s",
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


def stream_output(stream: str, text: str) -> None:
    """A running command's output as it arrives, dimmed (stderr in red)."""
    out().print(Text(visible(text), style="red dim" if stream == "stderr" else "dim"), end="")
