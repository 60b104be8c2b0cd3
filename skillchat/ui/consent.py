"""The REPL's consent to run a command: shown in full, then yes / no / always.

A command the skill's `allowed-tools` pre-approve (trusted skills only) runs without
the question, saying so. "Always" covers what the card says it covers, for the
current chat only (`/new` and `/resume` forget it):

- the skill name *and* the program the user saw: `echo hi` → commands from that
  skill that start with `echo`. The skill name alone would not do: the model picks
  it, so "always for calculator" once would let it run anything under that name.
- an interpreter or a runner (python3, bash, node, env, xargs, find ...) with its
  script: `python3 /skills/pdf/scripts/fill.py a.pdf` → `python3
  /skills/pdf/scripts/fill.py …`; the program alone would be any code at all.
- only that exact command when it has shell syntax (`;`, `|`, `&`, `$`, redirection,
  backquotes, a newline), starts with a variable assignment, runs inline code
  (`python3 -c ...`) or cannot be split into words: a prefix of such a command says
  nothing about what the rest does.

The answer is one key, no Enter (y, n, a; "always" only offered for a skill's
command, and not while an untrusted skill served over MCP gates every command),
read so that no key typed before the card was on screen answers it
(ui/ask_key.py). While the command runs, a live card shows the tail of its
output; the tool card with the exit code follows.

Questions come one at a time, all through the chat's consent owner
(engine/questions.py), forks' too: a fork's question is preceded by a line naming
it, and while a question is on screen the forks whose questions wait for it are
named after it ("beta #2 waits to ask next"), so the key typed answers the
question shown and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from skillchat.config import Settings
from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.ui.ask_key import ask_key
from skillchat.ui.cards import human_size
from skillchat.ui.safe import clean, exact, text

if TYPE_CHECKING:  # the sandbox's machinery loads at the first command, MCP's at a server's call
    from rich.console import Console

    from skillchat.engine.model_move import ModelMove
    from skillchat.engine.questions import Questions
    from skillchat.hooks.dispatch import HookQuestion
    from skillchat.mcp.policy import McpRequest, McpVerdict
    from skillchat.sandbox.envs.provider import InstallRequest
    from skillchat.sandbox.runner import OutputSink
    from skillchat.ui.console import Consoles

# Shell syntax that makes a command more than one program with its arguments.
_SHELL = re.compile(r"[;&|<>`$()\n\r]")
# Programs whose first argument is what they run: the prefix keeps it.
_RUNNERS = re.compile(
    r"(ba|da|k|z|fi)?sh|python[0-9.]*|pypy[0-9.]*|node(js)?|deno|bun|perl[0-9.]*|ruby"
    r"|php[0-9.]*|lua[0-9.]*|Rscript|tclsh|awk|gawk|mawk|env|xargs|find|timeout|nice"
    r"|nohup|command|exec|busybox|uv|uvx|npx|pipx|sudo|make"
)

Scope = tuple[str | None, bool, tuple[str, ...]]  # (skill, is a prefix, words)


def always_scope(skill: str | None, command: str) -> Scope:
    """What "always" for `command` covers: the words a command from `skill` must
    start with, or (not a prefix) this exact command; see the module docstring."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unclosed quote
        words = []
    exact_only = (skill, False, (command,))
    if not words or _SHELL.search(command) or "=" in words[0]:
        return exact_only
    if _RUNNERS.fullmatch(os.path.basename(words[0])):
        if len(words) < 2 or words[1].startswith("-"):
            return exact_only  # inline code (-c, -e), options first, or a REPL
        return (skill, True, tuple(words[:2]))
    return (skill, True, tuple(words[:1]))


