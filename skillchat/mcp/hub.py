"""The MCP servers of one session, each connected on one background event loop.

    hub = McpHub(settings.mcp.active())   # starts nothing
    hub.start(hub.needed())         # returns at once: servers connect in the background
    hub.wait(timeout)               # until the servers started are up (or failed)
    hub.listed()                    # [(server, Listed)]: as listed now, or as kept
    hub.live_tool("github", "get_issue")     # starts that server if it is not yet
    hub.call("github", "get_issue", {...})   # -> CallToolResult; McpError otherwise
    hub.served_skills()             # the skills of servers declaring the skills extension
    hub.prompt("docs", "review", {...})  # a prompt's messages, the user's turn (prompts.py)
    McpHub(servers, elicit)         # a server's questions answered by `elicit` (elicit.py)
    McpHub([server], authorize=...)  # `mcp login`: the OAuth flow run whole (login.py)
    hub.close()                     # also at exit; kill -9 is covered by spawn.py

A server starts when something needs it, never at the hub's making: a request that
offers its tools when no list of it is kept (mcp/listing.py) or when it serves
skills (the catalog carries them), a call of one of its tools, `mcp list`, the
REPL (which starts every server in the background as it opens: the user types
meanwhile), a look-up of served skills (`skills list --served`). A server with a
kept list and no call stays a line in the config: nothing is spawned or imported.

skillchat is synchronous; the official SDK is asyncio. One daemon thread runs an
event loop for all servers of the session; each server has one task that holds its
`Client` open (an SDK client must be entered and left in one task) until the hub
closes (mcp/server_task.py). A call is a coroutine submitted to that loop and waited for with the
server's timeout. A server whose connection ends (it crashed, or exited) is
restarted at the next call, at most `MAX_RESTARTS` times a session; after that its
calls fail at once with the reason. The SDK is imported here only, and this module
only when a server is configured.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from typing import TYPE_CHECKING, Any, cast

from skillchat.errors import McpError
from skillchat.mcp.connect import (
    ServerState,
    answer_cut,
    connection_lost,
    halt,
    list_tools,
    settled,
)
from skillchat.mcp.elicit import Elicit, Relay
from skillchat.mcp.listing import Listed, keep, kept
from skillchat.mcp.prompts import prompt_text
from skillchat.mcp.results import not_a_result
from skillchat.mcp.server_task import hold
from skillchat.mcp.stdio import too_long
from skillchat.mcp_config import McpServerConfig

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult

    from skillchat.mcp.oauth import Authorize
    from skillchat.mcp.skills import ServedSkills
    from skillchat.skills.model import Skill

MAX_RESTARTS = 2


class McpHub:
    """The servers of one session (see the module docstring)."""

    def __init__(
        self,
        servers: list[McpServerConfig],
        elicit: Elicit | None = None,
        authorize: Authorize | None = None,
    ) -> None:
        lists = kept(servers)
        self.servers = {s.name: ServerState(s, kept=lists.get(s.name)) for s in servers}
        # A server's questions, asked on the thread of their call (mcp/elicit.py) with
        # `elicit`, the chat's answer; None: elicitation not offered.
        self.questions = Relay(elicit)
        # How a login is taken (`mcp login`, mcp/login.py); None: a server that wants
        # one fails in one line naming `skillchat mcp login NAME`.
        self.authorize = authorize
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.changed = False  # a server announced a new tool list: read it at the next turn
        self._served: ServedSkills | None = None  # their skills, and the files read of them

    # ------------------------------------------------------------ lifetime

    def start(self, names: list[str] | None = None) -> None:
        """Connect the servers named (all by default) that are not started yet,
        without waiting; the event loop starts with the first."""
        idle = [
            s
            for n, s in self.servers.items()
            if s.state == "idle" and (names is None or n in names)
        ]
        if not idle:
            return
        self._start_loop()
        for state in idle:
            self._connect(state)

    def needed(self) -> list[str]:
        """The servers a request that offers their tools must wait for: those with
        no kept list, and those serving skills (the catalog carries them)."""
        return [n for n, s in self.servers.items() if s.kept is None or s.kept.skills]

    def _start_loop(self) -> None:
        if self._loop is not None:
            return
        # The SDK logs a server's misbehaviour; what a server says is shown only
        # through `mcp list` and results, cleaned, never by a log handler.
        sdk_log = logging.getLogger("mcp")
        sdk_log.addHandler(logging.NullHandler())
        sdk_log.propagate = False
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="skillchat-mcp", daemon=True)
        self._thread.start()
        ready.wait()
        atexit.register(self.close)

    def wait(self, names: list[str] | None = None) -> None:
        """Until each server started (of `names`, else all) is up or has failed,
        each within its startup timeout; a server not started is not waited for."""
        for name, state in self.servers.items():
            if state.state == "idle" or (names is not None and name not in names):
                continue
            limit = state.config.startup_timeout_s
            if not state.ready.wait(limit) and state.state == "starting":
                state.state, state.error = "failed", f"did not start in {limit:g} s"

    def close(self) -> None:
        """Stop every server (the SDK closes stdin, then signals its group) and the loop."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for state in self.servers.values():
            if state.state == "starting":  # it never answered: nothing to end in order
                halt(state)
                if state.task is not None:
                    loop.call_soon_threadsafe(state.task.cancel)
            if state.stop is not None:
                loop.call_soon_threadsafe(state.stop.set)
        pending = [s.task for s in self.servers.values() if s.task is not None]

        async def settle() -> None:
            await asyncio.wait(pending, timeout=6)
            readers = [s.reader for s in self.servers.values() if s.reader is not None]
            for reader in readers:  # a server's child may hold its stderr open
                reader.cancel()
            if readers:
                await asyncio.wait(readers, timeout=1)

        if pending:
            with suppress(FutureTimeout, RuntimeError):
                asyncio.run_coroutine_threadsafe(settle(), loop).result(8)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(2)
        for state in self.servers.values():
            if state.state != "failed":
                state.state = "stopped"
        if self._served is not None:
            self._served.close()
        atexit.unregister(self.close)

    # ------------------------------------------------------------- queries

    def listed(self) -> list[tuple[str, Listed]]:
        """Every tool of every server, in config order: as it listed them this
        session (one that died since is started again at its next call), else as
        it listed them last time (kept) while it has not started or is starting;
        none of a server that never came up."""
        found: list[tuple[str, Listed]] = []
        for name, state in self.servers.items():
            tools = state.tools
            if not tools and state.state in ("idle", "starting") and state.kept is not None:
                tools = state.kept.tools
            found += [(name, tool) for tool in tools]
        return found

    def live_tool(self, server: str, tool: str) -> Listed | None:
        """The tool `tool` as `server` lists it now, starting the server if it is not
        up (its startup timeout at most); None when it lists no such tool.
        McpError when the server cannot be reached."""
        state = self._running(server)
        return next((t for t in state.tools if t.name == tool), None)

    def relist(self) -> None:
        """A server announced a changed tool list: read every running server's again."""
        self.changed = False
        for state in self.servers.values():
            if state.client is not None and state.state == "ready":
                with suppress(Exception):  # a server that fails here fails at its next call
                    future = self._submit(list_tools(state.client))
                    state.tools = future.result(state.config.timeout_s)
                    keep(state.config, state.tools, state.skill_entries is not None)

    def logged_in(self) -> bool:
        """Connect again the servers that failed for want of a login and have one
        now (`skillchat mcp login` ran in another terminal); whether any was."""
        again = [
            s
            for s in self.servers.values()
            if s.state == "failed" and s.auth is not None and s.auth.file.changed()
        ]
        for state in again:
            self._restart(state)
        return bool(again)

    def relist_skills(self) -> None:
        """Read the served skills' entries again (at each turn: a changed skill, and
        the trust it loses, is seen at the next message)."""
        for state in self.servers.values():
            if state.skill_entries is None or state.client is None or state.state != "ready":
                continue
            with suppress(Exception):  # kept as they were: a failing server fails its reads
                from skillchat.mcp.skills import list_entries

                future = self._submit(list_entries(state.client))
                state.skill_entries = future.result(state.config.timeout_s)

    def served_skills(self) -> tuple[list[Skill], list[str]]:
        """The skills of the servers that serve some, and the entries refused (why)."""
        if self._served is None:
            from skillchat.mcp.skills import ServedSkills

            self._served = ServedSkills(self.read)
        return self._served.build({name: s.skill_entries for name, s in self.servers.items()})

    def read(self, server: str, uri: str) -> bytes:
        """One `resources/read` (mcp/skills.py): the resource's raw bytes."""
        from mcp.shared.exceptions import MCPError

        state = self.servers[server]
        client = state.client
        if client is None or state.state != "ready":
            raise McpError(f"MCP server '{server}' is not running: {state.error}")
        from skillchat.mcp.skills import read_resource

        future = self._submit(read_resource(client, uri))
        try:
            return cast(bytes, future.result(state.config.timeout_s + 2))
        except FutureTimeout:
            future.cancel()
            raise McpError(f"no answer from '{server}' in {state.config.timeout_s:g} s") from None
        except MCPError as exc:
            raise McpError(f"'{server}' answered with an error: {exc.error.message}") from None

    def prompt(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """One `prompts/get`: its messages as the user's turn (mcp/prompts.py)."""
        from mcp.shared.exceptions import MCPError

        state = self._running(server)
        client = cast("Client", state.client)
        try:
            return cast(
                str,
                self.questions.wait(
                    lambda: self._submit(prompt_text(client, name, arguments)),
                    state.config.timeout_s + 2,
                ),
            )
        except FutureTimeout:
            raise McpError(f"no answer from '{server}' in {state.config.timeout_s:g} s") from None
        except MCPError as exc:
            raise McpError(f"'{server}' answered with an error: {exc.error.message}") from None

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """One `tools/call`; McpError for a timeout, a JSON-RPC error, a dead server, a
        result that is not MCP's (that call only: the server goes on)."""
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        state = self._running(server)
        client = state.client
        if client is None:
            raise McpError(f"MCP server '{server}' is not running: {state.error}")
        timeout = state.config.timeout_s
        try:
            return cast(
                "CallToolResult",
                self.questions.wait(
                    lambda: self._submit(
                        client.call_tool(tool, arguments, read_timeout_seconds=timeout)
                    ),
                    timeout + 2,
                ),
            )
        except FutureTimeout:
            raise McpError(f"no answer from '{server}' in {timeout:g} s (timeout_s)") from None
        except MCPError as exc:
            if state.auth is not None and state.auth.failure:  # a login is needed: one line
                failure, state.auth.failure = state.auth.failure, ""
                raise McpError(f"MCP server '{server}' {failure}") from None
            if answer_cut(exc, state):  # that answer was not read; the server goes on
                raise McpError(
                    f"'{server}' answered with an error: {too_long(state.config.max_answer_bytes)}"
                    f" ([mcp.{server}] max_answer_mb)"
                ) from None
            if connection_lost(exc) or state.state != "ready":
                state.state, state.error = "failed", self._died(state, str(exc.error.message))
                raise McpError(f"MCP server '{server}' {state.error}") from None
            if "timed out" in exc.error.message.lower():
                raise McpError(f"no answer from '{server}' in {timeout:g} s (timeout_s)") from None
            raise McpError(f"'{server}' answered with an error: {exc.error.message}") from None
        except ValidationError as exc:  # read whole, but not a result: the connection is fine
            raise McpError(
                f"'{server}' answered with a result that is not valid MCP: {not_a_result(exc)}"
            ) from None
        except (OSError, RuntimeError, ValueError) as exc:  # the transport broke under the call
            state.state, state.error = "failed", self._died(state, f"{type(exc).__name__}: {exc}")
            raise McpError(f"MCP server '{server}' {state.error}") from None

    # -------------------------------------------------------------- inside

    def _running(self, server: str) -> ServerState:
        """`server`'s state once it is up: started now if it was not (a call needs
        it), restarted if it died; McpError with the reason when it is not up."""
        state = self.servers[server]
        self.start([server])  # not yet started: now
        if state.state == "starting":
            self.wait([server])
        elif state.client is None or state.state != "ready":
            self._restart(state)
        if state.client is None or state.state != "ready":
            raise McpError(f"MCP server '{server}' is not running: {state.error}")
        return state

    def _died(self, state: ServerState, detail: str) -> str:
        """Why a running server failed, with its last words once its stderr is read
        to the end (a moment after it died)."""
        if self._loop is not None:
            with suppress(FutureTimeout, RuntimeError):
                asyncio.run_coroutine_threadsafe(settled(state.reader), self._loop).result(3)
        tail = state.stderr_tail()
        return f"stopped answering ({detail})" + (f"; its stderr: {tail}" if tail else "")

    def _submit(self, coroutine: Any) -> Future[Any]:
        if self._loop is None:
            coroutine.close()
            raise McpError("the MCP servers of this session are stopped")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def _restart(self, state: ServerState) -> None:
        """A server that died comes back, a bounded number of times a session."""
        if state.restarts >= MAX_RESTARTS or self._loop is None:
            used = f" (not restarted: {MAX_RESTARTS} restarts used)"
            if state.restarts >= MAX_RESTARTS and not state.error.endswith(used):
                state.error += used
            return
        state.restarts += 1
        if state.stop is not None:
            self._loop.call_soon_threadsafe(state.stop.set)
        state.client, state.tools = None, []
        state.ready.clear()
        self._connect(state)
        state.ready.wait(state.config.startup_timeout_s)

    def _connect(self, state: ServerState) -> None:
        state.state, state.error = "starting", ""
        state.generation += 1
        if self._loop is not None:
            task = hold(state, state.generation, self.authorize, self.questions, self._on_message)
            asyncio.run_coroutine_threadsafe(task, self._loop)

    async def _on_message(self, message: Any) -> None:
        if getattr(getattr(message, "root", message), "method", "") == (
            "notifications/tools/list_changed"
        ):
            self.changed = True
