"""Several forked skills started in one reply run at once, at most `FORK_CONCURRENCY`.

    ready = concurrent_forks(calls, toolbox, registry, emit)   # call id -> result, or {}

engine/run_tools.py asks this first: when two or more of a reply's calls start
forked skills (engine/fork.py), they run in worker threads and their results are
ready before the calls are kept in order, as if they had run in turn; with fewer,
nothing happens here and every call runs in turn.

Everything the user sees or answers stays on the thread that called: the forks'
events come back through a queue and are emitted there (views and the recorder are
never called from two threads), and every question a fork asks (a command, an
install, its skill's model) is asked there too, one at a time, through the chat's
one consent owner (engine/questions.py); a fork's own thread draws nothing. Ctrl-C
stops every fork still running (each returns INTERRUPTED at its next event, its
request in flight is left to end) and the chat goes on.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from skillchat.engine.emit import Emitter, Event, ToolStarted
from skillchat.engine.events import ToolCall
from skillchat.engine.messages import too_deep
from skillchat.engine.questions import Question, Questions
from skillchat.tools.base import ToolResult
from skillchat.tools.skill_tools import GET_SKILL, GetSkill

if TYPE_CHECKING:
    from concurrent.futures import Future

    from skillchat.skills.registry import Registry
    from skillchat.tools.toolbox import Toolbox

FORK_CONCURRENCY = 3  # forks of one reply running at once; the rest wait their turn


@runtime_checkable
class Relayed(Protocol):
    """What of engine/fork.py's `SkillFork` this module drives (that module imports
    the loop, which imports this one: a protocol, not an import)."""

    relay: Callable[[Event], None] | None
    cancel: threading.Event
    questions: Questions


def concurrent_forks(
    calls: Sequence[ToolCall], toolbox: Toolbox, registry: Registry, emit: Emitter
) -> dict[str, ToolResult]:
    """The results of the calls that start forked skills (of `registry`, run by
    `toolbox`'s get_skill), run at once when there are two or more of them; {}
    otherwise. Their events and questions are given to `emit` on this thread."""
    tool = toolbox.get(GET_SKILL)
    fork: object = tool.fork if isinstance(tool, GetSkill) else None
    chosen = [c for c in calls if c.name == GET_SKILL and _forked(registry, c)]
    if not isinstance(fork, Relayed) or len(chosen) < 2:
        return {}
    from concurrent.futures import ThreadPoolExecutor  # only when forks run at once

    inbox: queue.Queue[Event | Question] = queue.Queue()
    fork.relay = inbox.put
    for call in chosen:
        emit(ToolStarted(call.name, call.arguments, call.id))
    try:
        with fork.questions.relayed(inbox.put), ThreadPoolExecutor(FORK_CONCURRENCY) as pool:
            futures = {c.id: pool.submit(toolbox.run, c.name, c.arguments) for c in chosen}
            _serve(emit, fork, inbox, list(futures.values()))
    finally:
        fork.relay = None
        fork.cancel.clear()
    _deliver(emit, fork.questions, inbox)  # what the last fork said as it ended
    return {call_id: future.result() for call_id, future in futures.items()}


def _forked(registry: Registry, call: ToolCall) -> bool:
    if too_deep(call.arguments):  # refused by run_tools, never parsed
        return False
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return False
    name = args.get("skill_name") if isinstance(args, dict) else None
    skill = registry.get(name) if isinstance(name, str) else None
    return skill is not None and skill.forked


def _serve(
    emit: Emitter,
    fork: Relayed,
    inbox: queue.Queue[Event | Question],
    futures: list[Future[ToolResult]],
) -> None:
    """Emit the forks' events and ask their questions here until all have ended."""
    while not all(f.done() for f in futures):
        try:
            _deliver(emit, fork.questions, inbox, wait=0.05)
        except KeyboardInterrupt:
            if not fork.cancel.is_set():
                fork.cancel.set()
                emit.notice("stopping the skills running on their own (Ctrl-C)")


def _deliver(
    emit: Emitter, questions: Questions, inbox: queue.Queue[Event | Question], wait: float = 0
) -> None:
    """Emit (or ask) what is in the inbox; with `wait`, wait that long for the first."""
    try:
        item = inbox.get(timeout=wait) if wait else inbox.get_nowait()
    except queue.Empty:
        return
    while True:
        if isinstance(item, Question):
            questions.put(item)
        else:
            emit(item)
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return
