"""Real plugins for the plugin tests: an Agent Plugins v1 package and a Claude Code
layout, each with skills and a real stdio MCP server (the official SDK, run by this
test interpreter), written as files a repository holds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from git_repos import skill_md

from skillchat.skills.plugins import AGENT_SCHEMA, MCP_SCHEMA

# The server notes where it ran: its tool `where` answers PLUGIN_ROOT and writes
# PLUGIN_DATA/seen, so a test can see both reached it.
SERVER = f"""#!{sys.executable}
import os
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")

@server.tool(description="Where the plugin runs.")
def where() -> str:
    Path(os.environ["PLUGIN_DATA"], "seen").write_text(os.getcwd())
    return os.environ["PLUGIN_ROOT"]

server.run()
"""


def agent_plugin(name: str = "acme", server: dict[str, Any] | None = None) -> dict[str, str]:
    """The files of an Agent Plugins v1 package: two skills and one stdio server."""
    entry = server or {"type": "stdio", "command": "./bin/notes", "args": ["${PLUGIN_DATA}/x"]}
    return {
        "plugin.json": json.dumps({"$schema": AGENT_SCHEMA, "name": name, "version": "1.0.0"}),
        "mcp.json": json.dumps({"$schema": MCP_SCHEMA, "mcpServers": {"notes": entry}}),
        "skills/jot/SKILL.md": skill_md("jot", "Jot a note."),
        "skills/recall/SKILL.md": skill_md("recall", "Recall notes."),
        "bin/notes": SERVER,
    }


def claude_plugin(name: str = "tidy") -> dict[str, str]:
    """The files of a Claude Code plugin: `.claude-plugin/plugin.json`, skills/,
    `.mcp.json` naming its server through `${CLAUDE_PLUGIN_ROOT}`."""
    servers = {
        "mcpServers": {
            "tidy-notes": {
                "command": "${CLAUDE_PLUGIN_ROOT}/bin/notes",
                "env": {"WHERE": "${CLAUDE_PLUGIN_DATA}"},
            }
        }
    }
    return {
        ".claude-plugin/plugin.json": json.dumps({"name": name, "version": "0.2.0"}),
        ".mcp.json": json.dumps(servers),
        "skills/sweep/SKILL.md": skill_md("sweep", "Sweep the floor."),
        "bin/notes": SERVER,
    }


def executable(root: Path, rel: str = "bin/notes") -> None:
    """Mark the server executable (git keeps the bit)."""
    os.chmod(root / rel, 0o755)


def plugin_folder(root: Path, files: dict[str, str]) -> Path:
    """A plugin as a local folder (not a repository), its server executable."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if (root / "bin" / "notes").exists():
        executable(root)
    return root


def agents() -> Path:
    return Path(os.environ["HOME"]) / ".agents"


def lock() -> dict[str, Any]:
    path = agents() / "skills.lock"
    return json.loads(path.read_text()) if path.exists() else {}


def servers_file() -> Path:
    from skillchat.config import plugin_servers_path

    return plugin_servers_path()


def data_dir(name: str) -> Path:
    from skillchat.sections import user_data_dir

    return user_data_dir() / "plugins" / name
