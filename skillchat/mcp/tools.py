"""The servers' tools as the chat's tools: one registration, a source the toolbox asks.

    source = McpTools(hub, consent)         # the session makes it when servers are configured
    Toolbox(context, chat_tools(runner), source=source)

`McpTools.tools(context)` is asked for each request: the servers' tools that fit
the share of the context budget (catalog.py), and `mcp_tool_schema` while some are
offered by name only. A call runs the policy, then the consent, then
`tools/call` on the hub; every failure is an error result and the chat goes on:

    mcp__SERVER__TOOL(<the server's schema>)  -> results.py's shapes
    mcp_tool_schema(name)  -> {"name", "description", "parameters", "annotations"}
                            | {"error", "error_code"}  (NOT_FOUND lists near names)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from skillchat.errors import McpError
from skillchat.mcp.catalog import Entry, Offer, build_offer, share_of
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
        self._made: tuple[Offer | None, list[Tool]] = (None, [])
        self._said: set[str] = set()

    def wait(self, context: ToolContext) -> list[str]:
        """Before a request: the servers are up or have failed (the first time only
        this waits); what the user should hear of it, each thing once a chat."""
        self.hub.wait()
        if self.hub.changed:  # announced by a server since the last message
            self.hub.relist()
            self._offer = None
        self._waited = True
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
        """The current offer, rebuilt when the servers, the budget or the fetched
        schemas changed."""
        states = tuple((n, s.state, s.generation) for n, s in self.hub.servers.items())
        key = (
            states,
            context.settings.context_max_chars,
            frozenset(self.fetched),
            self.hub.changed,
        )
        if self._offer is None or key != self._key:
            share = share_of(context.settings.budget)
            self._offer = build_offer(self.hub.listed(), share, self.fetched)
            self._key = key
        return self._offer

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
            result = self.hub.call(entry.server, entry.tool, args)
        except McpError as exc:
            return error_result("MCP_ERROR", str(exc))
        return result_of(result, result_cap(context.settings))


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
