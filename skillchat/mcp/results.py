"""A `tools/call` result as the model gets it, within one result's share of the budget.

    {"content": "text of every content block, in order",
     "structured_content": {...}?,  "notes": ["an image was left out ...", ...]?,
     "truncated": true?}
    | {"error", "error_code"}   TOOL_ERROR (the server's isError, with its text),
                                NOT_ALLOWED, MCP_ERROR (timeout, JSON-RPC error,
                                a server that died), INVALID_ARGUMENT

Content blocks, as the MCP specification's tool results define them: `text` is
kept; `image` and `audio` become a note (the model here takes text only);
`resource` (embedded) keeps its text, a binary one becomes a note; `resource_link`
becomes a line naming it. The whole result is cut at `cap` bytes with a note, like
a file read: a 50 MB answer costs no more than any other result.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from skillchat.mcp.catalog import neutral
from skillchat.tools.base import ToolResult, to_json


def result_of(result: Any, cap: int) -> ToolResult:
    """`result` (an SDK `CallToolResult`) as a tool result of at most `cap` bytes."""
    parts: list[str] = []
    notes: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(block.data) * 3 // 4
            notes.append(
                f"{kind} ({neutral(block.mime_type, 80)}, {size:,} bytes) left out: "
                "this chat passes text only"
            )
        elif kind == "resource":
            resource = block.resource
            uri = neutral(str(resource.uri), 300)
            if getattr(resource, "text", None) is not None:
                parts.append(f"[resource {uri}]\n{resource.text}")
            else:
                size = len(base64.b64decode(resource.blob, validate=False)) if resource.blob else 0
                notes.append(f"binary resource {uri} ({size:,} bytes) left out")
        elif kind == "resource_link":
            parts.append(
                f"[resource link: {neutral(block.name, 200)} {neutral(str(block.uri), 300)}]"
            )
        else:
            notes.append(f"a content block of type {neutral(str(kind), 40)!r} left out")
    text = "\n".join(parts)
    structured = result.structured_content
    if result.is_error:
        message = text or "the tool failed"
        cut, _ = _cut(message, cap)
        content = to_json({"error": cut, "error_code": "TOOL_ERROR"})
        return ToolResult(content, is_error=True, error_code="TOOL_ERROR", preview=cut[:300])
    payload: dict[str, Any] = {"content": text}
    if structured is not None:
        payload["structured_content"] = structured
    if notes:
        payload["notes"] = notes
    encoded = to_json(payload)
    size = len(encoded.encode("utf-8", "surrogatepass"))
    if size <= cap:
        return ToolResult(encoded, preview=_preview(text, notes), size=size)
    room = max(0, cap - len(json.dumps(notes)) - 200)
    structured_text = json.dumps(structured, ensure_ascii=False) if structured is not None else ""
    kept, _ = _cut(text + ("\n" + structured_text if structured_text else ""), room)
    notes.append(f"the result was {size:,} bytes: cut to the first {len(kept.encode()):,}")
    content = to_json({"content": kept, "notes": notes, "truncated": True})
    return ToolResult(content, preview=_preview(kept, notes), size=size, truncated=True)


def _cut(text: str, cap: int) -> tuple[str, bool]:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= cap:
        return text, False
    return data[:cap].decode("utf-8", "ignore"), True


def _preview(text: str, notes: list[str]) -> str:
    lines = text.splitlines()[:6]
    return "\n".join([*lines, *notes])[:600]


def error_result(code: str, message: str) -> ToolResult:
    """An MCP tool's error result: `{"error", "error_code"}`, as every tool's."""
    return ToolResult(
        to_json({"error": message, "error_code": code}),
        is_error=True,
        error_code=code,
        preview=message,
    )


def not_a_result(exc: Any) -> str:
    """Why a server's answer was not a result (a pydantic ValidationError), on one
    line: its first error's place and message, without the server's value."""
    errors = exc.errors(include_input=False, include_url=False)
    if not errors:
        return "unreadable"
    where = ".".join(str(part) for part in errors[0]["loc"]) or "the result"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return neutral(f"{where}: {errors[0]['msg']}{more}", 200)
