"""The MCP servers that installed plugins bring: `plugin-servers.json` beside the config file.

`skillchat skills add` writes a plugin's servers here rather than into the user's
own config.toml: that file is the user's, written by hand with its comments, and
`skills remove` must take a plugin's servers away again without touching it. One
record per server, its command already resolved against the installed plugin:

    {"version": 1, "servers": {"notes": {
        "plugin": "acme-notes", "command": "/home/u/.agents/plugins/acme-notes/bin/srv",
        "args": [...], "env": {"PLUGIN_ROOT": ..., "PLUGIN_DATA": ...}, "cwd": ...,
        "url": null, "headers": {}, "enabled": null}}}

**Off until enabled.** `enabled` holds the digest of the record (everything but
`enabled`) the user said yes to with `skillchat mcp enable NAME`; a server joins
the config's servers only while its record still hashes to that digest. An update
that changes the server's command, arguments, environment or URL therefore turns
it off again until the user enables it again, whoever wrote the change.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from skillchat.errors import ConfigError
from skillchat.mcp_config import McpServerConfig
from skillchat.safe_io.write import replace_atomically

FILE_NAME = "plugin-servers.json"
VERSION = 1
MAX_BYTES = 1_000_000
_KEYS = ("plugin", "command", "args", "env", "cwd", "url", "headers", "enabled")


def digest(record: dict[str, Any]) -> str:
    """What a yes to `record` is bound to: every field but `enabled`, hashed."""
    shown = {k: record[k] for k in _KEYS if k != "enabled"}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


def load(path: Path) -> dict[str, dict[str, Any]]:
    """The records of the file at `path` (none when there is no file); ConfigError
    when it is a link, not a file skillchat wrote, or a record is malformed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        why = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise ConfigError(f"{path}: cannot be read ({why})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ConfigError(f"{path}: not a regular file")
        raw = fh.read(MAX_BYTES + 1)
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        doc = None
    servers = (
        doc.get("servers") if isinstance(doc, dict) and doc.get("version") == VERSION else None
    )
    if not isinstance(servers, dict) or not all(_valid(r) for r in servers.values()):
        raise ConfigError(f"{path}: not a plugin servers file skillchat can read (edited by hand?)")
    return servers


def _valid(record: Any) -> bool:
    """Every field of the type skillchat writes, so a record is safe to start."""
    return (
        isinstance(record, dict)
        and set(record) == set(_KEYS)
        and isinstance(record["plugin"], str)
        and (record["command"] is None) != (record["url"] is None)
        and all(record[k] is None or isinstance(record[k], str) for k in ("command", "cwd", "url"))
        and isinstance(record["args"], list)
        and all(isinstance(a, str) for a in record["args"])
        and all(
            isinstance(record[k], dict) and all(isinstance(v, str) for v in record[k].values())
            for k in ("env", "headers")
        )
        and (record["enabled"] is None or isinstance(record["enabled"], str))
    )


def save(path: Path, servers: dict[str, dict[str, Any]]) -> None:
    """Replace the file whole (private: a server's environment may name folders of
    the user's); with no server left, the file goes."""
    if not servers:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"version": VERSION, "servers": dict(sorted(servers.items()))}
    data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
    replace_atomically(path, data, ConfigError, "cannot write the plugin servers", mode=0o600)


def is_enabled(record: dict[str, Any]) -> bool:
    """Whether the user's yes still holds for the record as it is now."""
    return record["enabled"] is not None and record["enabled"] == digest(record)


def enabled_servers(path: Path) -> dict[str, McpServerConfig]:
    """The servers of installed plugins the user enabled, as config servers."""
    return {
        name: McpServerConfig(
            name=name,
            command=record["command"],
            args=tuple(record["args"]),
            env=tuple(record["env"].items()),
            cwd=record["cwd"],
            url=record["url"],
            headers=tuple(record["headers"].items()),
        )
        for name, record in load(path).items()
        if is_enabled(record)
    }


def command_line(record: dict[str, Any]) -> str:
    """What starting the server runs (or the URL it reaches), as `mcp enable` shows
    it before the yes: command, arguments, folder and environment."""
    if record["url"] is not None:
        return f"{record['url']} (headers: {', '.join(record['headers']) or 'none'})"
    env = " ".join(f"{k}={v}" for k, v in record["env"].items())
    return f"{' '.join([record['command'], *record['args']])} (in {record['cwd']}; env: {env})"


def off_reason(path: Path, name: str) -> str | None:
    """Why the installed plugin's server `name` does not start: off until enabled
    (again, when it changed since). None when no plugin brought it, or it is on."""
    record = load(path).get(name)
    if record is None or is_enabled(record):
        return None
    again = " again: it changed since you enabled it" if record["enabled"] else ""
    return (
        f"MCP server '{name}' of plugin {record['plugin']} is off until you enable "
        f"it{again}: skillchat mcp enable {name}"
    )
