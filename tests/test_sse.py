"""The one chunk reader (engine/backends/sse.py): SSE bytes cut anywhere, and chunks
as decoded JSON (the openai backend's) or SDK objects (litellm's) read alike."""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletionChunk

from skillchat.engine.backends.sse import chunk_delta, iter_data
from skillchat.errors import MalformedChunk

BODY = (
    b": keep-alive\r\n\r\n"
    b'data: {"a": "\xc3\xa9"}\r\n\r\n'
    b"event: ping\nid: 7\n\n"  # no data: nothing dispatched
    b"data: one\ndata:two\n\n"
    b"data: [DONE]\r\r"
    b"data: cut off"  # the body ends mid-event: dropped
)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, len(BODY)])
def test_events_are_the_same_however_the_body_is_cut(size: int) -> None:
    pieces = [BODY[i : i + size] for i in range(0, len(BODY), size)]
    assert list(iter_data(pieces)) == ['{"a": "é"}', "one\ntwo", "[DONE]"]


def test_a_line_that_is_not_utf8_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        list(iter_data([b"data: \xff\n\n"]))


def test_payloads_of_the_wrong_shape() -> None:
    assert chunk_delta([1, 2]).text is None
    assert chunk_delta({"choices": [5]}).text is None
    assert chunk_delta({"choices": [{"delta": "x", "finish_reason": "stop"}]}).finish_reason == (
        "stop"
    )
    calls = chunk_delta({"choices": [{"delta": {"tool_calls": [5, {"index": True}]}}]})
    assert [(c.index, c.name) for c in calls.tool_calls] == [(None, None), (None, None)]
    usage = chunk_delta({"choices": [], "usage": {"prompt_tokens": 3, "total_tokens": "9"}})
    assert usage.usage is not None
    assert (usage.usage.prompt_tokens, usage.usage.total_tokens) == (3, 0)
    with pytest.raises(MalformedChunk, match="'choices' is dict, not a list"):
        chunk_delta({"choices": {}})


CHUNK = {
    "id": "c1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "delta": {
                "content": "hi \ud800",
                "tool_calls": [
                    {"index": 0, "id": "t1", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}


def test_an_sdk_object_reads_as_its_json() -> None:
    """litellm's chunks are objects shaped like the SDK's: the same Delta comes out."""
    read = chunk_delta(CHUNK)
    sdk = chunk_delta(ChatCompletionChunk.model_validate(CHUNK))
    assert (sdk.text, sdk.finish_reason, sdk.usage) == (read.text, read.finish_reason, read.usage)
    assert [vars(c) for c in sdk.tool_calls] == [vars(c) for c in read.tool_calls]
    assert (read.text, read.finish_reason, read.tool_calls[0].name) == (
        "hi \ufffd",
        "tool_calls",
        "f",
    )
    assert read.usage is not None and read.usage.total_tokens == 5
    with pytest.raises(MalformedChunk, match="'content' is int, not text"):
        chunk_delta(ChatCompletionChunk.model_construct(choices=[{"delta": {"content": 5}}]))
