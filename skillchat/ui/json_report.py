"""`ask --json`: the report built from the chat's events, as the terminal view and
the recorder build what they show and save (engine/emit.py), not from what `send`
returns, so a front end or a later command can print it the same way.

    {"answer": str, "tool_calls": [{"name", "arguments", "result", "is_error"}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "cost",
               "cached_tokens", "cache_write_tokens"} | null,
     "model": str, "chat_id": str | null,
     "forks": [{...a fork's summary, "task", "messages"}],
     "usage_by_model": {model: {"prompt_tokens", ..., "cost"}}}

`arguments` is the JSON the model sent, decoded (as sent when it is not valid JSON);
`tool_calls` holds the calls skillchat added too (`/name`, attached files); `usage`
is summed over the turn's requests. `forks` are the forked skills' runs (each with
its transcript), whose requests are not in `usage`: `usage_by_model` adds them up
per model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from skillchat.engine.emit import (
    Event,
    ForkEnded,
    MessageAdded,
    ToolFinished,
    ToolRecord,
    UsageReported,
)
from skillchat.engine.events import Usage
from skillchat.engine.messages import add_usage


class JsonReport:
    """A listener that keeps what the `--json` object reports of one turn."""

    def __init__(self) -> None:
        self.answer = ""
        self.calls: list[ToolRecord] = []
        self.usage: Usage | None = None
        self.forks: list[ForkEnded] = []

    def __call__(self, event: Event) -> None:
        match event:
            case ToolFinished(record):
                self.calls.append(record)
            case UsageReported(usage):
                self.usage = add_usage(self.usage, usage)
            case ForkEnded():
                self.forks.append(event)
            case MessageAdded(message, interrupted=False) if message.get(
                "role"
            ) == "assistant" and not message.get("tool_calls"):
                # A reply without calls is the answer (a later one replaces it).
                self.answer = message.get("content") or ""

    def report(self, model: str, chat_id: str | None) -> dict[str, Any]:
        """The object `ask --json` prints, with the saved chat's id (for `--chat ID`)."""
        usage = asdict(self.usage) if self.usage is not None else None
        runs = [{**f.summary, "task": f.task, "messages": f.messages} for f in self.forks]
        return {
            "answer": self.answer,
            "tool_calls": [_call(record) for record in self.calls],
            "usage": usage,
            "model": model,
            "chat_id": chat_id,
            "forks": runs,
            "usage_by_model": usage_by_model(model, usage, runs),
        }


def usage_by_model(
    model: str, usage: dict[str, Any] | None, runs: Sequence[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Tokens (and cost, while every part's is known) per model: the chat's own
    requests, then each fork's on its model."""
    totals: dict[str, dict[str, Any]] = {}
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    parts = [(model, usage or {})]
    parts += [(r["model"], {**r, "total_tokens": r["tokens"]}) for r in runs]
    for name, part in parts:
        into = totals.setdefault(name, {k: 0 for k in keys} | {"cost": 0.0})
        for key in keys:
            into[key] += part.get(key) or 0
        cost = part.get("cost")
        into["cost"] = None if cost is None or into["cost"] is None else into["cost"] + cost
    return totals


def decoded(arguments: str) -> Any:
    """A call's arguments decoded; invalid JSON from the model: as it was sent."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _call(record: ToolRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "arguments": decoded(record.arguments),
        "result": record.result.content,
        "is_error": record.result.is_error,
    }
