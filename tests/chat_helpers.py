"""Shared pieces for the loop, tool and CLI tests: skills on disk, a chat wired to the
scripted server through a real backend, and readers for what skillchat sent."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from helpers import model_for, skill_folder, write_files
from openai_server import ScriptedServer

from skillchat.config import Settings
from skillchat.engine.emit import TextEnd, ToolRecord, ViewListener
from skillchat.engine.loop import Chat
from skillchat.session import Session
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry
from skillchat.tools.base import ToolContext, ToolResult
from skillchat.tools.context import ContextLedger
from skillchat.tools.toolbox import Toolbox
from skillchat.workspace.files import Workspace


def write_skill(
    root: Path, name: str, body: str = "# Body\n", files: dict[str, str] | None = None
) -> Skill:
    """A skill folder on disk, and its Skill (bypassing discovery, so names of the
    tool contract's examples such as `data_processor` work too)."""
    description = f"The {name} skill."
    folder = skill_folder(root, name, f"name: {name}\ndescription: {description}\n", body)
    write_files(folder, files or {})
    real = Path(os.path.realpath(folder))
    return Skill(
        name, description, real, real / "SKILL.md", root, {"name": name, "description": description}
    )


def registry(*skills: Skill, directories: tuple[Path, ...] = ()) -> Registry:
    return Registry(skills={s.name: s for s in skills}, directories=directories)


class SkillBox(Toolbox):
    """A toolbox over skills with typed calls, for tests that call one tool directly."""

    def get_skill(self, name: str) -> ToolResult:
        return self.run("get_skill", json.dumps({"skill_name": name}))

    def read_file_in_skill(
        self, skill: str, path: str, max_bytes: int | None = None, **more: Any
    ) -> ToolResult:
        args = {"skill_name": skill, "file_path": path, "max_bytes": max_bytes, **more}
        return self.run("read_file_in_skill", json.dumps(args))


def skill_box(
    reg: Registry,
    ledger: ContextLedger | None = None,
    *,
    md: int = 200_000,
    res: int = 2_000_000,
    workspace: Workspace | None = None,
) -> SkillBox:
    """A toolbox over `reg` with these read limits (and `ledger`, to inspect it)."""
    settings = Settings().replaced(max_skill_md_bytes=md, max_resource_bytes=res)
    context = ToolContext(settings, reg, workspace, ledger or ContextLedger())
    return SkillBox(context)


class RecordingView(ViewListener):
    """A view that keeps everything it is shown, in order, as (kind, value):
    kinds "waiting", "text", "end", "tool", "notice", "done"."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def waiting(self, tools: bool) -> None:
        self.events.append(("waiting", tools))

    def text(self, chunk: str) -> None:
        self.events.append(("text", chunk))

    def end_text(self, how: TextEnd) -> None:
        self.events.append(("end", how))

    def tool(self, record: ToolRecord) -> None:
        self.events.append(("tool", record))

    def notice(self, message: str) -> None:
        self.events.append(("notice", message))

    def done(self, message: str) -> None:
        self.events.append(("done", message))

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.events if k == kind]


def settings_for(server: ScriptedServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model": model_for(server),
        "api_base": server.base_url,
        "max_retries": 0,
        "timeout": 10.0,
    }
    values.update(overrides)
    return Settings().replaced(**values)


def make_chat(
    server: ScriptedServer,
    reg: Registry,
    view: Any = None,
    workspace: Workspace | None = None,
    **overrides: Any,
) -> Chat:
    """A chat over `reg` as the front ends make one (through a `Session`), unsaved
    and without run_command, its events shown to `view`."""
    settings = settings_for(server, **overrides)
    listeners = [view or RecordingView()]
    return Session(settings, registry=reg, listeners=listeners, workspace=workspace).chat


def sent(server: ScriptedServer, n: int = -1) -> list[dict[str, Any]]:
    """The messages of the n-th chat-completions request (of the Messages API
    server's, read back as chat-completions messages)."""
    chat_messages = getattr(server, "chat_messages", None)
    if chat_messages is not None:
        messages: list[dict[str, Any]] = chat_messages(n)
        return messages
    return server.completions[n].body["messages"]


def tool_names(server: ScriptedServer, n: int = -1) -> list[str]:
    """The names of the tools the n-th request offered (either protocol's shape)."""
    tools = server.completions[n].body.get("tools") or []
    return [t["function"]["name"] if "function" in t else t["name"] for t in tools]


def tool_messages(server: ScriptedServer, n: int = -1) -> list[dict[str, Any]]:
    return [m for m in sent(server, n) if m["role"] == "tool"]


def system_text(server: ScriptedServer, n: int = -1) -> str | None:
    first = sent(server, n)[0]
    return first["content"] if first["role"] == "system" else None
