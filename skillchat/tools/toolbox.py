"""Which tools exist, which a chat offers, and the one way a call is dispatched.

Registering a tool: write its `Tool` subclass in a module of its own and add the
class to `TOOLS` below (the order is the order the model sees them in); a tool
made with a service (run_command's runner) is made in `chat_tools`, only when the
service exists. Nothing else changes: the loop asks a `Toolbox` for schemas and
runs calls through it, the chat store asks `stored_result` what to keep, cards
show the result's preview.

    box = Toolbox(ToolContext(settings, registry, workspace=ws), chat_tools(runner))
    box.schemas()                       # the offered tools' schemas, [] when none
    box.run("get_skill", '{"skill_name": "pdf"}')   # -> ToolResult, never raises
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from skillchat.tools.base import Stored, Tool, ToolContext, ToolResult, loads_or_none, to_json
from skillchat.tools.find_tools import ListFiles, SearchFiles
from skillchat.tools.run_command import CommandRunner, RunCommand
from skillchat.tools.search_skills import SearchSkills
from skillchat.tools.skill_tools import Forker, GetSkill, ListSkills, ReadFileInSkill
from skillchat.tools.workspace_tools import ReadWorkspaceFile

TOOLS: tuple[type[Tool], ...] = (
    ListSkills,
    GetSkill,
    ReadFileInSkill,
    SearchSkills,
    ReadWorkspaceFile,
    ListFiles,
    SearchFiles,
    RunCommand,
)
_BY_NAME: dict[str, type[Tool]] = {tool.name: tool for tool in TOOLS}


def chat_tools(runner: CommandRunner | None = None, fork: Forker | None = None) -> list[Tool]:
    """The tools of one chat, each made with the services it needs: run_command
    only with a runner (a sandbox works and running is on); get_skill with it too,
    for a body's inline commands, and runs `context: fork` skills as forks only
    with a forker."""
    tools: list[Tool] = []
    for tool in TOOLS:
        if tool is RunCommand:
            if runner is not None:
                tools.append(RunCommand(runner))
        elif tool is GetSkill:
            tools.append(GetSkill(runner, fork))
        else:
            tools.append(tool())
    return tools


def stored_result(tool_name: str, raw_arguments: str, content: Any) -> Stored:
    """A result of `tool_name` as the chat database keeps it (its tool decides).

    Works on any stored call, offered or not: a chat resumed without its workspace
    still stores what it stored before the same way.
    """
    tool = _BY_NAME.get(tool_name)
    if tool is None:
        return Stored(content)
    args = loads_or_none(raw_arguments)
    return tool.stored(args if isinstance(args, dict) else {}, content)


class ToolSource(Protocol):
    """Tools that exist only while something outside skillchat serves them (the MCP
    servers' tools, skillchat/mcp/tools.py): asked for its tools at each request."""

    def tools(self, context: ToolContext) -> list[Tool]:
        """The tools offered now; a list handed out is never changed afterwards (the
        toolbox measures a list once)."""
        ...

    def wait(self, context: ToolContext) -> list[str]:
        """Until the tools can be listed (before a request, never at start-up); the
        notices for the user (a server that did not start, a tool left out), each once."""

    def renew(self, context: ToolContext) -> None:
        """Before each further request of a turn: what is offered may change now
        (a server that came up), never while one reply's calls run (they are read
        against what that reply's request offered)."""


class Toolbox:
    """The tools one chat offers, over its `ToolContext`.

    What is offered is asked afresh each time, so `/reload` (a new registry in the
    context) or a workspace set later changes it at once; a `source`'s tools follow
    the built-in ones.
    """

    def __init__(
        self,
        context: ToolContext,
        tools: Sequence[Tool] | None = None,
        source: ToolSource | None = None,
    ) -> None:
        self.context = context
        self._instances = {tool.name: tool for tool in (chat_tools() if tools is None else tools)}
        self.source = source
        # The source's tools as last measured, and their size (see `source_chars`).
        self._measured: tuple[list[Tool] | None, int] = (None, 0)

    def offered(self) -> list[Tool]:
        own = [tool for tool in self._instances.values() if tool.offered(self.context)]
        return own + (self.source.tools(self.context) if self.source is not None else [])

    def source_chars(self) -> int:
        """What the source's tool schemas take of a request, in characters (counted
        in the context budget: the built-in tools' part is reserved already).

        Asked three times a request, and an MCP server's schemas can be tens of KB
        of JSON: measured again only when the source hands out another list (it
        makes one per offer, skillchat/mcp/tools.py)."""
        if self.source is None:
            return 0
        tools = self.source.tools(self.context)
        if self._measured[0] is not tools:
            self._measured = (tools, sum(len(to_json(tool.schema)) for tool in tools))
        return self._measured[1]

    def names(self) -> list[str]:
        return [tool.name for tool in self.offered()]

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema for tool in self.offered()]

    def prompt_rules(self) -> list[str]:
        """The system-prompt paragraphs of the offered tools that have one."""
        return [tool.prompt_rule for tool in self.offered() if tool.prompt_rule]

    def get(self, name: str) -> Tool | None:
        """The tool `name` if this chat offers it."""
        tool = self._instances.get(name)
        if tool is None and self.source is not None:
            tool = next((t for t in self.source.tools(self.context) if t.name == name), None)
        return tool if tool is not None and tool.offered(self.context) else None

    def run(self, name: str, raw_arguments: str) -> ToolResult:
        """Run `name(raw_arguments)`; a tool not offered is unknown. Never raises."""
        tool = self.get(name)
        if tool is None:
            available = ", ".join(self.names()) or "(none)"
            return Tool.error("INVALID_ARGUMENT", f"Unknown tool '{name}'. Available: {available}")
        return tool.run(raw_arguments, self.context)
