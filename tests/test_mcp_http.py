"""A streamable-HTTP MCP server's answers are bounded as a stdio server's lines are:
past the server's `max_answer_mb`, a stdio line, a JSON body or an SSE event is not
read, that call gets one error result, and the server goes on answering the next
call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from chat_helpers import tool_messages
from openai_server import ScriptedServer, call, reply
from test_mcp import ask, http, http_server, stdio, tag  # noqa: F401  (the fixture: no server outlives a test)


@contextmanager
def web_server(answers: str, folder: Path) -> Iterator[str]:
    """The `[mcp.web]` table of the basic test server, answering as `answers` says."""
    if answers == "stdio":
        yield stdio("web", "basic", folder)
        return
    with http_server("basic", folder, *(("--json",) if answers == "json" else ())) as port:
        yield http("web", f"http://127.0.0.1:{port}/mcp")


@pytest.mark.parametrize("answers", ["stdio", "sse", "json"])
def test_an_answer_past_max_answer_mb_is_one_error_and_the_server_goes_on(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    answers: str,
) -> None:
    with web_server(answers, tag) as table:
        server.script(
            # An answer of 1.6 MB (the text, and again as structured content): past
            # the SDK's own 1 MB SSE cap, under this server's 2 MB.
            reply(calls=[call("mcp__web__big", {"size": 800_000})]),
            reply(calls=[call("mcp__web__big", {"size": 3_000_000})]),
            reply(calls=[call("mcp__web__echo", {"text": "still here"})]),
            reply("done"),
        )
        done = ask(server, tag, table + "max_answer_mb = 2\n", "--allow-mcp", "big")
        assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    kept, refused, echoed = (json.loads(tool_messages(server, n)[-1]["content"]) for n in (1, 2, 3))
    assert "error_code" not in kept and kept["truncated"] is True
    assert refused["error_code"] == "MCP_ERROR", refused
    assert "over 2 MB and was not read ([mcp.web] max_answer_mb)" in refused["error"]
    assert echoed["content"] == "still here"
