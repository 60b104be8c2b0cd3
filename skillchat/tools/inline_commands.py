"""Claude Code's inline commands in a SKILL.md body: `` !`git status` `` (and the
fenced form, a code block opened with ```` ```! ````) run before the body reaches
the model, and their output takes their place.

skillchat never runs anything on the host: each one goes to the chat's command
runner, exactly as a `run_command` call from that skill would (sandbox/command_tool.py):
the skill's `allowed-tools` and trust may pre-approve it, the REPL asks the user,
`ask` runs it only with `--allow-run`. What is not run stays in the body as written,
followed by a note saying why, so neither the model nor the user (the get_skill
card says how many ran) is left to guess. A body loaded with no runner (no
sandbox here, running switched off, tools off) keeps them all, noted.

Found like Claude Code finds them: `!` then a backquoted command, at the start of a
line or after whitespace; one line each. Arguments are filled in before (a
command may use `$0`), as Claude Code does; the consent question shows the command
as it will run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from skillchat.errors import ToolArgumentError
from skillchat.tools.run_command import CommandRunner

_INLINE = re.compile(
    r"(?:(?<=\s)|^)!`(?P<inline>[^`\n]+)`|^```!\s*\n(?P<block>.*?)^```", re.M | re.S
)
NO_RUNNER = "commands cannot run here (no sandbox, or running commands is off)"


@dataclass
class InlineRuns:
    """What became of a body's inline commands, for the card."""

    ran: int = 0
    not_run: int = 0
    reason: str = ""  # the first reason one was not run

    def summary(self) -> str | None:
        if not self.ran and not self.not_run:
            return None
        text = f"inline commands: {self.ran} run"
        return text + (f", {self.not_run} not run ({self.reason})" if self.not_run else "")


def run_inline_commands(
    body: str, skill_name: str, runner: CommandRunner | None
) -> tuple[str, InlineRuns]:
    """`body` with each inline command replaced by its output, or kept with a note."""
    runs = InlineRuns()

    def replace(match: re.Match[str]) -> str:
        command = (match.group("inline") or match.group("block") or "").strip()
        if runner is None:
            return _kept(match, runs, NO_RUNNER)
        try:
            result = runner.run({"command": command, "skill_name": skill_name})
        except ToolArgumentError as exc:
            return _kept(match, runs, str(exc))
        if result.is_error:
            return _kept(match, runs, result.preview or result.error_code or "refused")
        runs.ran += 1
        return _output(result.content)

    return _INLINE.sub(replace, body), runs


def _kept(match: re.Match[str], runs: InlineRuns, reason: str) -> str:
    runs.not_run += 1
    runs.reason = runs.reason or reason
    return f"{match.group(0)} [not run: {reason}]"


def _output(content: str) -> str:
    """What a command printed (stdout, then stderr), and its exit status if not 0."""
    payload = json.loads(content)
    text = str(payload.get("stdout") or "") + str(payload.get("stderr") or "")
    text = text.rstrip("\n")
    if payload.get("exit_code") not in (0, None):
        text += f" [exit {payload['exit_code']}]"
    return text
