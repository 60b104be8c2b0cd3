"""A reply cut at its output limit (`finish_reason` "length") is said so, with what
to change, and runs none of its calls: their arguments may be cut mid-JSON, and
are never run as if complete. Its text is the answer, as far as it got. A reply the
provider stopped as a refusal (`content_filter`; Anthropic's `refusal`) is said so
too, and runs none of its calls either."""

from __future__ import annotations

from skillchat.engine.events import Reply
from skillchat.engine.turn import Step, StepContext, Turn


class CutReply(Step):
    def after_reply(self, chat: StepContext, turn: Turn, reply: Reply) -> None:
        if reply.finish_reason == "length":
            chat.emit.notice(cut_notice(reply, chat.settings.model.max_tokens))
            reply.tool_calls = []
        elif reply.finish_reason == "content_filter":
            chat.emit.notice("the provider stopped the reply as a refusal (its content filter)")
            reply.tool_calls = []


def cut_notice(reply: Reply, max_tokens: int | None) -> str:
    """What cut a reply at `finish_reason: "length"`, as far as skillchat can tell:
    its own max_tokens when the reply used them all, else the server's limit."""
    dropped = len(reply.tool_calls)
    calls = (
        f"; its {dropped} tool call{'s were' if dropped != 1 else ' was'} not run"
        if dropped
        else ""
    )
    used = reply.usage.completion_tokens if reply.usage else None
    if max_tokens is not None and (used is None or used >= max_tokens):
        return f"the reply was cut at max_tokens ({max_tokens:,}){calls}: raise --max-tokens"
    why = f"after {used:,} tokens " if used else ""
    mine = f"under max_tokens ({max_tokens:,})" if max_tokens else "no max_tokens was sent"
    return f"the reply was cut {why}by the server's output limit or context window ({mine}){calls}"
