"""Reading a plugin: an Agent Plugins v1 package, or Claude Code's or Codex's layout.

    plugin.json                      Agent Plugins v1.0.0 (its `$schema` says so)
    skills/NAME/SKILL.md             each skill (fixed location)
    mcp.json                         {"$schema": ..., "mcpServers": {NAME: {...}}}

    .claude-plugin/plugin.json       Claude Code: {"name", "skills"?, "mcpServers"?}
    .codex-plugin/plugin.json        Codex: the same fields
    skills/NAME/SKILL.md, .mcp.json  their defaults (`skills` and `mcpServers` may
                                     name other `./` paths, or hold the servers inline)

Everything here reads a plugin already staged in a private folder (skills/install.py
fetched it; nothing of it ran) and refuses, with one line, what must not be installed
at all: a manifest or server list that is not what the format says, a path that
leaves the plugin (`../`, absolute, or a symlink resolving outside it: the spec's
containment rule, held for every link of the plugin, not only the ones named), a
skill the manifest names that is not there, and a server environment that would
read the user's own variables (`${GITHUB_TOKEN}`): the spec leaves such text literal,
while skillchat's `[mcp.NAME]` tables expand it, so a plugin gets none.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillchat.errors import InstallError

AGENT_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
MANIFESTS = {
    "plugin.json": "agent-plugins",
    ".claude-plugin/plugin.json": "claude-code",
    ".codex-plugin/plugin.json": "codex",
}
_AGENT_FIELDS = {"$schema", "name", "version", "description", "author", "homepage"}
_AGENT_FIELDS |= {"repository", "license", "keywords", "extensions"}
_PLUGIN_NAME = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?!-)|\.(?!\.))*")
_SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*")
_STDIO = {"type", "command", "args", "env", "cwd"}
_HTTP = {"type", "url", "headers"}
MAX_JSON_BYTES = 1_000_000
ROOT, DATA = "${PLUGIN_ROOT}", "${PLUGIN_DATA}"
# Claude Code's and Codex's own names for the same two folders.
_ALIASES = {"${CLAUDE_PLUGIN_ROOT}": ROOT, "${CLAUDE_PLUGIN_DATA}": DATA}


@dataclass
class Plugin:
    """A staged plugin: its manifest's facts, its skills' folders (relative to the
    root) and its servers, placeholders unexpanded until it has a home."""

    name: str
    kind: str
    root: Path
    version: str | None = None
    description: str = ""
    skills: list[str] = field(default_factory=list)
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    digest: str = ""  # of the whole folder, as the lock records it
    # Hook files Claude Code's and Codex's layouts bring ({path, sha256}): recorded,
    # untrusted until trusted, then run in the sandbox (hooks/plugin_hooks.py).
    hooks: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # shown, not blocking


def good_plugin_name(name: str) -> bool:
    """The spec's name rule (§5.5): it also names the plugin's folders, so no path."""
    return len(name) <= 64 and bool(_PLUGIN_NAME.fullmatch(name)) and name[-1] not in "-."


def manifest_of(paths: list[str]) -> str | None:
    """The manifest path among a source's files (relative to its top), if it is a plugin."""
    present = set(paths)
    return next((m for m in MANIFESTS if m in present), None)


def _json(root: Path, rel: str, what: str) -> Any:
    """The JSON of the plugin's file `rel`: read only once it is known to stay inside."""
    path = inside(root, rel, what)
    if not path.is_file():
        raise InstallError(f"{what} {rel}: not a file in the plugin")
    if path.stat().st_size > MAX_JSON_BYTES:
        raise InstallError(f"{what} {rel}: over {MAX_JSON_BYTES:,} bytes")
    try:
        return json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise InstallError(f"{what} {rel} is not valid JSON ({exc})") from None


def inside(root: Path, rel: str, what: str) -> Path:
    """`root/rel`, refused unless `rel` is relative without `..` and resolves (links
    followed) inside `root`."""
    if not rel or os.path.isabs(rel) or ".." in Path(rel).parts:
        raise InstallError(f"{what} {rel!r} points outside the plugin")
    path = root / rel
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
        raise InstallError(f"{what} {rel!r} points outside the plugin (through a symlink)")
    return path


def _no_escaping_links(root: Path) -> None:
    """Refuse any symlink of the plugin that resolves outside it (spec §4.1)."""
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            inside(root, str(path.relative_to(root)), "symlink")


