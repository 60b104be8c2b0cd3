"""What fills a chat's context window now, by part: `/context` shows it.

Every figure is the estimate the loop fits requests with (engine/context_window.py:
characters of the request's JSON / `CHARS_PER_TOKEN`), so the total here is what
fitting and compaction act on, not a tokenizer's count. The parts:

- the system prompt's own text, and the skills catalog inside it;
- the tool definitions offered (their JSON schemas);
- each activated skill: its get_skill results still in the transcript (an elided
  one counts as its stub);
- attachments: files the user attached, as the turn's opening `read_file` calls and
  results (with tools) or as `<file>` blocks in the message (without);
- history: the user's and the model's messages;
- tool results: every other result.

What `/compact` would free is the older turns it would replace (engine/compaction.py
`kept_from`), less nothing: the summary and the re-attached skills take some back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.engine.compaction import kept_from, only_a_summary
from skillchat.engine.context_window import CHARS_PER_TOKEN
from skillchat.engine.messages import message_size
from skillchat.tools.skill_tools import GET_SKILL
from skillchat.tools.workspace_tools import READ_WORKSPACE_FILE

if TYPE_CHECKING:
    from skillchat.engine.loop import Chat

FILE_BLOCK = '<file path="'  # how an attachment is inlined without tools (attachments.py)


@dataclass
class ContextParts:
    """Token estimates of each part; `skills` per activated skill, in order."""

    system: int = 0
    catalog: int = 0
    tools: int = 0
    skills: dict[str, int] = field(default_factory=dict)
    attachments: int = 0
    history: int = 0
    results: int = 0
    compact_frees: int = 0  # what the older turns take, 0 when there are none
    budget: int = 0  # the request budget, in tokens
    window: int | None = None  # the model's window, when known

    @property
    def total(self) -> int:
        fixed = self.system + self.catalog + self.tools + self.attachments
        return fixed + sum(self.skills.values()) + self.history + self.results


def tokens(chars: int) -> int:
    return chars // CHARS_PER_TOKEN


def measure(chat: Chat) -> ContextParts:
    """The parts of `chat`'s next request as it stands."""
    parts = ContextParts()
    system = chat.system_prompt()
    if system:
        whole = message_size({"role": "system", "content": system})
        catalog = len(json.dumps(chat.catalog.block, ensure_ascii=False)) - 2 if chat.catalog else 0
        parts.catalog = tokens(catalog)
        parts.system = tokens(whole - catalog)
    if chat.tools_enabled:
        parts.tools = tokens(len(json.dumps(chat.schemas, ensure_ascii=False)))
    parts.skills = dict.fromkeys(chat.activated, 0)
    _messages(chat.messages, parts)
    budget = chat.budget()
    start = kept_from(chat.messages, budget)
    older = chat.messages[:start]
    if older and not only_a_summary(older):
        parts.compact_frees = tokens(sum(message_size(m) for m in older))
    parts.budget = tokens(budget)
    parts.window = chat.settings.model.context_window or chat.backend.context_window()
    return parts


def _messages(messages: list[dict[str, Any]], parts: ContextParts) -> None:
    """Add each message's size to the part it belongs to."""
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool, skill name or "attached")
    previous: dict[str, Any] = {}
    for message in messages:
        size = message_size(message)
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            attached = _opens_turn(message, previous)
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                name = function.get("name", "")
                calls[call.get("id", "")] = (name, "attached" if attached else _skill(function))
            if attached:
                parts.attachments += tokens(size)
            else:
                parts.history += tokens(size)
        elif role == "tool":
            tool, detail = calls.get(message.get("tool_call_id", ""), ("", ""))
            if detail == "attached":
                parts.attachments += tokens(size)
            elif tool == GET_SKILL and detail in parts.skills:
                parts.skills[detail] += tokens(size)
            else:
                parts.results += tokens(size)
        else:
            inlined = _inlined(message)
            parts.attachments += tokens(inlined)
            parts.history += tokens(size - inlined)
        previous = message


def _opens_turn(message: dict[str, Any], previous: dict[str, Any]) -> bool:
    """True for the `read_file` calls attachments open a turn with (steps/attach.py):
    textless, right after the user's message, nothing but reads."""
    return (
        previous.get("role") == "user"
        and not message.get("content")
        and all(
            (c.get("function") or {}).get("name") == READ_WORKSPACE_FILE
            for c in message["tool_calls"]
        )
    )


def _skill(function: dict[str, Any]) -> str:
    """The skill a get_skill call names ("" for anything else)."""
    if function.get("name") != GET_SKILL:
        return ""
    try:
        name = json.loads(function.get("arguments") or "{}").get("skill_name")
    except (ValueError, AttributeError):
        return ""
    return name if isinstance(name, str) else ""


def _inlined(message: dict[str, Any]) -> int:
    """Characters of `<file>` blocks in a user message (attachments without tools)."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str) or FILE_BLOCK not in content:
        return 0
    start = content.index(FILE_BLOCK)
    end = content.rfind("</file>")
    return len(content[start : end + len("</file>")]) if end > start else 0