class ReplConsent:
    """Asks the user before each command; remembers what "always" covers."""

    def __init__(self, settings: Settings, consoles: Consoles, questions: Questions) -> None:
        self.settings = settings
        self.consoles = consoles  # the REPL's: cards and questions go to its stdout
        self.questions = questions  # the chat's consent owner: who asks, who waits
        self.always: set[Scope] = set()

    @property
    def console(self) -> Console:
        """Read at each question: the REPL's console is made at its first use, not
        before the prompt."""
        return self.consoles.out

    def forget(self) -> None:
        """A new chat (`/new`, `/resume`): no "always" carries over."""
        self.always.clear()

    def __call__(self, request: RunRequest) -> Verdict:
        if request.verdict.kind == "approved":  # allowed-tools of a trusted skill
            self.console.print(
                text(f"run_command pre-approved: {request.verdict.reason}", style="muted")
            )
            return Verdict("approved")
        scope = always_scope(request.skill_name, request.command)
        if not request.verdict.each_time and (self.settings.run.allow or scope in self.always):
            return Verdict("approved")
        console = self.console
        card = text("run_command wants to run\n", style="consent.title")
        card.append("  $ ")
        card.append(exact(request.command))
        card.append("\n  skill: ", style="muted")
        card.append(exact(request.skill_name or "(none)", style="muted"))
        card.append(
            clean(
                f" · in {request.cwd} · "
                f"network: {request.network_label()} · "
                f"workspace writes: {'ON' if request.writes else 'off'} · "
                f"timeout {request.timeout_s:g} s\n  asking because: {request.verdict.reason}"
            ),
            style="muted",
        )
        keys, question = "yn", "Run it? [y]es / [n]o: "
        # "always" is for one skill's commands (none: no always), and never while a
        # served skill gates them: each of those is asked, so an "always" would lie.
        if request.skill_name and not request.verdict.each_time:
            card.append("\n  always = ", style="muted")
            if scope[1]:
                card.append(exact(shlex.join(scope[2]) + " …", style="muted"))
            else:
                card.append("this exact command", style="muted")
            card.append(" from skill ", style="muted")
            card.append(exact(request.skill_name, style="muted"))
            card.append(", until this chat ends", style="muted")
            keys, question = "yna", "Run it? [y]es / [n]o / [a]lways: "
        answer = ask_key(console, card, question, keys, self.questions)
        console.print(text({"y": "yes", "a": "always"}.get(answer, "no")))
        if answer == "a":
            self.always.add(scope)
            return Verdict("approved")
        if answer == "y":
            return Verdict("approved")
        return Verdict("refused", "the user declined to run this command")

    def ask_install(self, request: InstallRequest) -> bool:
        """Before a skill's first install: the packages with the versions they
        resolve to and their download size (resolved first, with a status line),
        where they were declared, yes or no (Ctrl-C and end of input are no; no
        "always": the set is installed once, then reused)."""
        console = self.console
        with console.status(clean(f"resolving packages for {request.skill} …")):
            resolution = request.resolve()
        card = text("run_command needs packages\n", style="consent.title")
        card.append("  ")
        card.append(exact(", ".join(request.packages)))
        for package in resolution.packages:
            card.append("\n    ")
            card.append(exact(f"{package.name} {package.version}"))
            if package.size is not None:
                card.append(f"  {human_size(package.size)}", style="muted")
        if resolution.problem:
            card.append("\n  not resolved: ", style="muted")
            card.append(exact(resolution.problem, style="muted"))
        elif (total := resolution.download()) is not None:
            card.append(f"\n  download: {human_size(total)}", style="muted")
        card.append("\n  skill: ", style="muted")
        card.append(exact(request.skill, style="muted"))
        card.append(" · declared in ", style="muted")
        card.append(exact("; ".join(request.sources), style="muted"))
        how = (
            "npm --ignore-scripts, from the configured registry"
            if request.kind == "node"
            else "wheels only, from the configured index"
        )
        card.append(f"\n  {how}, in a sandbox with the network on", style="muted")
        answer = ask_key(console, card, "Install them? [y]es / [n]o: ", "yn", self.questions)
        console.print(text("yes" if answer == "y" else "no"))
        return answer == "y"

    def ask_model(self, move: ModelMove) -> bool:
        """Before an untrusted skill's own `model:` takes its turns (engine/skill_model.py):
        the skill, the model and its server, and what would go there; yes or no
        (no "always": the next time the skill is used, it is asked again)."""
        card = text("a skill wants its own model\n", style="consent.title")
        card.append("  skill: ", style="muted")
        card.append(exact(move.skill))
        card.append("\n  model: ", style="muted")
        card.append(exact(f"{move.model} ({move.wanted})"))
        card.append("\n  server: ", style="muted")
        from skillchat.redact import redact  # a URL's credentials stay off the screen

        card.append(exact(redact(move.server)))
        what = (
            "its fork's turns, with your message as its task"
            if move.forked
            else "this chat's next turns, with everything said so far"
        )
        card.append(f"\n  would take: {what}", style="muted")
        why = f"the skill is not trusted (skillchat skills trust {move.skill})"
        card.append(clean(f"\n  asking because: {why}"), style="muted")
        answer = ask_key(
            self.console, card, "Move to its model? [y]es / [n]o: ", "yn", self.questions
        )
        self.console.print(text("yes" if answer == "y" else "no"))
        return answer == "y"

    def ask_hook(self, question: HookQuestion) -> bool:
        """Trust a hook, or allow a call a hook asks about (ui/hook_card.py)."""
        from skillchat.ui.hook_card import hook_card, shown

        card, ask = hook_card(question)
        return shown(self.console, ask_key(self.console, card, ask, "yn", self.questions))

    @contextmanager
    def install_progress(self, request: InstallRequest) -> Iterator[Callable[[str], None]]:
        """While packages install: a Rich status with uv's latest step; each step
        stays printed above it (dim), so the whole install can be read after."""
        console = self.console
        with console.status(clean(f"installing packages for {request.skill} …")) as status:

            def sink(line: str) -> None:
                console.print(text(f"  {line}", style="muted"))
                status.update(clean(f"installing packages for {request.skill}: {line}"))

            yield sink


