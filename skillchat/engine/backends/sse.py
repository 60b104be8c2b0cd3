"""The one chunk reader: SSE events, and the chunks in them, to `Delta`s.

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
- `chunk_delta` turns one chunk into a `Delta`: decoded JSON (the openai
  backend's) or an SDK object (litellm's chunks, shaped like the SDK's), read the
  same way. The SDKs build chunks without validating them, so every field is
  checked here: a field of the wrong type raises `MalformedChunk` (one provider
  error, never a TypeError deep in the loop); a value that is not an object where
  one is expected is read as empty, as the SDK's lenient construction leaves it;
  text is cleaned of lone surrogates before anything keeps it.
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


def _field(value: Any, name: str) -> Any:
    """`value[name]` of a decoded JSON object, `value.name` of an SDK (or litellm)
    object; None for anything else (a list, text or a number where an object belongs:
    read as empty, as the SDK's lenient construction leaves it)."""
    if isinstance(value, dict):
        return value.get(name)
    if value is None or isinstance(value, str | int | float | list | tuple):
        return None
    return getattr(value, name, None)


def _text(value: Any, name: str) -> str | None:
    """A text field: None, or the string with lone surrogates replaced; anything
    else is a malformed chunk."""
    if value is None or isinstance(value, str):
        return clean_text(value) if value else None
    raise MalformedChunk(f"'{name}' is {type(value).__name__}, not text")


def _arguments(value: Any) -> str | None:
    """Arguments as JSON text; an object (or 5, or a list) is re-encoded, so the tool
    answers with an error the model can read."""
    if value is None or isinstance(value, str):
        return clean_text(value) if value else None
    return clean_text(json.dumps(value, ensure_ascii=False, default=str))


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _fragment(call: Any) -> ToolCallFragment:
    function = _field(call, "function")
    call_id, name = _field(call, "id"), _field(function, "name")
    return ToolCallFragment(
        index=_whole(_field(call, "index")),
        id=clean_text(str(call_id)) if call_id not in (None, "") else None,
        name=clean_text(str(name)) if name not in (None, "") else None,
        arguments=_arguments(_field(function, "arguments")),
    )


def _list(value: Any, name: str) -> list[Any] | tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise MalformedChunk(f"'{name}' is {type(value).__name__}, not a list")
    return value


def chunk_delta(chunk: Any) -> Delta:
    """One `chat.completion.chunk`, decoded JSON or an SDK object, as a Delta (see the
    module's docstring)."""
    text, finish = None, None
    fragments: tuple[ToolCallFragment, ...] = ()
    choices = _list(_field(chunk, "choices"), "choices")
    if choices:
        choice = choices[0]
        delta = _field(choice, "delta")
        text = _text(_field(delta, "content"), "content")
        calls = _list(_field(delta, "tool_calls") or None, "tool_calls")
        fragments = tuple(_fragment(call) for call in calls)
        finish = _text(_field(choice, "finish_reason"), "finish_reason")
    usage = None
    if (u := _field(chunk, "usage")) is not None:
        usage = Usage(
            prompt_tokens=_whole(_field(u, "prompt_tokens")) or 0,
            completion_tokens=_whole(_field(u, "completion_tokens")) or 0,
            total_tokens=_whole(_field(u, "total_tokens")) or 0,
        )
    return Delta(text=text, tool_calls=fragments, finish_reason=finish, usage=usage)


def is_empty(delta: Delta) -> bool:
    """True for chunks that carry nothing (the role-only first chunk, keep-alives)."""
    return not (delta.text or delta.tool_calls or delta.finish_reason or delta.usage)
