"""Who may call an MCP tool without being asked, and the question the REPL asks.

Decided before each call, from (highest first):

1. `[run] allowed_tools = "restrict"`: while an active skill declares
   `allowed-tools`, a tool none of the active skills lists is refused (as a command
   is); `ignore` reads no skill's list.
2. The config: `allow = true` (every tool of the server) or `allow = ["tool"]`.
3. A *trusted* active skill's `allowed-tools` entry: `mcp__server__tool`,
   `mcp__server__*` or `mcp__server` (Claude Code's forms). An untrusted skill's
   entries pre-approve nothing.

Anything else is asked: the REPL shows the server, the tool, its arguments and
its annotations (`readOnlyHint` and the like, as the server claims them: shown,
never trusted) and takes yes / no / always (this tool, this chat). `ask` and
`eval` never ask: only `--allow-mcp` or the config let a call through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from skillchat.config import Settings
from skillchat.sections import McpSettings
from skillchat.skills.allowed_tools import split_entries
from skillchat.skills.registry import Registry


@dataclass(frozen=True)
class McpVerdict:
    kind: Literal["approved", "ask", "refused"]
    reason: str = ""
    by_config: bool = False  # approved by the config's `allow`: counts in `ask` too


@dataclass(frozen=True)
class McpRequest:
    """What the user is asked about: one call, as the model made it."""

    server: str
    tool: str  # the server's own name (cleaned for display by the front end)
    offered: str  # mcp__server__tool
    arguments: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)
    verdict: McpVerdict = McpVerdict("ask")


McpConsent = Callable[[McpRequest], McpVerdict]  # "approved", or "refused" with why


def entry_matches(entry: str, server: str, offered: str) -> bool:
    """Whether one `allowed-tools` entry names this server's tool."""
    return entry in (offered, f"mcp__{server}", f"mcp__{server}__*")


def decide(
    settings: Settings,
    registry: Registry,
    activated: list[str],
    server: str,
    offered: str,
    tool: str,
    trusted: Callable[[Any], bool],
) -> McpVerdict:
    """The policy's verdict for one call (the module docstring's order)."""
    mode = settings.run.allowed_tools
    skills = [registry.skills[name] for name in activated if name in registry.skills]
    declared = [s for s in skills if s.allowed_tools is not None] if mode != "ignore" else []
    listing = [
        s
        for s in declared
        if any(entry_matches(e, server, offered) for e in split_entries(s.allowed_tools or ""))
    ]
    if mode == "restrict" and declared and not listing:
        names = ", ".join(s.name for s in declared)
        return McpVerdict(
            "refused",
            f"[run] allowed_tools = restrict: the active skills ({names}) do not list {offered}",
        )
    config = settings.mcp.servers.get(server)
    if config is not None and config.allows(tool):
        return McpVerdict("approved", f"allowed by [mcp.{server}] allow", by_config=True)
    for skill in listing:
        if trusted(skill):
            return McpVerdict("approved", f"skill '{skill.name}' (trusted) lists {offered}")
    if listing:
        return McpVerdict("ask", f"skill '{listing[0].name}' lists it but is not trusted")
    return McpVerdict("ask", "no config entry or trusted active skill pre-approves it")


def flag_consent(mcp: McpSettings) -> McpConsent:
    """`ask` and `eval`: nothing is asked; `--allow-mcp` or the config let calls through."""

    def consent(request: McpRequest) -> McpVerdict:
        if request.verdict.by_config:
            return request.verdict
        if mcp.allow:
            return McpVerdict("approved", "--allow-mcp")
        return McpVerdict(
            "refused",
            f"not allowed: {request.offered} needs --allow-mcp, or allow in [mcp.{request.server}]",
        )

    return consent
