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
line or after whitespace; one line each. They are found in the skill's own text
before its `/name` arguments are filled in, then filled (a command may use `$0`, as
in Claude Code, and the consent question shows it as it will run): words the user
typed or piped in are never read as a command of their own, and a value put into a
command is quoted as one word of data for where it stands (skills/shell_words.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillchat.errors import ToolArgumentError
from skillchat.skills.arguments import ArgumentFiller
from skillchat.tools.base import ToolResult

# The chat's command runner bound to the chat loading the body (its gates are that
# chat's): arguments in, result out.
RunCall = Callable[[dict[str, Any]], ToolResult]

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


def inline_commands(body: str) -> list[str]:
    """The commands `body` runs as it loads, as its text writes them (before `/name`
    words fill them in): what `skills add` and `skills update` show before the yes
    that trusts them."""
    return [(m.group("inline") or m.group("block") or "").strip() for m in _INLINE.finditer(body)]


def run_inline_commands(
    body: str, skill_name: str, run: RunCall | None, filler: ArgumentFiller | None = None
) -> tuple[str, InlineRuns]:
    """`body` with each inline command replaced by its output, or kept with a note.

    `filler` (the `/name` arguments, skills/arguments.py) fills the text and each
    command apart, after the commands are found: a command is only ever what the
    skill's own text says, and a value put into one is quoted as data."""
    fill: Callable[[str], str] = filler or str
    fill_command: Callable[[str], str] = filler.fill_command if filler else str
    runs = InlineRuns()
    pieces: list[str] = []
    end = 0
    for match in _INLINE.finditer(body):
        pieces.append(fill(body[end : match.start()]))
        pieces.append(_run(match, fill, fill_command, skill_name, run, runs))
        end = match.end()
    pieces.append(fill(body[end:]))
    return "".join(pieces), runs


def _run(
    match: re.Match[str],
    fill: Callable[[str], str],
    fill_command: Callable[[str], str],
    skill_name: str,
    run: RunCall | None,
    runs: InlineRuns,
) -> str:
    written = fill(match.group(0))
    if run is None:
        return _kept(written, runs, NO_RUNNER)
    try:
        command = fill_command(match.group("inline") or match.group("block") or "").strip()
        result = run({"command": command, "skill_name": skill_name})
    except ToolArgumentError as exc:
        return _kept(written, runs, str(exc))
    if result.is_error:
        return _kept(written, runs, result.preview or result.error_code or "refused")
    runs.ran += 1
    return _output(result.content)


def _kept(written: str, runs: InlineRuns, reason: str) -> str:
    runs.not_run += 1
    runs.reason = runs.reason or reason
    return f"{written} [not run: {reason}]"


def _output(content: str) -> str:
    """What a command printed (stdout, then stderr), and its exit status if not 0."""
    payload = json.loads(content)
    text = str(payload.get("stdout") or "") + str(payload.get("stderr") or "")
    text = text.rstrip("\n")
    if payload.get("exit_code") not in (0, None):
        text += f" [exit {payload['exit_code']}]"
    return text
