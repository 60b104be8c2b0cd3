"""The openai backend's SSE reader (engine/backends/sse.py), on bytes cut anywhere."""

from __future__ import annotations

import pytest

from skillchat.engine.backends.sse import iter_data, payload_delta
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
    assert payload_delta([1, 2]).text is None
    assert payload_delta({"choices": [5]}).text is None
    assert payload_delta({"choices": [{"delta": "x", "finish_reason": "stop"}]}).finish_reason == (
        "stop"
    )
    calls = payload_delta({"choices": [{"delta": {"tool_calls": [5, {"index": True}]}}]})
    assert [(c.index, c.name) for c in calls.tool_calls] == [(None, None), (None, None)]
    usage = payload_delta({"choices": [], "usage": {"prompt_tokens": 3, "total_tokens": "9"}})
    assert usage.usage is not None
    assert (usage.usage.prompt_tokens, usage.usage.total_tokens) == (3, 0)
    with pytest.raises(MalformedChunk, match="'choices' is dict, not a list"):
        payload_delta({"choices": {}})
