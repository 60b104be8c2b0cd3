"""The servers' tools as the chat's tools: one registration, a source the toolbox asks.

    source = McpTools(hub, consent)         # the session makes it when servers are configured
    Toolbox(context, chat_tools(runner), source=source)

`McpTools.tools(context)` is asked for each request: the servers' tools that fit
the share of the context budget (catalog.py), and `mcp_tool_schema` while some are
offered by name only. Before a chat's first request, only the servers whose list
it needs are started and waited for (`McpHub.needed`): a server whose list is kept
from its last start (mcp/listing.py) is offered from that list and starts at the
first call of one of its tools. A call runs the policy, then the consent, then
checks the tool against what its server lists now (a kept list may be stale: the
call fails, and the next request offers the current list), then `tools/call` on
the hub; every failure is an error result and the chat goes on:

    mcp__SERVER__TOOL(<the server's schema>)  -> results.py's shapes
    mcp_tool_schema(name)  -> {"name", "description", "parameters", "annotations"}
                            | {"error", "error_code"}  (NOT_FOUND lists near names)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from skillchat.errors import McpError
from skillchat.mcp.catalog import Entry, Offer, build_offer, provider_schema, share_of
from skillchat.mcp.hub import McpHub
from skillchat.mcp.policy import McpConsent, McpRequest, decide
from skillchat.mcp.results import error_result, result_of
from skillchat.tools.base import Tool, ToolContext, ToolResult, function_schema, result_cap, to_json

if TYPE_CHECKING:
    from skillchat.skills.model import Skill

SCHEMA_TOOL = "mcp_tool_schema"


class McpTools:
    """The MCP servers' tools of one chat (see the module docstring)."""

    def __init__(
        self,
        hub: McpHub,
        consent: McpConsent,
        on_skills: Callable[[list[Skill]], list[str]] | None = None,
    ) -> None:
        self.hub = hub
        self.consent = consent
        self.on_skills = on_skills  # the served skills changed: the session merges them
        self._skills_key: tuple[tuple[str, str, str], ...] | None = None
        self.fetched: set[str] = set()
        self._offer: Offer | None = None
        self._key: tuple[Any, ...] = ()
        self._waited = False
        self._needed: list[str] = []  # the servers every request waits for
        self._made: tuple[Offer | None, list[Tool]] = (None, [])
        self._said: set[str] = set()

    def wait(self, context: ToolContext) -> list[str]:
        """Before a request: the servers whose list it needs are up or have failed
        (the first time only this waits); what the user should hear of it, each
        thing once a chat."""
        if not self._waited:
            self._needed = self.hub.needed()
            self.hub.start(self._needed)
        self.hub.wait(self._needed)
        if self.hub.changed:  # announced by a server since the last message
            self.hub.relist()
            self._offer = None
        if self._waited and self.hub.logged_in():  # its tools are offered from now on
            self._offer = None
        self._waited = True
        self.renew(context)
        offer = self.offer(context)
        notices = self._served(relist=True)
        notices += [
            f"MCP server '{name}' is not available: {state.error}"
            for name, state in self.hub.servers.items()
            if state.state == "failed"
        ]
        notices += [f"{name} left out: {why}" for name, why in offer.left_out]
        if offer.names_only:
            notices.append(
                f"{len(offer.names_only)} MCP tools offered by name only (their schemas "
                f"pass a tenth of the context): {SCHEMA_TOOL} fetches one"
            )
        return self._fresh(notices)

    def served_now(self) -> list[str]:
        """Without waiting for any server: the skills of those already up join the
        chat (the REPL asks at each prompt and command, so `/skills` and `/trust`
        have them before the first message); what the user should hear of it."""
        return self._fresh(self._served(relist=False))

    def _fresh(self, notices: list[str]) -> list[str]:
        """The notices not said yet in this chat."""
        fresh = [n for n in notices if n not in self._said]
        self._said.update(fresh)
        return fresh

    def _served(self, relist: bool) -> list[str]:
        """The servers' skills, read again at each message (`relist`); handed to the
        session when they changed (a changed manifest or frontmatter is a changed skill:
        trust.py)."""
        if self.on_skills is None or not any(
            s.skill_entries is not None for s in self.hub.servers.values()
        ):
            return []
        if relist and self._skills_key is not None:
            self.hub.relist_skills()
        skills, refused = self.hub.served_skills()
        key = tuple((r.server, r.uri, r.digest) for s in skills if (r := s.remote) is not None)
        if key == self._skills_key:
            return refused
        self._skills_key = key
        return refused + self.on_skills(skills)

    def offer(self, context: ToolContext) -> Offer:
        """The offer of the current request: the model's calls are read against
        the offer it was sent, so a server that starts or changes while a reply's
        calls run changes the next request's (`renew`), not this one."""
        if self._offer is None:
            self._offer = build_offer(
                self.hub.listed(), share_of(context.settings.limits.budget), self.fetched
            )
        return self._offer

    def renew(self, context: ToolContext) -> None:
        """Before a request: the offer is made again when the servers, the budget or
        the fetched schemas changed."""
        states = tuple((n, s.state, s.generation) for n, s in self.hub.servers.items())
        key = (states, context.settings.limits.context_max_chars, frozenset(self.fetched))
        if key != self._key:
            self._offer, self._key = None, key

    def tools(self, context: ToolContext) -> list[Tool]:
        if not self._waited:
            return []  # at start-up: the prompt never waits for a server
        offer = self.offer(context)
        if self._made[0] is not offer:  # made once per offer: asked several times a request
            made: list[Tool] = [_tool_class(entry)(self, entry) for entry in offer.full]
            if offer.names_only:
                made.append(McpToolSchema(self))
            self._made = (offer, made)
        return self._made[1]

    def call(self, entry: Entry, args: dict[str, Any], context: ToolContext) -> ToolResult:
        verdict = decide(
            context.settings,
            context.registry,
            context.activated,
            entry.server,
            entry.name,
            entry.tool,
            lambda skill: _is_trusted(skill, context),
        )
        if verdict.kind == "refused":
            return error_result("NOT_ALLOWED", verdict.reason)
        request = McpRequest(entry.server, entry.tool, entry.name, args, entry.annotations, verdict)
        answer = self.consent(request)
        if answer.kind != "approved":
            return error_result("NOT_ALLOWED", answer.reason or "the user declined this call")
        try:
            live = self.hub.live_tool(entry.server, entry.tool)
            if live is None or provider_schema(live.input_schema)[0] != entry.schema:
                return error_result("MCP_ERROR", _changed(entry, live is None))
            result = self.hub.call(entry.server, entry.tool, args)
        except McpError as exc:
            return error_result("MCP_ERROR", str(exc))
        return result_of(result, result_cap(context.settings))


