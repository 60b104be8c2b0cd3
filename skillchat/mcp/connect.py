"""What the hub (mcp/hub.py) does with one server's connection, apart from holding it:
make its SDK client over the right transport, list its tools, end a stdio server
still starting, and say in one line why a connection failed or an answer was cut."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from skillchat.errors import ConfigError, McpError
from skillchat.mcp.listing import Listed, listed_of
from skillchat.mcp.spawn import guarded_command
from skillchat.mcp_config import McpServerConfig, expand

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import Process
    from mcp import Client

    from skillchat.mcp.hub import ServerState

MAX_LISTED_PAGES = 50  # tools/list pages read from one server (a bound, not a limit)


def client_of(
    config: McpServerConfig,
    process: Process | None,
    auth: httpx2.Auth | None,
    handlers: dict[str, Any],
) -> Client:
    """The SDK client of a server: over its started process (stdio), or over HTTP
    with its headers and, when it may ask for a login, `auth` (mcp/oauth.py)."""
    from mcp import Client, StdioServerParameters

    from skillchat.mcp.stdio import stdio_transport

    try:
        if config.command is not None and process is not None:
            program, args = guarded_command(config.command, config.args)
            params = StdioServerParameters(command=program, args=args, cwd=config.cwd)
            transport = stdio_transport(params, process, config.max_answer_bytes)
            return Client(transport, **handlers)
        from skillchat.mcp.http import http_transport

        headers = {key: expand(value) for key, value in config.headers}
        transport = http_transport(config.url or "", headers, config.max_answer_bytes, auth)
        return Client(transport, **handlers)
    except ConfigError as exc:
        raise McpError(str(exc)) from None


async def list_tools(client: Client) -> list[Listed]:
    tools: list[Listed] = []
    cursor: str | None = None
    for _ in range(MAX_LISTED_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += map(listed_of, page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def halt(state: ServerState) -> None:
    """End a stdio server that is still starting at once, its whole process group
    (one hung before it answered would otherwise hold the close for the SDK's
    grace period of seconds): the transport then sees it gone and closes."""
    import os
    import signal

    process = state.process
    if process is not None and process.returncode is None:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)


def answer_cut(exc: Any, state: ServerState) -> bool:
    """An answer over the server's `max_answer_mb`: its own line (stdio) or the
    SDK's error for a body or SSE event cut there (mcp/http.py)."""
    from skillchat.mcp.http import answer_too_long

    return answer_too_long(str(exc.error.message), state.config.max_answer_bytes)


def connection_lost(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return bool(exc.error.code == CONNECTION_CLOSED)


async def settled(reader: asyncio.Task[None] | None) -> None:
    """Until a server's stderr is read to its end, for at most two seconds (a child
    of it may hold the pipe open)."""
    if reader is not None:
        await asyncio.wait({reader}, timeout=2)


def reason(exc: BaseException, state: ServerState) -> str:
    """Why a server did not start, in one line (an exception group's first cause)."""
    if state.auth is not None and state.auth.failure:  # its own line (mcp/oauth.py)
        return state.auth.failure
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) if isinstance(exc, McpError) else f"{type(exc).__name__}: {exc}"
    tail = state.stderr_tail()
    return text + (f"; its stderr: {tail}" if tail else "")
