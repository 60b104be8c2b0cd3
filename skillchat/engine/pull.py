"""A turn's events as an iterator, for a caller that pulls them (`Session.stream`).

The loop pushes its events to listeners as they happen, and a turn runs from its
first request to its answer in one call: to hand the events to a `for` loop as they
come, the turn runs on a thread of its own and each event crosses a queue. The
iterator's events are those the other listeners of the same emitter receive, in
the same order, because it is one more listener on that emitter (added for the
turn, removed after it).

Stopping early (`break`, the iterator closed or collected, Ctrl-C while it waits)
stops the turn as Ctrl-C does in the terminal: at its next request or piece of
text, whatever arrived kept and marked as interrupted; a tool call that is running
finishes first. The iterator returns once the turn's thread has ended, so nothing
of the turn outlives it. An error that ended the turn is raised by the iterator
after its last event (`TurnFailed` among them), as `send` raises it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator
from typing import TypeVar

from skillchat.engine.emit import Emitter, Event, TextDelta, Waiting

T = TypeVar("T")


def pulled(emit: Emitter, turn: Callable[[], T]) -> Generator[Event, None, T]:
    """Run `turn` on a thread, yielding each event `emit` hands its listeners while
    it runs; the generator's return value is `turn`'s."""
    events: queue.SimpleQueue[Event | None] = queue.SimpleQueue()  # None: it ended
    stop = threading.Event()
    returned: list[T] = []
    raised: list[BaseException] = []  # handed to the caller's thread, raised there

    def listen(event: Event) -> None:
        events.put(event)
        if stop.is_set() and isinstance(event, Waiting | TextDelta):
            raise KeyboardInterrupt  # the caller stopped pulling: the turn stops here

    def run() -> None:
        try:
            returned.append(turn())
        except BaseException as error:
            raised.append(error)
        finally:
            events.put(None)

    emit.listeners.append(listen)
    thread = threading.Thread(target=run, name="skillchat-turn", daemon=True)
    thread.start()
    try:
        while (event := events.get()) is not None:
            yield event
    finally:  # the caller stopped early (or was interrupted): the turn stops too
        stop.set()
        thread.join()
        emit.listeners.remove(listen)
    if raised:
        raise raised[0]
    return returned[0]
