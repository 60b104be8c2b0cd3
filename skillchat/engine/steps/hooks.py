"""The chat's hooks (skillchat/hooks), called at its moments: one step, made by the
session with the session's `Hooks` and handed to each chat and fork it starts.

- `session_start` when the chat starts (`started`); what it adds goes with the
  first message;
- `user_prompt_submit` before the user message is added: it may add context (in
  the message, marked as a hook's) or block it (HookBlocked: one line, nothing sent);
- `pre_tool_use` before each call of the model's, whatever the tool (skills' read
  tools, run_command, MCP tools): a denial is the call's error result, which the
  model reads; "ask" asks the user where someone can be asked, else refuses;
- `post_tool_use` after each call; what it says back reaches the model in a user
  message before the next request;
- `pre_compact` before a summary; `stop` when the turn has its answer (not a
  fork's: its answer is a tool result of the turn);
- `notification` for each notice the user is shown (this step listens to the chat's
  events for them); a hook's own notices fire none.
"""

from __future__ import annotations

import json
from typing import Any

from skillchat.engine.emit import Event, Notice, ToolRecord
from skillchat.engine.events import Reply
from skillchat.engine.turn import Step, StepContext, Turn
from skillchat.errors import HookBlocked
from skillchat.hooks.dispatch import Hooks


class HookStep(Step):
    """One chat's (or fork's) calls into the session's hooks."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks
        self.pending: list[str] = []  # context for the model, with the next message

    def started(self, source: str) -> None:
        """The chat started (`startup`), or goes on from a saved one (`resume`)."""
        decision = self.hooks.fire("session_start", {"source": source})
        self.pending += decision.context

    def __call__(self, event: Event) -> None:
        """A listener of the chat's events: its notices are `notification`s."""
        if isinstance(event, Notice) and self.hooks.found.of("notification"):
            self.hooks.fire("notification", {"message": event.message})

    def before_message(self, chat: StepContext, turn: Turn) -> None:
        if not chat.typed_by_user:  # a fork's task is the model's, not a prompt
            return
        decision = self.hooks.fire(
            "user_prompt_submit", {"prompt": turn.text}, active=chat.context.activated
        )
        if decision.blocked:
            raise HookBlocked(f"a hook blocked this message: {decision.reason}")
        added = [*self.pending, *decision.context]
        self.pending = []
        if added:
            note = "\n\n".join(f"<hook-context>\n{c}\n</hook-context>" for c in added)
            if isinstance(turn.content, str):
                turn.content = f"{turn.content}\n\n{note}"
            else:
                turn.content = [*turn.content, {"type": "text", "text": note}]

    def before_tool(self, chat: StepContext, name: str, arguments: str) -> str | None:
        payload = {"tool_name": name, "tool_input": _parsed(arguments)}
        decision = self.hooks.fire(
            "pre_tool_use", payload, tool=name, active=chat.context.activated
        )
        if decision.blocked:
            return f"a hook refused this call: {decision.reason}"
        if decision.asked is not None:
            hook, why = decision.asked
            if self.hooks.ask is None:
                return f"a hook wants the user to decide, and nobody is asked here: {why}"
            if not self.hooks.allowed_by_user(hook, why):
                return f"a hook asked the user about this call, who did not allow it: {why}"
        return None

    def after_tool(self, chat: StepContext, record: ToolRecord) -> None:
        payload = {
            "tool_name": record.name,
            "tool_input": _parsed(record.arguments),
            "tool_response": _parsed(record.result.content),
        }
        decision = self.hooks.fire(
            "post_tool_use", payload, tool=record.name, active=chat.context.activated
        )
        self.pending += decision.context

    def before_request(self, chat: StepContext, turn: Turn) -> None:
        if self.pending:
            text = "\n\n".join(self.pending)
            self.pending = []
            chat.keep({"role": "user", "content": f"<hook-context>\n{text}\n</hook-context>"})

    def after_reply(self, chat: StepContext, turn: Turn, reply: Reply) -> None:
        if not reply.tool_calls and chat.typed_by_user:  # a fork's end is not the turn's
            self.hooks.fire("stop", {"stop_hook_active": False}, active=chat.context.activated)

    def before_compact(self, chat: StepContext, auto: bool) -> None:
        trigger = "auto" if auto else "manual"
        self.hooks.fire("pre_compact", {"trigger": trigger}, active=chat.context.activated)


def _parsed(text: str) -> Any:
    """A call's JSON arguments (or a result's JSON) as the value, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text