def read(root: Path, manifest: str) -> Plugin:
    """The plugin staged at `root`, whose manifest is `manifest`; InstallError (one
    line) for anything that must stop the install."""
    _no_escaping_links(root)
    kind = MANIFESTS[manifest]
    doc = _json(root, manifest, "manifest")
    if not isinstance(doc, dict):
        raise InstallError(f"manifest {manifest}: not a JSON object")
    name = doc.get("name")
    if not isinstance(name, str) or not good_plugin_name(name):
        raise InstallError(
            f"manifest {manifest}: 'name' must be 1-64 lowercase letters, digits, '-' and "
            "'.', starting and ending with a letter or digit"
        )
    plugin = Plugin(name, kind, root)
    for key in ("version", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise InstallError(f"manifest {manifest}: '{key}' must be a string")
    plugin.version, plugin.description = doc.get("version"), doc.get("description") or ""
    if kind == "agent-plugins":
        if doc.get("$schema") != AGENT_SCHEMA:
            raise InstallError(f"manifest {manifest}: '$schema' must be {AGENT_SCHEMA}")
        plugin.notes += [f"manifest field '{k}' ignored" for k in sorted(set(doc) - _AGENT_FIELDS)]
        plugin.skills = _skills_under(root, "skills")
        if os.path.lexists(root / "mcp.json"):
            plugin.servers = _servers(root, "mcp.json", _json(root, "mcp.json", "mcp.json"), kind)
        return plugin
    plugin.skills = _listed_skills(root, doc.get("skills"), manifest)
    plugin.hooks = _hooks(root, doc.get("hooks"), manifest)
    declared = doc.get("mcpServers", "./.mcp.json" if (root / ".mcp.json").exists() else None)
    if isinstance(declared, str):
        rel = declared.removeprefix("./")
        plugin.servers = _servers(root, rel, _json(root, rel, "mcpServers"), kind)
    elif isinstance(declared, dict):
        plugin.servers = _servers(root, manifest, declared, kind)
    elif declared is not None:
        raise InstallError(f"manifest {manifest}: 'mcpServers' must be a path or an object")
    return plugin


def _hooks(root: Path, declared: Any, manifest: str) -> list[dict[str, str]]:
    """The hooks a Claude Code or Codex plugin declares (`hooks/hooks.json` unless the
    manifest's `hooks` names files or holds them inline), each with its content's
    SHA-256: what a later trust would be bound to."""
    import hashlib

    if declared is None:
        declared = "./hooks/hooks.json" if (root / "hooks" / "hooks.json").is_file() else []
    if isinstance(declared, dict):
        text = json.dumps(declared, sort_keys=True).encode()
        return [{"path": f"{manifest} (inline)", "sha256": hashlib.sha256(text).hexdigest()}]
    paths = [declared] if isinstance(declared, str) else declared
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        raise InstallError(f"manifest {manifest}: 'hooks' must be a path, paths or an object")
    found = []
    for given in paths:
        path = inside(root, given.removeprefix("./"), "hooks file")
        if not path.is_file():
            raise InstallError(f"manifest {manifest} names hooks {given!r}, which are not there")
        found.append({"path": given, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    return found


def _skills_under(root: Path, rel: str) -> list[str]:
    """The skill folders directly under `root/rel` (those holding a SKILL.md)."""
    folder = inside(root, rel, "skills folder")
    if not folder.is_dir():
        return []
    return [
        f"{rel}/{child.name}"
        for child in sorted(folder.iterdir())
        if child.is_dir() and (child / "SKILL.md").is_file()
    ]


def _listed_skills(root: Path, listed: Any, manifest: str) -> list[str]:
    """Claude Code's and Codex's `skills`: `./` paths, each a skill folder or a folder
    of them, besides the default `skills/`. A path that is not there is refused."""
    if isinstance(listed, str):
        listed = [listed]
    if listed is not None and not (
        isinstance(listed, list) and all(isinstance(p, str) for p in listed)
    ):
        raise InstallError(f"manifest {manifest}: 'skills' must be a path or a list of paths")
    found = dict.fromkeys(_skills_under(root, "skills"))
    for given in listed or []:
        rel = os.path.normpath(given.removeprefix("./")) if given.startswith("./") else given
        path = inside(root, rel, "skill path")
        if (path / "SKILL.md").is_file():
            found[rel] = None
        elif path.is_dir() and (under := _skills_under(root, rel)):
            found.update(dict.fromkeys(under))
        else:
            raise InstallError(f"manifest {manifest} names skill {given!r}, which is not there")
    return list(found)


def _servers(root: Path, rel: str, doc: Any, kind: str) -> dict[str, dict[str, Any]]:
    """The servers of an mcp.json (or a manifest's inline `mcpServers`), checked."""
    if not isinstance(doc, dict):
        raise InstallError(f"{rel}: not a JSON object")
    exact = set(doc) == {"$schema", "mcpServers"} and doc.get("$schema") == MCP_SCHEMA
    if kind == "agent-plugins" and not exact:
        raise InstallError(f"{rel}: must hold only '$schema' ({MCP_SCHEMA}) and 'mcpServers'")
    table = doc.get("mcpServers", doc if kind != "agent-plugins" else None)
    if not isinstance(table, dict):
        raise InstallError(f"{rel}: 'mcpServers' must be an object")
    return {name: _server(root, rel, name, spec, kind) for name, spec in table.items()}


def _server(root: Path, rel: str, name: str, spec: Any, kind: str) -> dict[str, Any]:
    """One server entry, checked, its placeholders still in place."""
    where = f"{rel}: server {name!r}"
    if not _SERVER_NAME.fullmatch(name) or len(name) > 30:
        raise InstallError(f"{where}: a name is letters, digits, '-' and single '_' (at most 30)")
    if not isinstance(spec, dict):
        raise InstallError(f"{where}: not an object")
    kind_of = spec.get("type", "stdio" if "command" in spec else "http")
    if kind_of in ("http", "streamable-http"):
        return _http_server(where, spec)
    if kind_of != "stdio":
        raise InstallError(f"{where}: transport {kind_of!r} is not supported (stdio, http)")
    if unknown := set(spec) - _STDIO:
        raise InstallError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    command, args = spec.get("command"), spec.get("args", [])
    env, cwd = spec.get("env", {}), spec.get("cwd", ROOT)
    if not isinstance(command, str) or not command or command != command.strip():
        raise InstallError(f"{where}: 'command' must be one program name or ./path")
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise InstallError(f"{where}: 'args' must be a list of strings")
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        raise InstallError(f"{where}: 'env' must map names to strings")
    if not isinstance(cwd, str):
        raise InstallError(f"{where}: 'cwd' must be a string")
    if kind != "agent-plugins":  # Claude Code expands its root in the command too
        command = _aliased(command)
        if command.startswith(ROOT + "/"):
            command = "./" + command.removeprefix(ROOT + "/")
    if "/" in command:
        if not command.startswith("./"):
            raise InstallError(f"{where}: command {command!r} points outside the plugin")
        if not inside(root, command[2:], f"{where}: command").is_file():
            raise InstallError(f"{where}: command {command!r} is not a file in the plugin")
    env = {k: _aliased(v) for k, v in env.items()}
    if reserved := {"PLUGIN_ROOT", "PLUGIN_DATA"} & set(env):
        raise InstallError(f"{where}: 'env' may not set {sorted(reserved)[0]} (skillchat sets it)")
    for key, value in env.items():
        if left := re.search(r"\$\{[^}]*\}", value.replace(ROOT, "").replace(DATA, "")):
            raise InstallError(
                f"{where}: env {key} would read {left.group()} from your environment: a "
                "plugin's server gets none of your variables (configure it as [mcp.NAME])"
            )
    cwd = _aliased(cwd)
    if cwd.startswith("./"):
        inside(root, cwd[2:] or ".", f"{where}: cwd")
    elif cwd == ROOT or cwd.startswith(ROOT + "/"):
        inside(root, cwd.removeprefix(ROOT).lstrip("/") or ".", f"{where}: cwd")
    elif not (cwd == DATA or cwd.startswith(DATA + "/")) or ".." in Path(cwd).parts:
        raise InstallError(f"{where}: cwd {cwd!r} points outside the plugin and its data")
    return {"command": command, "args": [_aliased(a) for a in args], "env": env, "cwd": cwd}


def _http_server(where: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A streamable-HTTP entry: an http(s) URL (https unless loopback), fixed headers."""
    if unknown := set(spec) - _HTTP:
        raise InstallError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    url, headers = spec.get("url"), spec.get("headers", {})
    local = r"https?://(localhost|127\.[0-9.]+|\[::1\])(:\d+)?(/|$)"
    if not isinstance(url, str) or not (re.match(r"https://[^/@\s]+", url) or re.match(local, url)):
        raise InstallError(f"{where}: 'url' must be an https URL (http only to this machine)")
    if not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
        raise InstallError(f"{where}: 'headers' must map names to strings")
    if any("${" in v for v in headers.values()):
        raise InstallError(f"{where}: a header would read your environment: not expanded")
    return {"url": url, "headers": headers}


def _aliased(value: str) -> str:
    """`value` with Claude Code's placeholder names written as the spec's."""
    for alias, name in _ALIASES.items():
        value = value.replace(alias, name)
    return value


def resolved(server: dict[str, Any], plugin: str, root: Path, data: Path) -> dict[str, Any]:
    """A server's record for plugin_servers.py: placeholders expanded (once, not
    recursively), the command and folder made absolute, PLUGIN_ROOT and PLUGIN_DATA
    in its environment, and off."""

    def fill(text: str) -> str:
        return text.replace(ROOT, str(root)).replace(DATA, str(data))

    record: dict[str, Any] = {"plugin": plugin, "enabled": None}
    if "url" in server:
        record.update(command=None, args=[], env={}, cwd=None, url=server["url"])
        record["headers"] = dict(server["headers"])
        return record
    command = server["command"]
    if command.startswith("./"):
        command = str(root / command[2:])
    cwd = server["cwd"]
    cwd = str(root / cwd[2:]) if cwd.startswith("./") else fill(cwd)
    env = {k: fill(v) for k, v in server["env"].items()}
    env.update(PLUGIN_ROOT=str(root), PLUGIN_DATA=str(data))
    record.update(command=command, args=[fill(a) for a in server["args"]], env=env, cwd=cwd)
    record.update(url=None, headers={})
    return record
