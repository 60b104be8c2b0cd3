"""The streamable-HTTP transport, bounded like stdio's: no answer past `limit` bytes.

The SDK reads a JSON answer whole (`response.aread()`), however big, and caps one
SSE event at 1 MB, far below stdio's bound, failing the call as a lost connection.
Here both follow the server's `max_answer_mb` (256 MB, stdio's `MAX_LINE`, by
default): the SSE cap is the SDK's own `max_sse_event_size`, and a POST's JSON
body is counted as it arrives and stopped past the limit (its connection closed),
never held whole. Either way that call fails with `too_long` (mcp/stdio.py) and
the server stays usable: the next call is a new request on the same session.

A call that times out stops being read. At the 2026-07-28 revision the SDK closes
the request's stream when the call is given up; at the earlier ones it only sends
`notifications/cancelled` and reads on, so a server that answers with an SSE stream
that never ends (progress, pings, anything but the response) kept skillchat reading
and parsing it for the rest of the session. Here the request's POST, its stream and
any reconnection of it are closed at every revision, the notification still sent.
The SDK's `streamable_http_client` builds its transport itself, so its few lines are
here around this one change (`_Transport`); the SDK is pinned and its own classes
are used as they are.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import StreamableHTTPTransport
from mcp.shared._context_streams import create_context_streams
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCNotification

from skillchat.mcp.stdio import too_long

# The SDK's message for an SSE event past its cap (httpx2's `SSEError`).
_SSE_TOO_LONG = re.compile(r"Server-sent event exceeded the \d+ byte limit")


# An answer of the OAuth flow (metadata, registration, token: mcp/oauth.py) is a few
# kilobytes; one past this is cut, as a server's huge or endless answer.
AUTH_ANSWER_LIMIT = 1024 * 1024


def http_transport(
    url: str, headers: dict[str, str], limit: int, auth: httpx2.Auth | None = None
) -> Any:
    """The SDK's streamable-HTTP client over `_Transport`, with the SDK's client settings
    (its timeouts), its JSON answers and SSE events bounded at `limit` bytes, and
    `auth` (mcp/oauth.py) when the server may ask for a login."""
    client = httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=_Bounded(httpx2.AsyncHTTPTransport(), limit, url),
        auth=auth,
    )
    return _streamable_http(_Transport(url, max_sse_event_size=limit), client)


class _Transport(StreamableHTTPTransport):
    """The SDK's transport, but a request given up (`notifications/cancelled`) has its
    POST closed at every revision, not only at 2026-07-28 (see above)."""

    def _consume_modern_cancellation(self, session_message: SessionMessage) -> bool:
        message = session_message.message
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = cancelled_request_id_from_params(message.params)
            post = self._in_flight_posts.get(request_id) if request_id is not None else None
            if post is not None:
                post.scope.cancel()
        return super()._consume_modern_cancellation(session_message)


@asynccontextmanager
async def _streamable_http(
    transport: _Transport, client: httpx2.AsyncClient
) -> AsyncIterator[tuple[Any, Any]]:
    """`mcp.client.streamable_http.streamable_http_client` over `transport`: the same
    streams and tasks, the session ended (DELETE) and the client closed at the end."""
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)
    async with (
        client,
        read_writer,
        read_stream,
        write_stream,
        write_reader,
        anyio.create_task_group() as group,
    ):

        def start_get_stream() -> None:
            group.start_soon(transport.handle_get_stream, client, read_writer)

        group.start_soon(
            transport.post_writer,
            client, write_reader, read_writer, write_stream, start_get_stream, group,
        )  # fmt: skip
        try:
            yield read_stream, write_stream
        finally:
            if transport.session_id:
                await transport.terminate_session(client)
            group.cancel_scope.cancel()


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
    (SSE answers and the GET stream have the SDK's per-event cap), and any answer
    of a URL other than the server's (OAuth's) bounded at `AUTH_ANSWER_LIMIT`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int, endpoint: str) -> None:
        self.inner, self.limit, self.endpoint = inner, limit, httpx2.URL(endpoint)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").lower()
        limit = self.limit
        if request.url.copy_with(query=None) != self.endpoint.copy_with(query=None):
            limit = AUTH_ANSWER_LIMIT
        elif request.method != "POST" or kind.startswith("text/event-stream"):
            return response
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_BoundedStream(response.stream, limit),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
