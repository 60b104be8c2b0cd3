"""`[mcp.NAME]` tables: the MCP servers a user configured, checked when the config is read.

    [mcp.github]                       # a stdio server: a command skillchat starts
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "${GITHUB_PAT}" }   # passed to it; ${VAR} read from ours
    allow = ["get_issue"]              # pre-approved tools (true: all of them)

    [mcp.docs]                         # a streamable-HTTP server
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer ${DOCS_TOKEN}" }

    [mcp.remote]                       # an HTTP server that asks for an OAuth login
    url = "https://mcp.example.org/mcp"     # `skillchat mcp login remote` (mcp/oauth.py)
    client_id = "skillchat-at-example"      # optional: registered by hand, else dynamic
    client_secret = "${REMOTE_SECRET}"      # optional, with client_id

A stdio server gets only what `env` lists (plus PATH, HOME, USER, LOGNAME, SHELL,
TERM, which any program needs), never skillchat's whole environment: a model key
must not reach a server the user did not hand it to. Secrets belong in environment
variables named by `${VAR}`, expanded when the server starts; a missing variable
stops that server with a reason, and the values are never shown.
This module sits below config.py, which calls `mcp_servers` on the `mcp` table.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.errors import ConfigError

# Names end up in `mcp__NAME__tool`: the characters a provider accepts in a tool
# name, and no double underscore (it separates the server from the tool).
_NAME = re.compile(r"[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0
# One answer (a stdio line, an HTTP body or SSE event) past this is not read: a
# result is cut to a share of the context anyway, and memory is the user's.
DEFAULT_MAX_ANSWER_MB = 256


@dataclass(frozen=True)
class McpServerConfig:
    """One `[mcp.NAME]` table. `allow` is True (every tool), or the tools pre-approved."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allow: bool | tuple[str, ...] = ()
    enabled: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S
    max_answer_mb: int = DEFAULT_MAX_ANSWER_MB
    # OAuth (mcp/oauth.py): a client registered with the authorization server by
    # hand (the secret as "${VAR}"), or the URL of the client's metadata document.
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None

    @property
    def max_answer_bytes(self) -> int:
        return self.max_answer_mb * 1024 * 1024

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def allows(self, tool: str) -> bool:
        """Whether the config pre-approves `tool` of this server."""
        return self.allow is True or (isinstance(self.allow, tuple) and tool in self.allow)

    def target(self) -> str:
        """What `mcp list` shows: the command line, or the URL without credentials
        (no variable's value: `env` and `headers` are not shown)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return re.sub(r"//[^/@]*@", "//", self.url or "")


def expand(value: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """`value` with each `${VAR}` replaced by the variable; ConfigError naming the
    first one that is not set (the server cannot start without it)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ConfigError(f"environment variable {name} is not set")
        return environ[name]

    return _VAR.sub(one, value)


_KEYS: dict[str, type | tuple[type, ...]] = {
    "command": str,
    "args": list,
    "env": dict,
    "cwd": str,
    "url": str,
    "headers": dict,
    "allow": (bool, list),
    "enabled": bool,
    "timeout_s": (int, float),
    "startup_timeout_s": (int, float),
    "max_answer_mb": int,
    "client_id": str,
    "client_secret": str,
    "client_metadata_url": str,
}


def mcp_servers(path: Path, tables: Any) -> dict[str, McpServerConfig]:
    """The `[mcp.NAME]` tables of the file at `path`, checked: a name usable in a tool
    name, known keys of the right type, exactly one of `command` and `url`."""
    if not isinstance(tables, dict):
        raise ConfigError(f"{path}: 'mcp' must be tables: [mcp.NAME]")
    servers: dict[str, McpServerConfig] = {}
    for name, table in tables.items():
        where = f"{path}: [mcp.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: 'mcp.{name}' must be a table: [mcp.{name}]")
        if not _NAME.fullmatch(name) or len(name) > 30:
            raise ConfigError(
                f"{where}: a server name is letters, digits, '-' and single '_' (at most 30)"
            )
        for key, value in table.items():
            want = _KEYS.get(key)
            if want is None:
                raise ConfigError(f"{where}: unknown key '{key}' ({', '.join(_KEYS)})")
            types = want if isinstance(want, tuple) else (want,)
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise ConfigError(f"{where}: '{key}' has the wrong type")
        if ("command" in table) == ("url" in table):
            raise ConfigError(f"{where}: needs either 'command' (stdio) or 'url' (http)")
        url = table.get("url")
        if url is not None and not re.match(r"https?://[^/\s]+", url):
            raise ConfigError(f"{where}: url must be an http(s) URL")
        allow = table.get("allow", ())
        servers[name] = McpServerConfig(
            name=name,
            command=table.get("command"),
            args=_strings(where, "args", table.get("args", [])),
            env=_pairs(where, "env", table.get("env", {})),
            cwd=table.get("cwd"),
            url=url,
            headers=_pairs(where, "headers", table.get("headers", {})),
            allow=allow if isinstance(allow, bool) else _strings(where, "allow", allow),
            enabled=table.get("enabled", True),
            timeout_s=_positive(where, "timeout_s", table.get("timeout_s", DEFAULT_TIMEOUT_S)),
            startup_timeout_s=_positive(
                where,
                "startup_timeout_s",
                table.get("startup_timeout_s", DEFAULT_STARTUP_TIMEOUT_S),
            ),
            max_answer_mb=int(
                _positive(where, "max_answer_mb", table.get("max_answer_mb", DEFAULT_MAX_ANSWER_MB))
            ),
            client_id=table.get("client_id"),
            client_secret=table.get("client_secret"),
            client_metadata_url=table.get("client_metadata_url"),
        )
    return servers


def _strings(where: str, key: str, value: list[Any]) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(value)


def _pairs(where: str, key: str, table: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if not all(isinstance(v, str) for v in table.values()):
        raise ConfigError(f"{where}: the values of '{key}' must be strings (\"${{VAR}}\")")
    return tuple(table.items())


def _positive(where: str, key: str, value: float) -> float:
    if value <= 0:
        raise ConfigError(f"{where}: '{key}' must be more than 0")
    return float(value)