def _changed(entry: Entry, gone: bool) -> str:
    """Why a tool offered from a list that went stale was not called."""
    what = "is no longer served" if gone else "takes other parameters now"
    return (
        f"tool '{entry.tool}' of MCP server '{entry.server}' {what} (its tools changed since "
        "they were offered): not called; the next request offers its current tools"
    )


def _is_trusted(skill: Any, context: ToolContext) -> bool:
    """Trusted as the chat (a fork, or the chat) activated it; the trust store read
    only when a skill lists the tool (most calls need none)."""
    from skillchat.skills.trust import TrustStore, trusted_as_activated

    return trusted_as_activated(TrustStore.load(), skill, context.served)


def _tool_class(entry: Entry) -> type[McpTool]:
    """A `Tool` class named and shaped as this server tool (the contract's name and
    schema are class attributes)."""
    return type("McpTool", (McpTool,), {"name": entry.name, "schema": entry.function()})


class McpTool(Tool):
    """One server tool (made per tool by `_tool_class`)."""

    name = "mcp"
    schema: ClassVar[dict[str, Any]] = {}

    def __init__(self, source: McpTools, entry: Entry) -> None:
        self.source = source
        self.entry = entry

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        return self.source.call(self.entry, args, context)


class McpToolSchema(Tool):
    name = SCHEMA_TOOL
    schema: ClassVar[dict[str, Any]] = function_schema(
        SCHEMA_TOOL,
        "Get the parameters of an MCP server tool offered by name only; after this call "
        "the tool can be called directly.",
        {"name": {"type": "string", "description": "The tool's name, mcp__SERVER__TOOL."}},
        ["name"],
    )

    def __init__(self, source: McpTools) -> None:
        self.source = source

    @property
    def prompt_rule(self) -> str:  # type: ignore[override]
        """The names of the tools offered by name only (the rule is read per request)."""
        offer = self.source._offer
        names = [e.name for e in offer.names_only] if offer is not None else []
        shown = ", ".join(names[:300])
        more = f" and {len(names) - 300} more" if len(names) > 300 else ""
        return (
            "More MCP server tools exist than fit here; they are offered by name only: "
            f"{shown}{more}. Call {SCHEMA_TOOL} with one's name to get its parameters; it "
            "is then offered as a tool."
        )

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        name = args.get("name")
        if not isinstance(name, str) or not name:
            return self.error("INVALID_ARGUMENT", "'name' must be a tool name")
        entries = self.source.offer(context).by_name()
        entry = entries.get(name)
        if entry is None:
            near = [n for n in entries if name.lower() in n.lower()][:20]
            return self.error("NOT_FOUND", f"no MCP tool named {name[:100]!r}; near: {near}")
        self.source.fetched.add(name)
        payload = {
            "name": entry.name,
            "description": entry.description,
            "parameters": entry.schema,
            "annotations": entry.annotations,
        }
        content = to_json(payload)
        return ToolResult(content, preview=json.dumps(entry.schema)[:300], size=len(content))
