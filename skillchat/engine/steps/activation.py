"""`/name rest` invoking a known skill: the skill's instructions go in with the message.

With tools, a `get_skill` call and its result are added after the user message, as
if the model had made the call (no round trip spent); without tools, the SKILL.md
body goes into this message's system prompt only. A skill that is not for direct
use (`user-invocable: false`) is said so, and the message is sent as written.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillchat.engine.emit import ToolRecord, ToolStarted
from skillchat.engine.events import ToolCall
from skillchat.engine.messages import assistant_message, new_call_id
from skillchat.engine.turn import Step, StepContext, Turn
from skillchat.errors import FileAccessError
from skillchat.prompt import InjectedSkill
from skillchat.tools.skill_tools import GET_SKILL, GetSkill

if TYPE_CHECKING:
    from skillchat.engine.invocation import Invocation


class Activation(Step):
    def before_message(self, chat: StepContext, turn: Turn) -> None:
        if not chat.typed_by_user:  # a fork's task: the model's words (engine/fork.py)
            return
        invocation = None
        if turn.text.startswith("/"):  # only a `/name` can invoke: the module loads for one
            from skillchat.engine.invocation import parse_invocation

            invocation = parse_invocation(turn.text, chat.registry.skills)
        if invocation and not chat.registry.skills[invocation.skill].user_invocable:
            chat.emit.notice(
                f"/{invocation.skill} is not for direct use (user-invocable: false in its "
                "SKILL.md): the message is sent as written"
            )
            invocation = None
        turn.invocation = invocation
        if invocation is not None:
            turn.content = invocation.message

    def after_message(self, chat: StepContext, turn: Turn) -> None:
        if turn.invocation is None:
            return
        if chat.tools_enabled:
            turn.result.tool_calls.append(_activate(chat, turn.invocation))
        else:
            turn.injected = _inject(chat, turn.invocation)


def _activate(chat: StepContext, invocation: Invocation) -> ToolRecord:
    """A get_skill call and its result, as if the model had made it."""
    call = ToolCall(new_call_id(), GET_SKILL, json.dumps({"skill_name": invocation.skill}))
    chat.emit(ToolStarted(call.name, call.arguments, call.id))
    tool = chat.toolbox.get(GET_SKILL)  # the chat's own: inline commands, forks
    loader = tool if isinstance(tool, GetSkill) else GetSkill()
    result = loader.load(chat.context, invocation.skill, arguments=invocation.rest)
    chat.took(call.id, result)
    chat.keep(assistant_message("", [call]))
    chat.keep({"role": "tool", "tool_call_id": call.id, "content": result.content})
    record = ToolRecord(call.name, call.arguments, result, synthetic=True, call_id=call.id)
    chat.tool_finished(record)
    return record


def _inject(chat: StepContext, invocation: Invocation) -> InjectedSkill | None:
    """Without tools: the body, for this request's system prompt."""
    try:
        body, inline = GetSkill.read(chat.context, invocation.skill, invocation.rest)
    except FileAccessError as exc:
        chat.emit.notice(f"cannot load skill '{invocation.skill}': {exc.message}")
        return None
    if (kept := inline.summary()) is not None:
        chat.emit.notice(f"/{invocation.skill}: {kept}")
    return InjectedSkill(invocation.skill, body)
