"""The streamable-HTTP transport, bounded like stdio's: no answer past `limit` bytes.

The SDK reads a JSON answer whole (`response.aread()`), however big, and caps one
SSE event at 1 MB, far below stdio's bound, failing the call as a lost connection.
Here both follow the server's `max_answer_mb` (256 MB, stdio's `MAX_LINE`, by
default): the SSE cap is the SDK's own `max_sse_event_size`, and a POST's JSON
body is counted as it arrives and stopped past the limit (its connection closed),
never held whole. Either way that call fails with `too_long` (mcp/stdio.py) and
the server stays usable: the next call is a new request on the same session.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from skillchat.mcp.stdio import too_long

# The SDK's message for an SSE event past its cap (httpx2's `SSEError`).
_SSE_TOO_LONG = re.compile(r"Server-sent event exceeded the \d+ byte limit")


def http_transport(url: str, headers: dict[str, str], limit: int) -> Any:
    """`mcp.client.streamable_http.streamable_http_client` with the SDK's client
    settings (its timeouts), its JSON answers and SSE events bounded at `limit` bytes."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    client = httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=_Bounded(httpx2.AsyncHTTPTransport(), limit),
    )
    return streamable_http_client(url, http_client=client, max_sse_event_size=limit)


def answer_too_long(message: str, limit: int) -> bool:
    """Whether the SDK's error `message` for a call is an answer over `limit` bytes."""
    return too_long(limit) in message or _SSE_TOO_LONG.search(message) is not None


class _BoundedStream(httpx2.AsyncByteStream):
    """A body that stops past `limit` bytes with the SDK's kind of error for it."""

    def __init__(self, stream: httpx2.AsyncByteStream, limit: int) -> None:
        self.stream, self.limit = stream, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self.stream:
            read += len(chunk)
            if read > self.limit:
                # A StreamError is what the SDK turns into that call's error result.
                raise httpx2.StreamError(too_long(self.limit))
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Bounded(httpx2.AsyncBaseTransport):
    """The client's transport, with a POST's non-SSE answer counted as it streams
    (SSE answers and the GET stream have the SDK's per-event cap)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int) -> None:
        self.inner, self.limit = inner, limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        if request.method != "POST" or kind.startswith("text/event-stream"):
            return response
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_BoundedStream(response.stream, self.limit),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
