"""What each MCP server listed at its last start, kept for the next session.

A request that offers a server's tools needs its tool list, and listing it means
starting the server (a second or more for most). So each list a server gives is
kept in the user cache (safe_io/user_cache.py, `mcp-tools.json`), and a session
whose server has a kept list offers that list without starting it: the server
starts when one of its tools is called (mcp/hub.py), and its fresh list replaces
the kept one. A kept list is never trusted further than a listing: the call checks
the tool against what the server lists now (mcp/tools.py), so a list that went
stale costs one failed call, and the next request offers the new one.

A list is kept under a digest of the server's table as written: its name, command,
arguments, folder, environment, URL and headers, with `${VAR}` unexpanded (no
secret is hashed). Changing the table starts from no list. Whether the server
serves skills is kept too: such a server is started before the first request,
since its skills join the catalog that request carries (mcp/tools.py).

A server's tool is a `Listed`: plain data, read from the SDK's `Tool` as the server
lists it (`listed_of`) or from the kept list, so that an offer (mcp/catalog.py) is
built without the SDK. This module loads nothing more than the user cache: `skills
list` reads the kept lists to say which servers serve skills.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillchat.safe_io import user_cache

if TYPE_CHECKING:
    from skillchat.mcp_config import McpServerConfig

CACHE = "mcp-tools.json"
MAX_SERVERS = 64  # lists kept, the most recently listed first
MAX_CHARS = 2_000_000  # a larger list is not kept: that server is waited for each time


@dataclass(frozen=True)
class Listed:
    """One tool as its server listed it: its name, description (or title), input
    schema and annotations, untouched (cleaned by `build_offer`)."""

    name: str
    description: str
    input_schema: Any
    annotations: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "annotations": self.annotations,
        }


def listed_of(tool: Any) -> Listed:
    """The `Listed` of an SDK `Tool`."""
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    )
    return Listed(tool.name, tool.description or tool.title or "", tool.input_schema, annotations)


def listed_from_json(value: Any) -> Listed | None:
    """A `Listed` kept as `as_json` wrote it; None when it is not one."""
    if not isinstance(value, dict):
        return None
    name, description = value.get("name"), value.get("description")
    annotations = value.get("annotations")
    if not isinstance(name, str) or not isinstance(description, str):
        return None
    if not isinstance(annotations, dict):
        return None
    return Listed(name, description, value.get("input_schema"), annotations)


@dataclass(frozen=True)
class Kept:
    """A server's list as it last gave it."""

    tools: list[Listed]
    skills: bool  # it declared the skills extension


def key_of(config: McpServerConfig) -> str:
    """The digest a server's kept list is found by (see the module docstring)."""
    table = [config.name, config.command, config.args, config.cwd, config.env]
    table += [config.url, config.headers]
    return hashlib.sha256(json.dumps(table).encode("utf-8", "surrogatepass")).hexdigest()


def kept(configs: list[McpServerConfig]) -> dict[str, Kept]:
    """The kept lists of `configs`, by server name (a server without one, or whose
    entry is unreadable, is left out)."""
    found = user_cache.read(CACHE)
    if not isinstance(found, dict):
        return {}
    lists: dict[str, Kept] = {}
    for config in configs:
        entry = found.get(key_of(config))
        if not isinstance(entry, dict) or not isinstance(entry.get("tools"), list):
            continue
        tools = [tool for item in entry["tools"] if (tool := listed_from_json(item))]
        if len(tools) == len(entry["tools"]):  # every one readable, or the list is not used
            lists[config.name] = Kept(tools, entry.get("skills") is True)
    return lists


def keep(config: McpServerConfig, tools: list[Listed], skills: bool) -> None:
    """Keep what the server just listed (a failed write is not said: the next
    session waits for the server, as without a list)."""
    entry: dict[str, Any] = {
        "tools": [tool.as_json() for tool in tools],
        "skills": skills,
        "at": time.time(),
    }
    try:
        if len(json.dumps(entry)) > MAX_CHARS:
            return
    except (TypeError, ValueError):  # a schema that is not JSON: nothing worth keeping
        return

    def change(value: Any) -> dict[str, Any]:
        lists = dict(value) if isinstance(value, dict) else {}
        lists[key_of(config)] = entry
        newest = sorted(lists.items(), key=lambda item: _at(item[1]), reverse=True)
        return dict(newest[:MAX_SERVERS])

    user_cache.update(CACHE, change)


def _at(entry: Any) -> float:
    at = entry.get("at") if isinstance(entry, dict) else None
    return float(at) if isinstance(at, (int, float)) else 0.0
