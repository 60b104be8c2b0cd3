"""The stdio reader's line splitting (skillchat/mcp/stdio.py): linear on a huge
line, bounded past `MAX_LINE`, and an over-long answer still answers its request.
The 50 MB result through a real server is in tests/test_mcp.py."""

from __future__ import annotations

import json

from skillchat.mcp.stdio import LineSplitter, too_long_answer


def test_lines_split_across_chunks_and_several_in_one() -> None:
    lines = LineSplitter(limit=100)
    assert lines.feed(b'{"a":') == []
    assert lines.feed(b'1}\n{"b":2}\n{"c"') == [(b'{"a":1}', False), (b'{"b":2}', False)]
    assert lines.feed(b":3}\n") == [(b'{"c":3}', False)]


def test_an_over_long_line_is_skipped_to_its_end_and_given_as_its_head() -> None:
    lines = LineSplitter(limit=100)
    head = b'{"jsonrpc":"2.0","id":7,"result":{"text":"'
    assert lines.feed(head + b"x" * 80) == []
    assert lines.feed(b"x" * 1000) == []  # past the limit: nothing is kept
    assert len(lines.buffer) == 0
    out = lines.feed(b'x"}}\n{"ok":1}\n')
    assert out[0][1] is True and out[0][0].startswith(head)
    assert out[1] == (b'{"ok":1}', False)
    answer = json.loads(too_long_answer(out[0][0], 256 * 1024 * 1024) or "")
    assert answer["id"] == 7 and "over 256 MB" in answer["error"]["message"]


def test_only_a_response_is_answered() -> None:
    assert too_long_answer(b'{"jsonrpc":"2.0","method":"notify","id":1', 10) is None
    assert too_long_answer(b'{"jsonrpc":"2.0","result":', 10) is None
    answer = json.loads(too_long_answer(b'{"id": "a\\"b", "result"', 10) or "")
    assert answer["id"] == 'a"b'
