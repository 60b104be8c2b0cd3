"""What the hub (mcp/hub.py) knows and does of one server, apart from holding its
connection (mcp/server_task.py): its state, starting its process (stdio), making
its SDK client over the right transport, listing its tools, ending a stdio server
still starting, and saying in one line why a connection failed or an answer was cut."""

from __future__ import annotations

import asyncio
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.errors import ConfigError, McpError
from skillchat.mcp.catalog import neutral
from skillchat.mcp.listing import Kept, Listed, listed_of
from skillchat.mcp.prompts import Prompt, Resource
from skillchat.mcp.spawn import StderrTail, guarded_command, keep_tail, server_env, start_stdio
from skillchat.mcp_config import McpServerConfig, expand

if TYPE_CHECKING:
    from anyio.abc import Process
    from mcp import Client

    from skillchat.mcp.oauth import Authorize, Provider

MAX_LISTED_PAGES = 50  # tools/list pages read from one server (a bound, not a limit)
LAST_WORDS = 300  # characters of a server's stderr a failure quotes


@dataclass
class ServerState:
    """What the session knows of one server: its state, its tools, why it failed."""

    config: McpServerConfig
    state: str = "idle"  # idle (not started) | starting | ready | failed | stopped
    error: str = ""
    tools: list[Listed] = field(default_factory=list)  # as it listed them this session
    kept: Kept | None = None  # as it listed them when it last started (mcp/listing.py)
    process: Process | None = None  # a stdio server's, while it runs
    restarts: int = 0
    client: Client | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    stop: asyncio.Event | None = None
    stderr: StderrTail = field(default_factory=StderrTail)
    reader: asyncio.Task[None] | None = None  # reads stderr into `stderr` (stdio only)
    task: asyncio.Task[Any] | None = None
    generation: int = 0
    skill_entries: list[Any] | None = None  # None: the server does not serve skills
    prompts: list[Prompt] = field(default_factory=list)  # for the user (mcp/prompts.py)
    resources: list[Resource] = field(default_factory=list)
    auth: Provider | None = None  # an HTTP server's OAuth (mcp/oauth.py)

    def stderr_tail(self) -> str:
        """The last words the server wrote on stderr (its own on a failure), on one
        line, its escapes and control characters removed."""
        return neutral(" ".join(self.stderr.text().split())[-LAST_WORDS:], LAST_WORDS)


def client_of(
    state: ServerState,
    process: Process | None,
    authorize: Authorize | None,
    handlers: dict[str, Any],
) -> Client:
    """The SDK client of a server: over its started process (stdio), or over HTTP with
    its headers and, for a server that may ask for a login, OAuth (mcp/oauth.py: the
    provider kept in `state.auth`, for its one-line reasons)."""
    from mcp import Client, StdioServerParameters

    from skillchat.mcp.stdio import stdio_transport

    config = state.config
    try:
        if config.command is not None and process is not None:
            program, args = guarded_command(config.command, config.args)
            params = StdioServerParameters(command=program, args=args, cwd=config.cwd)
            transport = stdio_transport(params, process, config.max_answer_bytes)
            return Client(transport, **handlers)
        from skillchat.mcp.http import http_transport

        if not any(key.lower() == "authorization" for key, _ in config.headers):
            # No token of the user's own: the server may ask for a login.
            from skillchat.mcp.oauth import Provider

            state.auth = Provider(config, authorize)
        headers = {key: expand(value) for key, value in config.headers}
        url, limit = config.url or "", config.max_answer_bytes
        return Client(http_transport(url, headers, limit, state.auth), **handlers)
    except ConfigError as exc:
        raise McpError(str(exc)) from None


async def spawn(state: ServerState) -> Process | None:
    """A stdio server's process, started with only anyio loaded; None for HTTP."""
    config = state.config
    if config.command is None:
        return None
    try:
        program, args = guarded_command(config.command, config.args)
        env = server_env({key: expand(value) for key, value in config.env})
    except ConfigError as exc:
        raise McpError(str(exc)) from None
    process = state.process = await start_stdio(program, args, env, config.cwd)
    if process.stderr is not None:
        state.reader = asyncio.ensure_future(keep_tail(process.stderr, state.stderr))
    return process


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
