"""The openai backend's stream, read from the raw response: SSE events to `Delta`s.

The SDK's own `Stream` builds a Pydantic `ChatCompletionChunk` for every event
(about 90 µs each, most of the CPU of a streamed reply, against a few µs for
`json.loads`), and the backend then reads a handful of fields out of it. So the
backend asks the SDK for the raw `httpx.Response` (the request, its headers, auth
and status errors stay the SDK's) and reads the events here:

- `iter_data` splits the body into events as the SSE standard says (lines end in
  `\\n`, `\\r\\n` or `\\r`; `data:` lines of one event are joined; `:` comments
  and other fields are skipped; an event is dispatched at a blank line, and one the
  body ends in the middle of is dropped). A line that is not UTF-8 raises
  `UnicodeDecodeError`, a `ValueError` like a payload that is not JSON.
- `payload_delta` turns one decoded chunk into a `Delta` with the checks
  `chunk_to_delta` makes on SDK objects: a field of the wrong type raises
  `MalformedChunk`; a value that is not an object where one is expected is read
  as empty, as the SDK's lenient construction leaves it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from skillchat.engine.events import Delta, ToolCallFragment, Usage
from skillchat.engine.messages import clean_text
from skillchat.errors import MalformedChunk


def iter_data(chunks: Iterable[bytes]) -> Iterator[str]:
    """The `data` of each complete event in a stream of body bytes."""
    buffer = b""
    data: list[str] = []
    for chunk in chunks:
        buffer += chunk
        # A trailing "\r" may be the first half of "\r\n": kept for the next chunk.
        end = len(buffer) - 1 if buffer.endswith(b"\r") else len(buffer)
        cut = buffer.rfind(b"\n", 0, end)
        if b"\r" in buffer:
            cut = max(cut, buffer.rfind(b"\r", 0, end))
        if cut < 0:
            continue
        complete, buffer = buffer[: cut + 1], buffer[cut + 1 :]
        for raw in complete.splitlines():
            if not raw:
                if data:
                    yield "\n".join(data)
                    data = []
                continue
            line = raw.decode("utf-8")
            if line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
            elif line == "data":
                data.append("")


def text_field(value: Any, field: str) -> str | None:
    """A text field of a chunk (shared with `chunk_to_delta`): None, or the string
    with lone surrogates replaced; anything else is a malformed chunk."""
    if value is None or isinstance(value, str):
        return clean_text(value) if value else None
    raise MalformedChunk(f"'{field}' is {type(value).__name__}, not text")


def arguments_text(value: Any) -> str | None:
    """Arguments as JSON text; an object (or 5, or a list) is re-encoded, so the tool
    answers with an error the model can read."""
    if value is None or isinstance(value, str):
        return clean_text(value) if value else None
    return clean_text(json.dumps(value, ensure_ascii=False, default=str))


def _fragment(call: Any) -> ToolCallFragment:
    if not isinstance(call, dict):
        return ToolCallFragment(index=None, id=None, name=None, arguments=None)
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    index, call_id, name = call.get("index"), call.get("id"), function.get("name")
    return ToolCallFragment(
        index=index if isinstance(index, int) and not isinstance(index, bool) else None,
        id=clean_text(str(call_id)) if call_id not in (None, "") else None,
        name=clean_text(str(name)) if name not in (None, "") else None,
        arguments=arguments_text(function.get("arguments")),
    )


def _count(usage: Any, field: str) -> int:
    value = usage.get(field, 0) if isinstance(usage, dict) else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def payload_delta(payload: Any) -> Delta:
    """One decoded `chat.completion.chunk` as a Delta (see the module's docstring)."""
    if not isinstance(payload, dict):
        return Delta()
    text, finish = None, None
    fragments: tuple[ToolCallFragment, ...] = ()
    choices = payload.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise MalformedChunk(f"'choices' is {type(choices).__name__}, not a list")
    if choices and isinstance(choice := choices[0], dict):
        delta = choice.get("delta")
        if isinstance(delta, dict):
            text = text_field(delta.get("content"), "content")
            calls = delta.get("tool_calls") or ()
            if not isinstance(calls, list | tuple):
                raise MalformedChunk(f"'tool_calls' is {type(calls).__name__}, not a list")
            fragments = tuple(_fragment(call) for call in calls)
        finish = text_field(choice.get("finish_reason"), "finish_reason")
    usage = None
    if (u := payload.get("usage")) is not None:
        usage = Usage(
            prompt_tokens=_count(u, "prompt_tokens"),
            completion_tokens=_count(u, "completion_tokens"),
            total_tokens=_count(u, "total_tokens"),
        )
    return Delta(text=text, tool_calls=fragments, finish_reason=finish, usage=usage)
