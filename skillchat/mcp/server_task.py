"""One server's task on the hub's event loop: start it, connect its SDK client, list
its tools, served skills, prompts and resources, then hold the connection open
until the hub asks it to stop (an SDK client must be entered and left in one task).

Apart from the hub (mcp/hub.py) because this is the asynchronous side: it runs on
the loop's thread and only writes the server's `ServerState`, which the hub's
synchronous callers read; the hub starts, restarts and stops it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from skillchat.mcp.connect import ServerState, client_of, list_tools, reason, settled, spawn
from skillchat.mcp.listing import keep
from skillchat.mcp.prompts import list_extras

if TYPE_CHECKING:
    from skillchat.mcp.elicit import Relay
    from skillchat.mcp.oauth import Authorize

# What the client calls with each message a server sends unasked (a notification).
OnMessage = Callable[[Any], Awaitable[None]]


async def hold(
    state: ServerState,
    generation: int,
    authorize: Authorize | None,
    questions: Relay,
    on_message: OnMessage,
) -> None:
    """Connect, list the tools, then hold the connection open until asked to stop.

    A restarted server's old task may end after the new one started: only the
    task of the current `generation` writes the server's state."""
    stop = asyncio.Event()
    state.stop, state.task = stop, asyncio.current_task()

    def current() -> bool:
        return state.generation == generation

    try:
        process = await spawn(state)  # before the SDK is imported: see spawn.py
        try:
            client = client_of(state, process, authorize, _handlers(state, questions, on_message))
        except BaseException:
            if process is not None:  # no transport took it over: it would stay
                process.kill()
            raise
        async with client:
            tools = await list_tools(client)
            from skillchat.mcp.skills import skill_entries  # the SDK is loaded by now

            entries = await skill_entries(client)
            extras = await list_extras(client, state.config.name)
            if current():
                state.tools, state.client, state.state = tools, client, "ready"
                state.skill_entries = entries
                state.prompts, state.resources = extras
                state.ready.set()
                keep(state.config, tools, entries is not None)
            await stop.wait()
    except BaseException as exc:
        if current():
            if state.state == "starting" or not state.error:
                if isinstance(exc, Exception):  # its last words are in the tail first
                    await settled(state.reader)
                state.error = reason(exc, state)
            state.state = "failed"
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
    finally:
        if current():
            state.client = state.process = None
            state.ready.set()


def _handlers(state: ServerState, questions: Relay, on_message: OnMessage) -> dict[str, Any]:
    """The client's callbacks: notifications, and a server's questions when the
    chat answers them (the SDK advertises elicitation only with a callback)."""
    handlers: dict[str, Any] = {"message_handler": on_message, "cache": None}
    if questions.elicit is not None:
        handlers["elicitation_callback"] = questions.callback(state.config.name)
    return handlers
