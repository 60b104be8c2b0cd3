"""`context: fork`: a skill's work done in a conversation of its own, only its answer
coming back to the chat that started it.

    fork = SkillFork(lambda: session.chat, make_backend, lambda: chat_tools(runner),
                     questions, allow_model, lambda: asked_settings)
    chat_tools(runner, fork)     # get_skill runs forked skills through it

When the model's `get_skill(skill_name, task)` or the user's `/name text` starts a
forked skill, a child `Chat` (this module's `ForkChat`, the same loop) gets a system
prompt with the skill's body and the usual rules of its tools, and the task as its
one user message. It has the same tools, made afresh over the same sandbox runner,
so consent, trust, `allowed-tools` and the sandbox apply as in the parent; its own
transcript and context budget; at most `max_tool_rounds` rounds; the model of
`[skill_models]` or the skill's `model:` (engine/skill_model.py: an untrusted
skill's only with the user's yes, `allow_model`: the task carries what the user
said to that model's server). A skill forked inside a fork is loaded inline: forks
do not nest. Every question the fork asks names it (`current.name`,
engine/questions.py).

The parent receives one get_skill result: the answer (cut at `FORK_ANSWER_CHARS`,
with a notice), or why there is none (Ctrl-C stops only the fork: "INTERRUPTED",
and the parent's turn goes on). Every event of the child reaches the parent's
listeners wrapped in a `ForkStep` (the views draw its tool calls as nested lines;
the recorder keeps its messages apart from the parent's transcript, so a resumed
chat never sends them to the parent's model).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillchat.config import Settings
from skillchat.engine.backends.base import BackendFor, Timeouts
from skillchat.engine.emit import (
    Event,
    ForkEnded,
    ForkStarted,
    ForkStep,
    MessageAdded,
    Notice,
    TextDelta,
    UsageReported,
    Waiting,
)
from skillchat.engine.loop import Chat
from skillchat.engine.messages import add_usage
from skillchat.engine.questions import Questions, current
from skillchat.engine.skill_model import MoveConsent, same_server, skill_target
from skillchat.engine.turn import Step
from skillchat.errors import SkillchatError, ToolRoundLimit
from skillchat.prompt import InjectedSkill
from skillchat.skills.model import Skill
from skillchat.tools.base import Tool, ToolResult, to_json

if TYPE_CHECKING:
    from skillchat.engine.fork_run import ForkRun

# The most characters of a fork's answer the parent receives: a report, not a dump.
FORK_ANSWER_CHARS = 16_000
_numbers = itertools.count(1)  # forks of this process, for their cards and `/show`


class ForkChat(Chat):
    """A child chat whose every request carries the skill's body in its system prompt.
    Its task is sent as text: the model writes it (get_skill's `task`), and a `/name`
    read from it would start a skill only the user may (`disable-model-invocation`)."""

    typed_by_user = False

    def __init__(self, skill: InjectedSkill, *args: Any, **kwargs: Any) -> None:
        self.skill = skill
        super().__init__(*args, **kwargs)

    def system_prompt(self, injected: InjectedSkill | None = None) -> str | None:
        return super().system_prompt(injected or self.skill)


class SkillFork:
    """The `Forker` get_skill is made with: runs one forked skill per call, on the
    current chat of `parent()` (read at each call: `/new`, `/model` count)."""

    def __init__(
        self,
        parent: Callable[[], Chat],
        backend_for: BackendFor,
        tools: Callable[[], Sequence[Tool]],
        questions: Questions,
        allow_model: MoveConsent,
        asked: Callable[[], Settings],
        steps: Callable[[], Sequence[Step]] = tuple,
    ) -> None:
        self.parent = parent
        self.steps = steps  # the session's for each fork (its hooks: steps/hooks.py)
        self.asked = asked  # what the user asked for: a skill's model is resolved from it
        self.backend_for = backend_for
        self.tools = tools
        self.questions = questions  # the chat's one consent owner
        self.allow_model = allow_model
        # While forks run at once (engine/parallel_forks.py): where their events go
        # (to the parent's thread), and the Ctrl-C that stops them.
        self.relay: Callable[[Event], None] | None = None
        self.cancel = threading.Event()

    def emit(self, event: Event) -> None:
        (self.relay or self.parent().emit)(event)

    def __call__(self, skill: Skill, body: str, task: str | None) -> ToolResult:
        number = next(_numbers)
        outer = getattr(current, "name", None)
        current.name = f"{skill.name} #{number}"  # who asks, when the fork needs a yes
        try:
            return self._run(number, skill, body, task)
        finally:
            current.name = outer

    def _run(self, number: int, skill: Skill, body: str, task: str | None) -> ToolResult:
        parent = self.parent()
        target, note = skill_target(parent.settings, self.asked(), skill, self.allow_model)
        settings = parent.settings if target is None else target.over(parent.settings)
        if note is not None:
            self.emit(Notice(note))
        if target is None or same_server(settings, parent.settings):
            backend = parent.backend
        else:
            backend = self.backend_for(target, Timeouts.of(settings.model))
        task = task or _last_request(parent.messages) or f"Do what the skill {skill.name} is for."
        from skillchat.engine.fork_run import ForkRun  # a fork's first run: its dataclass

        run = ForkRun(number, skill.name, settings.model.name, task)

        def watch(event: Event) -> None:
            if not run.started:  # the catalog's notes at the child's making: said already
                return
            if isinstance(event, MessageAdded):
                run.messages.append(event.message)
            elif isinstance(event, UsageReported):
                run.usage = add_usage(run.usage, event.usage)
                run.requests += 1
            self.emit(ForkStep(run.number, run.skill, run.model, event))
            if self.cancel.is_set() and isinstance(event, Waiting | TextDelta):
                raise KeyboardInterrupt  # Ctrl-C while forks ran at once: this one stops

        child = ForkChat(
            InjectedSkill(skill.name, body),
            settings,
            parent.registry,
            backend,
            watch,
            workspace=parent.context.workspace,
            tools=self.tools(),
            steps=self.steps(),
        )
        child.activated.append(skill.name)  # its own `/name`-only skill is usable
        run.started = True
        self.emit(ForkStarted(run.number, run.skill, run.model, task))
        try:
            answer = child.send(task).answer
        except KeyboardInterrupt as stop:
            if type(stop) is not KeyboardInterrupt:  # SIGTERM's kind ends the whole command
                self._end(run, "interrupted")  # (its card closes first)
                raise
            return self._ended(run, "interrupted", "the user stopped it (Ctrl-C)")
        except ToolRoundLimit as exc:
            return self._ended(run, "round-limit", str(exc))
        except SkillchatError as exc:
            return self._ended(run, "failed", str(exc))
        except Exception:
            self._end(run, "failed")
            raise
        self._end(run, "answered")
        return _answer(run, answer)

    def _ended(self, run: ForkRun, outcome: str, why: str) -> ToolResult:
        """The result of a fork that gave no answer."""
        self._end(run, outcome)
        code = _CODES[outcome]
        message = f"skill '{run.skill}' ran on its own and gave no answer: {why}"
        payload = {"skill_name": run.skill, "forked": True, "error": message, "error_code": code}
        return ToolResult(to_json(payload), True, code, preview=f"{_header(run)}\n{message}")

    def _end(self, run: ForkRun, outcome: str) -> None:
        run.outcome = outcome
        run.tool_calls = sum(1 for m in run.messages if m.get("role") == "tool")
        ended = ForkEnded(run.number, run.skill, run.model, run.task, run.summary(), run.messages)
        self.emit(ended)


_CODES = {"interrupted": "INTERRUPTED", "round-limit": "ROUND_LIMIT", "failed": "FORK_FAILED"}


def _answer(run: ForkRun, answer: str) -> ToolResult:
    cut = len(answer) > FORK_ANSWER_CHARS
    shown = answer[:FORK_ANSWER_CHARS]
    if cut:
        shown += (
            f"\n\n[answer cut at {FORK_ANSWER_CHARS:,} of {len(answer):,} characters: "
            "ask the skill for a shorter answer if you need the rest]"
        )
    payload = {
        "skill_name": run.skill,
        "forked": True,
        "model": run.model,
        "answer": shown,
        "truncated": cut,
        "tool_calls": run.tool_calls,
    }
    return ToolResult(
        to_json(payload),
        preview=f"{_header(run)}\n{answer}",
        size=len(answer.encode()),
        truncated=cut,
    )


def _header(run: ForkRun) -> str:
    tokens = f", {run.usage.total_tokens:,} tokens" if run.usage else ""
    calls = f"{run.tool_calls} tool call" + ("" if run.tool_calls == 1 else "s")
    return f"ran on its own on {run.model}: {calls}{tokens}"


def _last_request(messages: Sequence[dict[str, Any]]) -> str | None:
    """The parent's last user message: the task of a fork the model gave none."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None
