"""What a stored message may be: the rules the store applies, as pure functions.

Kept apart from the SQL so each rule can be read (and tested) on its own:

- `check_message`: only user, assistant and tool messages, well-formed tool calls.
  System prompts are refused: they are rebuilt on resume, and with tools off one may
  hold a SKILL.md body.
- what a tool result is stored as is its tool's decision (`Tool.stored`, reached
  through `skillchat.tools.toolbox.stored_result`): SKILL.md bodies and file
  contents become stubs, so a resumed chat reads the current version.
- `to_columns` / `from_columns`: the OpenAI dict <-> table row, lossless: keys without
  a column of their own (and non-text content) travel in the `extra` JSON.
- `live`: the messages a compacted chat goes on with (the whole history stays stored).
- `ready_to_send`: a stored transcript as a provider accepts it after a crash.
- `without_images`: a user message's images (engine/images.py) become a line each:
  the bytes are the file's, and a resumed chat reads the file again if it needs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

NO_RESULT = "ERROR: no result was saved for this tool call (the session ended first)"

ROLES = ("user", "assistant", "tool")
TITLE_CHARS = 80
COLUMNS = ("role", "content", "tool_calls", "tool_call_id", "name")
# The `extra` key of a compaction's messages (engine/compaction.py): on the first, a
# dict with `kept`, how many messages before it the compacted chat keeps; on the
# rest, their role.
COMPACTION = "compaction"


IMAGE_STUB = "[image not stored with the chat: no longer attached; read the file again if needed]"


def is_image_part(part: Any) -> bool:
    """An `image_url` content part (an image sent to the model)."""
    return isinstance(part, dict) and part.get("type") == "image_url"


def without_images(content: Any) -> Any:
    """Message content with each image part replaced by IMAGE_STUB as a text part."""
    if not isinstance(content, list):
        return content
    return [{"type": "text", "text": IMAGE_STUB} if is_image_part(p) else p for p in content]


_FENCE = re.compile(r"\s*(`{3,}|~{3,})[^`\s]*\s*")


def make_title(text: str) -> str:
    """A chat title from a user message: code fences (a piped block's) dropped,
    whitespace collapsed, cut to TITLE_CHARS."""
    kept = [line for line in text.splitlines() if not _FENCE.fullmatch(line)]
    title = " ".join(" ".join(kept).split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def check_message(message: Mapping[str, Any]) -> None:
    """Refuse (ValueError) what would make a transcript a provider rejects."""
    role = message.get("role")
    if role == "system":
        raise ValueError("system prompts are rebuilt when a chat resumes, never stored")
    if role not in ROLES:
        raise ValueError(f"message role must be one of {', '.join(ROLES)}, not {role!r}")
    calls = message.get("tool_calls")
    if calls is not None:
        if role != "assistant" or not isinstance(calls, list):
            raise ValueError("tool_calls must be a list, on an assistant message")
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not (
                isinstance(call.get("id"), str)
                and isinstance(function, dict)
                and isinstance(function.get("name"), str)
            ):
                raise ValueError(f"tool call without an id and function name: {call!r}")
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise ValueError("a tool message needs the tool_call_id it answers")


def dumps(value: Any) -> str:
    """JSON for a column; ValueError (not TypeError) for what cannot be stored."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"message is not JSON-serialisable: {exc}") from None


def to_columns(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """(role, content, tool_calls, tool_call_id, name, extra) for the messages table."""
    content = message.get("content")
    extra = {k: v for k, v in message.items() if k not in COLUMNS}
    if content is not None and not isinstance(content, str):
        extra["content"] = content  # content parts (text, images...) kept as JSON
    calls = message.get("tool_calls")
    return (
        message["role"],
        content if isinstance(content, str) else None,
        dumps(calls) if calls else None,  # an empty list is dropped: providers refuse it
        message.get("tool_call_id"),
        message.get("name"),
        dumps(extra) if extra else None,
    )


def from_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAI message of a row; `content` is always present (None if empty)."""
    message: dict[str, Any] = {"role": row["role"], "content": row["content"]}
    if row["tool_calls"] is not None:
        message["tool_calls"] = json.loads(row["tool_calls"])
    for key in ("tool_call_id", "name"):
        if row[key] is not None:
            message[key] = row[key]
    if row["extra"] is not None:
        message.update(json.loads(row["extra"]))
    return message


def live(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored messages a resumed chat goes on with, `COMPACTION` flags removed.

    A compaction is stored after the messages it keeps, so the chat is replayed in
    order: each compaction's messages replace all that came before it but its
    `kept` last, exactly as the loop replaced them in memory.
    """
    messages: list[dict[str, Any]] = []
    i = 0
    while i < len(stored):
        info = stored[i].get(COMPACTION)
        if not isinstance(info, dict):
            messages.append(_unflagged(stored[i]))
            i += 1
            continue
        end = i + 1
        while end < len(stored) and isinstance(stored[end].get(COMPACTION), str):
            end += 1
        kept = info.get("kept")
        tail = messages[-kept:] if isinstance(kept, int) and kept > 0 else []
        messages = [_unflagged(m) for m in stored[i:end]] + tail
        i = end
    return messages


def _unflagged(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != COMPACTION}


def ready_to_send(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stored transcript as a provider accepts it.

    Tool calls a crash left unanswered get an error result right after the answered
    ones, and an assistant message interrupted before any text or call is dropped:
    providers reject both, and neither carries anything the model said.
    """
    messages: list[dict[str, Any]] = []
    pending: list[str] = []
    for message in stored:
        if message["role"] == "tool":
            if message["tool_call_id"] in pending:  # always, unless the file was edited
                pending.remove(message["tool_call_id"])
                messages.append(message)
            continue
        messages.extend(_unanswered(pending))
        calls = message.get("tool_calls") or []
        pending = [call["id"] for call in calls]
        if message["role"] == "assistant" and not message.get("content") and not calls:
            continue
        messages.append(message)
    messages.extend(_unanswered(pending))
    return messages


def _unanswered(call_ids: list[str]) -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": c, "content": NO_RESULT} for c in call_ids]
