"""`ask --json`: the report built from the chat's events, as the terminal view and
the recorder build what they show and save (engine/emit.py), not from what `send`
returns, so a front end or a later command can print it the same way.

    {"answer": str, "tool_calls": [{"name", "arguments", "result", "is_error"}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "cost"} | null,
     "model": str, "chat_id": str | null}

`arguments` is the JSON the model sent, decoded (as sent when it is not valid JSON);
`tool_calls` holds the calls skillchat added too (`/name`, attached files); `usage`
is summed over the turn's requests.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from skillchat.engine.emit import Event, MessageAdded, ToolFinished, ToolRecord, UsageReported
from skillchat.engine.events import Usage
from skillchat.engine.messages import add_usage


class JsonReport:
    """A listener that keeps what the `--json` object reports of one turn."""

    def __init__(self) -> None:
        self.answer = ""
        self.calls: list[ToolRecord] = []
        self.usage: Usage | None = None

    def __call__(self, event: Event) -> None:
        match event:
            case ToolFinished(record):
                self.calls.append(record)
            case UsageReported(usage):
                self.usage = add_usage(self.usage, usage)
            case MessageAdded(message, interrupted=False) if message.get(
                "role"
            ) == "assistant" and not message.get("tool_calls"):
                # A reply without calls is the answer (a later one replaces it).
                self.answer = message.get("content") or ""

    def report(self, model: str, chat_id: str | None) -> dict[str, Any]:
        """The object `ask --json` prints, with the saved chat's id (for `--chat ID`)."""
        return {
            "answer": self.answer,
            "tool_calls": [_call(record) for record in self.calls],
            "usage": asdict(self.usage) if self.usage is not None else None,
            "model": model,
            "chat_id": chat_id,
        }


def _call(record: ToolRecord) -> dict[str, Any]:
    try:
        arguments: Any = json.loads(record.arguments)
    except ValueError:
        arguments = record.arguments  # invalid JSON from the model: as it was sent
    return {
        "name": record.name,
        "arguments": arguments,
        "result": record.result.content,
        "is_error": record.result.is_error,
    }
