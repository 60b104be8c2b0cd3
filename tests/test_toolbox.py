"""The tool contract (tools/base.py) and the Toolbox, with a tool of the test's own:
what a chat offers, how calls are dispatched, and that nothing a tool does raises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chat_helpers import registry, write_skill

from skillchat.config import Settings
from skillchat.prompt import system_prompt
from skillchat.tools.base import (
    Tool,
    ToolArgumentError,
    ToolContext,
    ToolResult,
    function_schema,
    string_arg,
)
from skillchat.tools.find_tools import SearchFiles
from skillchat.tools.toolbox import Toolbox, chat_tools, stored_result
from skillchat.workspace.files import Workspace


class Shout(Tool):
    """A tool offered only with a workspace, with a prompt rule of its own."""

    name = "shout"
    schema = function_schema("shout", "Upper-case a word.", {"word": {"type": "string"}}, [])
    prompt_rule = "Use shout to upper-case words."

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        return context.workspace is not None

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        word = string_arg(args, "word")
        if word == "boom":
            raise RuntimeError("kaboom")
        if word == "bad":
            raise ToolArgumentError("not that word")
        return ToolResult(word.upper(), preview=word.upper())


def box(tmp_path: Path, *, skills: bool, workspace: bool) -> Toolbox:
    reg = registry(write_skill(tmp_path / "skills", "calc")) if skills else registry()
    ws = Workspace.open(tmp_path) if workspace else None
    return Toolbox(ToolContext(Settings(), reg, ws), [*chat_tools(), Shout()])


def test_a_chat_offers_only_what_it_has(tmp_path: Path) -> None:
    assert box(tmp_path, skills=False, workspace=False).names() == []
    assert box(tmp_path, skills=True, workspace=False).names() == [
        "list_skills",
        "get_skill",
        "read_file_in_skill",
    ]
    with_ws = box(tmp_path, skills=False, workspace=True)
    workspace_tools = ["read_file", "list_files", "search_files", "shout"]
    assert with_ws.names() == workspace_tools
    assert [s["function"]["name"] for s in with_ws.schemas()] == workspace_tools
    assert with_ws.prompt_rules() == [SearchFiles.prompt_rule, "Use shout to upper-case words."]
    prompt = system_prompt(None, tools=True, tool_rules=with_ws.prompt_rules())
    assert prompt == f"{SearchFiles.prompt_rule}\n\nUse shout to upper-case words."


def test_a_tool_not_offered_is_unknown_and_the_list_is_the_offered_set(tmp_path: Path) -> None:
    result = box(tmp_path, skills=True, workspace=False).run("shout", '{"word": "hi"}')
    assert result.is_error and result.error_code == "INVALID_ARGUMENT"
    assert json.loads(result.content)["error"] == (
        "Unknown tool 'shout'. Available: list_skills, get_skill, read_file_in_skill"
    )


def test_run_never_raises(tmp_path: Path) -> None:
    tools = box(tmp_path, skills=False, workspace=True)
    assert tools.run("shout", '{"word": "hi"}').content == "HI"
    bad = tools.run("shout", '{"word": "bad"}')
    assert bad.error_code == "INVALID_ARGUMENT"
    assert json.loads(bad.content)["error"] == "Invalid arguments for shout: not that word"
    boom = tools.run("shout", '{"word": "boom"}')
    assert boom.error_code == "INTERNAL_ERROR"
    assert json.loads(boom.content)["error"] == "shout failed: RuntimeError: kaboom"
    assert tools.run("shout", "{oops").error_code == "INVALID_ARGUMENT"


def test_a_result_is_stored_as_its_tool_says(tmp_path: Path) -> None:
    # Unknown to the registry, or a tool without its own rule: kept whole.
    assert stored_result("shout", '{"word": "hi"}', "HI").content == "HI"
    assert stored_result("list_skills", "{}", '{"skills": ["a"]}').content == '{"skills": ["a"]}'
    # A file read: a stub, whatever the arguments' text.
    stub = stored_result("read_file", "not json", '{"success": true, "file": {"path": "a"}}')
    assert json.loads(stub.content)["stub"].startswith("file content not stored")


class Served:
    """A tool source of the test's own (as the MCP servers' tools are one): the
    tools of its current offer, a new list when the offer changes."""

    def __init__(self, *tools: Tool) -> None:
        self.offer: list[Tool] = list(tools)

    def tools(self, context: ToolContext) -> list[Tool]:
        return self.offer

    def wait(self, context: ToolContext) -> list[str]:
        return []


def test_a_sources_schemas_count_in_the_budget_offer_by_offer(tmp_path: Path) -> None:
    source = Served(Shout())
    tools = Toolbox(ToolContext(Settings(), registry(), Workspace.open(tmp_path)), [], source)
    one = len(json.dumps(Shout.schema, ensure_ascii=False))
    assert tools.source_chars() == one
    assert tools.source_chars() == one  # asked three times a request
    source.offer = [Shout(), Shout()]  # another offer: measured again
    assert tools.source_chars() == 2 * one
    assert Toolbox(ToolContext(Settings(), registry(), None), []).source_chars() == 0
