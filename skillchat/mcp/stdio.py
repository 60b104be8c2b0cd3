"""The stdio transport, with a reader that stays linear on a huge line.

The SDK's `stdio_client` decodes each 64 KB chunk and joins it to the text read so
far before splitting on newlines, so one line of n bytes costs n²/64 KB: a 50 MB
tool result took minutes and its call timed out. This transport is the SDK's own
(the same spawn in a session of its own, the same shutdown that closes stdin, then
signals the group), with one change: the reader keeps bytes in a `bytearray` and
looks for the newline only in the chunk just read, so a line costs what it weighs.

A line longer than the server's `max_answer_mb` (`MAX_LINE` by default) is not
kept: its bytes are skipped up to its end, and when it begins like a JSON-RPC
response its request is answered with an error (the result would have been cut to
a share of the context anyway, and reading hundreds of megabytes only to cut them
is memory taken from the user). The SDK is pinned:
its private helpers are used as they are, not copied.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from skillchat.mcp_config import DEFAULT_MAX_ANSWER_MB

if TYPE_CHECKING:
    from anyio.abc import Process
    from mcp import StdioServerParameters

MAX_LINE = DEFAULT_MAX_ANSWER_MB * 1024 * 1024
_HEAD = 512  # bytes in which an over-long response's `id` is looked for
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})')


class LineSplitter:
    """Bytes in, complete lines out; an over-long line comes out once as its head."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.skipping = False  # inside an over-long line, until its newline
        self.head = b""

    def feed(self, chunk: bytes) -> list[tuple[bytes, bool]]:
        """The lines `chunk` completes, each with whether it was too long (then
        only its first `_HEAD` bytes are given)."""
        out: list[tuple[bytes, bool]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if self.skipping:
                if end >= 0:
                    out.append((self.head, True))
                    self.skipping, self.head = False, b""
            else:
                self.buffer += piece
                if len(self.buffer) > self.limit:
                    self.head = bytes(self.buffer[:_HEAD])
                    self.buffer = bytearray()
                    self.skipping = end < 0
                    if end >= 0:
                        out.append((self.head, True))
                elif end >= 0:
                    out.append((bytes(self.buffer), False))
                    self.buffer = bytearray()
            if end < 0:
                return out
            start = end + 1


def too_long(limit: int) -> str:
    """What a call whose answer is over `limit` bytes gets instead (HTTP too: mcp/http.py)."""
    return f"the server's answer is over {limit / (1024 * 1024):g} MB and was not read"


def too_long_answer(head: bytes, limit: int) -> str | None:
    """The JSON-RPC error that answers an over-long response (None: not a response)."""
    found = _ID.search(head)
    if found is None or b'"method"' in head:
        return None
    error = {"code": -32603, "message": too_long(limit)}
    request_id: Any = json.loads(found.group(1))
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, process: Process, limit: int = MAX_LINE
) -> AsyncGenerator[Any]:
    """`mcp.client.stdio.stdio_client` with the linear reader bounded at `limit` bytes
    a line (see above), over `process`, the server already started (mcp/spawn.py
    `start_stdio`)."""
    import anyio
    import anyio.lowlevel
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        lines = LineSplitter(limit)
        try:
            async with read_writer:
                try:
                    async for chunk in process.stdout:
                        for line, cut in lines.feed(chunk):
                            text = line.decode(server.encoding, server.encoding_error_handler)
                            if cut:
                                answer = too_long_answer(line, lines.limit)
                                if answer is None:
                                    continue
                                text = answer
                            try:
                                await read_writer.send(sdk._parse_line(text))
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                finally:
                    await sdk._drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # shutdown closed the pipe, or the server died: the session sees the end

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    payload = (data + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(payload)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
