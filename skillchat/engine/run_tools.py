"""Run the tool calls of one reply and add them, with their results, to the transcript.

Parallel calls run in order, at most `max_tool_calls` of them: the rest are
answered with an error, as is a call whose arguments nest too deeply. An image a
result carries goes in a user message after the round's tool messages
(engine/images.py). All or nothing: a Ctrl-C midway leaves the transcript (and what
the ledger believes is in context) as it was, so the chat stays valid.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from skillchat.engine.emit import Emitter, ToolRecord, ToolStarted
from skillchat.engine.events import Reply, ToolCall
from skillchat.engine.images import images_message
from skillchat.engine.messages import (
    Keep,
    assistant_message,
    clean_arguments,
    clean_text,
    too_deep,
)
from skillchat.tools.base import ToolResult

if TYPE_CHECKING:
    from skillchat.skills.registry import Registry
    from skillchat.tools.context import ContextLedger
    from skillchat.tools.toolbox import Toolbox


class ToolRound(Protocol):
    """What a round of tool calls uses of its chat (engine/loop.py's `Chat` is one)."""

    @property
    def emit(self) -> Emitter: ...

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def ledger(self) -> ContextLedger: ...

    @property
    def keep(self) -> Keep: ...

    def took(self, call_id: str, result: ToolResult) -> None: ...

    def tool_finished(self, record: ToolRecord) -> None: ...

    def refusal(self, name: str, arguments: str) -> str | None: ...


def run_tools(chat: ToolRound, reply: Reply, limit: int) -> list[ToolRecord]:
    """Every call of `reply` run (at most `limit`: `max_tool_calls`), kept with its
    result, and shown."""
    records: list[ToolRecord] = []
    reply.tool_calls = [
        replace(c, arguments=clean_arguments(c.arguments)) for c in reply.tool_calls
    ]
    if len(reply.tool_calls) > limit:
        chat.emit.notice(
            f"the model made {len(reply.tool_calls)} tool calls in one reply: the first "
            f"{limit} ran, the rest were answered with an error (max_tool_calls)"
        )
    # Loaded with the first tool call (its queue and threads), not before a request.
    from skillchat.engine.parallel_forks import concurrent_forks

    try:
        refused = {  # a step's (a hook's) refusal, asked before anything runs
            c.id: why
            for c in reply.tool_calls[:limit]
            if not too_deep(c.arguments) and (why := chat.refusal(c.name, c.arguments))
        }
        ready = concurrent_forks(  # forked skills, at once
            [c for c in reply.tool_calls[:limit] if c.id not in refused],
            chat.toolbox,
            chat.registry,
            chat.emit,
        )
        for n, call in enumerate(reply.tool_calls):
            arguments = call.arguments
            if n >= limit:
                result = _refused(
                    chat.toolbox,
                    call.name,
                    "TOO_MANY_CALLS",
                    f"not run: at most {limit} tool calls per reply; make this call "
                    "again in a later round",
                )
            elif too_deep(arguments):
                arguments = "(arguments nested too deeply)"
                result = _refused(
                    chat.toolbox, call.name, "INVALID_ARGUMENT", "arguments are nested too deeply"
                )
            elif (why := refused.get(call.id)) is not None:
                result = _refused(chat.toolbox, call.name, "HOOK_DENIED", why)
            elif (done := ready.get(call.id)) is not None:
                result = _cleaned(done)
            else:
                chat.emit(ToolStarted(call.name, arguments, call.id))
                result = _cleaned(chat.toolbox.run(call.name, arguments))
            chat.took(call.id, result)
            records.append(ToolRecord(call.name, arguments, result, call_id=call.id))
    except BaseException:
        for call in reply.tool_calls:
            chat.ledger.forget(call.id)
        raise
    message = assistant_message(reply.text, reply.tool_calls, reply.thinking_blocks)
    chat.keep(message, usage=reply.usage)
    for call, record in zip(reply.tool_calls, records, strict=True):
        chat.keep({"role": "tool", "tool_call_id": call.id, "content": record.result.content})
        chat.tool_finished(record)
    keep_images(chat.keep, reply.tool_calls, records)
    return records


def keep_images(keep: Keep, calls: list[ToolCall], records: list[ToolRecord]) -> None:
    """The images the round's results carry, in one user message after them (a tool
    message holds text only: engine/images.py)."""
    images = [
        (f"{call.name} call {call.id}", record.result.image)
        for call, record in zip(calls, records, strict=True)
        if record.result.image is not None
    ]
    if images:
        keep(images_message(images))


def _cleaned(result: ToolResult) -> ToolResult:
    """`result` with lone surrogates (a name the model sent, echoed) made printable."""
    return replace(result, content=clean_text(result.content), preview=clean_text(result.preview))


def _refused(toolbox: Toolbox, name: str, code: str, message: str) -> ToolResult:
    """The error result of a call skillchat would not run, in that tool's own shape
    (an unknown tool's the same way: it is answered as unknown when it runs)."""
    tool = toolbox.get(name)
    if tool is None:
        content = json.dumps({"error": message, "error_code": code})
        return ToolResult(content, is_error=True, error_code=code, preview=message)
    return tool.error(code, message)
