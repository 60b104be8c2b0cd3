"""The plugin half of `skills add` and `skills remove`, and `mcp enable | disable`.

A plugin (skills/plugins.py) installs whole: its summary adds to the skills' one
what only a plugin has (its layout, its MCP servers and the command each would
run), and its servers stay off until the user enables each one here, after seeing
that command again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from skillchat.errors import InstallError, UsageError
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.ui.console import Consoles


def data_root() -> Path:
    """Where each plugin's `${PLUGIN_DATA}` folder is made: the user's data dir."""
    from skillchat.config import user_data_dir

    return user_data_dir() / "plugins"


def check(prepared: Any, target: Path, project: bool, settings: Settings) -> None:
    """Refuse a plugin that cannot be installed here, before the summary's question."""
    from skillchat.config import plugin_servers_path
    from skillchat.skills import plugin_install

    if project:
        raise InstallError("a plugin installs for the user (its servers are yours): drop --project")
    plugin_install.check(prepared, target, set(settings.mcp_servers), plugin_servers_path())


def show(consoles: Consoles, prepared: Any, target: Path) -> None:
    """What the plugin adds to the skills' summary: its servers, each as it would run."""
    from skillchat.skills import plugin_install, plugins

    plugin, out = prepared.plugin, consoles.out
    home = plugin_install.plugins_dir(target) / plugin.name
    head = f"plugin {plugin.name} {plugin.version or ''} ({plugin.kind}) -> {home}"
    out.print(safe.text(safe.one_line(head), "strong"), soft_wrap=True)
    for note in plugin.notes:
        out.print(safe.text("  ! " + safe.one_line(note)), soft_wrap=True)
    for name, server in plugin.servers.items():
        record = plugins.resolved(server, plugin.name, home, data_root() / plugin.name)
        line = f"MCP server {name} (off until `skillchat mcp enable {name}`): "
        out.print(safe.text("  " + safe.one_line(line + _command(record))), soft_wrap=True)


def _command(record: dict[str, Any]) -> str:
    from skillchat.plugin_servers import command_line

    return command_line(record)


def install(prepared: Any, target: Path, ref: str | None) -> list[Path]:
    """Install the plugin whole; the skills' folders."""
    from skillchat.config import plugin_servers_path
    from skillchat.skills import plugin_install

    moved = plugin_install.install(prepared, target, ref, plugin_servers_path(), data_root())
    plugin = prepared.plugin
    for name in plugin.servers:
        typer.echo(
            safe.one_line(f"MCP server {name}: off; `skillchat mcp enable {name}` to use it")
        )
    typer.echo(safe.one_line(f"installed plugin {plugin.name} in {target.parent / 'plugins'}"))
    return moved


def remove(target: Path, name: str) -> bool:
    """`skills remove NAME` for a plugin: all of it, said line by line. False when
    NAME is no plugin; a skill a plugin brought is removed with its plugin only."""
    from skillchat.config import plugin_servers_path
    from skillchat.skills import plugin_install
    from skillchat.skills.lock import Lock, lock_path

    installed = Lock.load(lock_path(target)).plugins
    if name not in installed:
        owner = next((p for p, r in installed.items() if name in r["skills"]), None)
        if owner is not None:
            raise InstallError(f"'{name}' came with plugin {owner}: skills remove {owner}")
        return False
    for line in plugin_install.remove(target, name, plugin_servers_path(), data_root()):
        typer.echo(safe.one_line(f"removed {line}"))
    typer.echo(safe.one_line(f"removed plugin {name}"))
    return True


def set_enabled(name: str, on: bool, yes: bool) -> None:
    """`mcp enable | disable NAME`: bind the yes to the server's record as it is now
    (plugin_servers.py), after showing what it runs."""
    from skillchat import plugin_servers
    from skillchat.cli.skills_add_cmd import _confirm
    from skillchat.config import plugin_servers_path

    path = plugin_servers_path()
    servers = plugin_servers.load(path)
    record = servers.get(name)
    if record is None:
        known = ", ".join(servers) or "none installed"
        raise UsageError(f"no MCP server '{name}' of an installed plugin ({known})")
    if on:
        typer.echo(safe.one_line(f"{name} (plugin {record['plugin']}) runs: {_command(record)}"))
        _confirm(f"Enable MCP server {name}?", yes)
    record["enabled"] = plugin_servers.digest(record) if on else None
    plugin_servers.save(path, servers)
    typer.echo(safe.one_line(f"{name}: {'enabled' if on else 'off'}"))


def off_line(name: str) -> str | None:
    """Why `mcp tools NAME` cannot start a plugin's server: off until enabled."""
    from skillchat import plugin_servers
    from skillchat.config import plugin_servers_path

    record = plugin_servers.load(plugin_servers_path()).get(name)
    if record is None or plugin_servers.is_enabled(record):
        return None
    again = " again: it changed since you enabled it" if record["enabled"] else ""
    return (
        f"MCP server '{name}' of plugin {record['plugin']} is off until you enable "
        f"it{again}: skillchat mcp enable {name}"
    )