class McpAsk:
    """The REPL's consent to an MCP tool call: the server, the tool, its arguments
    and what the server claims about it (annotations: shown, never trusted), then
    yes / no / always (this tool of this server, until this chat ends)."""

    def __init__(self, settings: Settings, consoles: Consoles, questions: Questions) -> None:
        self.settings = settings
        self.consoles = consoles  # the REPL's: the card goes to its stdout
        self.questions = questions
        self.always: set[tuple[str, str]] = set()

    @property
    def console(self) -> Console:
        return self.consoles.out

    def __call__(self, request: McpRequest) -> McpVerdict:
        from skillchat.mcp.policy import McpVerdict  # with MCP servers only

        if request.verdict.kind == "approved":
            line = f"{request.offered} pre-approved: {request.verdict.reason}"
            self.console.print(text(line, style="muted"))
            return request.verdict
        if self.settings.mcp.allow or (request.server, request.tool) in self.always:
            return McpVerdict("approved", "--allow-mcp, or always in this chat")
        console = self.console
        card = text("MCP tool call\n", style="consent.title")
        card.append("  server: ", style="muted")
        card.append(exact(request.server))
        card.append(" · tool: ", style="muted")
        card.append(exact(request.tool))
        arguments = json.dumps(request.arguments, ensure_ascii=False, indent=1)
        arguments = arguments if len(arguments) < 2_000 else arguments[:2_000] + " …"
        card.append("\n  arguments: ", style="muted")
        # Its lines under the card's (JSON escapes a newline inside a string).
        card.append(exact(arguments.replace("\n", "\n    ")))
        if request.annotations:
            claims = ", ".join(f"{k}={v}" for k, v in request.annotations.items())
            card.append("\n  the server says (not verified): ", style="muted")
            card.append(exact(claims[:300], style="muted"))
        card.append(clean(f"\n  asking because: {request.verdict.reason}"), style="muted")
        card.append("\n  always = this tool of this server, until this chat ends", style="muted")
        answer = ask_key(console, card, "Call it? [y]es / [n]o / [a]lways: ", "yna", self.questions)
        console.print(text({"y": "yes", "a": "always"}.get(answer, "no")))
        if answer == "a":
            self.always.add((request.server, request.tool))
        if answer in ("y", "a"):
            return McpVerdict("approved", "the user said yes")
        return McpVerdict("refused", "the user declined this call")


TAIL_LINES = 8


@contextmanager
def live_card(console: Console, request: RunRequest) -> Iterator[OutputSink]:
    """While a command runs: a card on `console` with the command and the tail of its output,
    redrawn as output arrives, and gone when the run ends (the tool card that
    follows has the exit code, the duration and the tail). Stopped by Ctrl-C, it
    stays on screen, marked interrupted, with the output so far."""
    from rich.live import Live
    from rich.panel import Panel

    tail: list[str] = [""]
    title = text("run_command · running", style="strong")

    def card() -> Panel:
        body = text("$ ", style="strong")
        body.append(exact(request.command, style="strong"))
        body.append("\n")
        body.append(clean("\n".join(tail[-TAIL_LINES:])), style="muted")
        return Panel(body, title=title, title_align="left", border_style="consent.border")

    try:
        with Live(card(), console=console, transient=True, auto_refresh=False) as live:

            def sink(stream: str, text: str) -> None:
                lines = text.split("\n")
                tail[-1] += lines[0]
                tail.extend(lines[1:])
                del tail[: -TAIL_LINES - 1]
                live.update(card(), refresh=True)

            yield sink
    except KeyboardInterrupt:  # no tool card follows: this one stays, with the output so far
        title = text("run_command · interrupted", style="warning")
        console.print(card())
        raise


@contextmanager
def stderr_install_progress(
    console: Console, request: InstallRequest
) -> Iterator[Callable[[str], None]]:
    """`ask`'s view of a package install: one line per step on `console`, its stderr
    (uv's output and the package names are the index's text, so cleaned)."""
    yield lambda line: console.print(text(f"  install: {line}", style="muted"))
