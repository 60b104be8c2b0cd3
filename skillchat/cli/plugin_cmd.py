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
from skillchat.plugin_servers import command_line
from skillchat.skills.plugin_install import data_root
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.ui.console import Consoles


def check(prepared: Any, target: Path, project: bool, settings: Settings) -> None:
    """Refuse a plugin that cannot be installed here, before the summary's question."""
    from skillchat.config import plugin_servers_path
    from skillchat.skills import plugin_install

    if project:
        raise InstallError("a plugin installs for the user (its servers are yours): drop --project")
    plugin_install.check(prepared, target, set(settings.mcp.servers), plugin_servers_path())


def show(consoles: Consoles, prepared: Any, target: Path) -> None:
    """What the plugin adds to the skills' summary: its servers, each as it would run."""
    from skillchat.skills import plugin_install, plugins

    plugin, out = prepared.plugin, consoles.out
    home = plugin_install.plugins_dir(target) / plugin.name
    version = f" {plugin.version}" if plugin.version else ""
    head = f"plugin {plugin.name}{version} ({plugin.kind}) -> {home}"
    out.print(safe.text(safe.one_line(head), "strong"), soft_wrap=True)
    for note in plugin.notes:
        out.print(safe.text("  ! " + safe.one_line(note)), soft_wrap=True)
    for hooks in plugin.hooks:
        line = f"hooks {hooks['path']}: untrusted, not run until `skillchat hooks trust`"
        out.print(safe.text("  " + safe.one_line(line)), soft_wrap=True)
    for name, server in plugin.servers.items():
        record = plugins.resolved(server, plugin.name, home, data_root() / plugin.name)
        line = f"MCP server {name} (off until `skillchat mcp enable {name}`): "
        out.print(safe.text("  " + safe.one_line(line + command_line(record))), soft_wrap=True)


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


def update(ctx: typer.Context, target: Path, names: list[str], yes: bool) -> list[str]:
    """`skills update`'s plugins (the named ones, or all): each fetched again whole,
    shown, and on a yes swapped in. The skill names left for the skills' own update
    (a plugin's skills update with it only)."""
    from skillchat.skills.lock import Lock, lock_path

    lock = Lock.load(lock_path(target))
    owned = {skill: p for p, r in lock.plugins.items() for skill in r["skills"]}
    if owner := next((owned[n] for n in names if n in owned), None):
        raise InstallError(f"a skill of plugin {owner} updates with it: skills update {owner}")
    for name in [n for n in names if n in lock.plugins] or ([] if names else list(lock.plugins)):
        _update_one(ctx, target, name, lock.plugins[name], yes)
    return [n for n in names or lock.skills if n not in lock.plugins and n not in owned]


def _update_one(ctx: typer.Context, target: Path, name: str, record: Any, yes: bool) -> None:
    """Fetch plugin `name` at its ref, show it as `add` does, and swap it in on a yes."""
    import shutil
    import tempfile

    from skillchat.cli.invocation import consoles_of
    from skillchat.cli.skills_add_cmd import _confirm, _show
    from skillchat.config import load_settings, plugin_servers_path
    from skillchat.skills import plugin_install
    from skillchat.skills.install import prepare
    from skillchat.skills.sync import source_of

    if not record["commit"]:
        typer.echo(safe.one_line(f"{name}: from a local folder; remove and add it again to update"))
        return
    work = Path(tempfile.mkdtemp(prefix="skillchat-update-"))
    try:
        prepared = prepare(source_of(record, record["ref"]), work, [], False)
        if prepared.plugin is None or prepared.plugin.name != name:
            raise InstallError(f"{name}: the source no longer holds plugin {name}")
        if prepared.commit == record["commit"] and prepared.plugin.digest == record["digest"]:
            typer.echo(safe.one_line(f"{name}: up to date ({record['commit'][:12]})"))
            return
        settings = load_settings()
        plugin_install.check(
            prepared, target, set(settings.mcp.servers), plugin_servers_path(), updating=True
        )
        _show(consoles_of(ctx), prepared)
        show(consoles_of(ctx), prepared, target)
        refused = [(c.name, why) for c in prepared.skills for why in c.refusals]
        if refused:
            raise InstallError(f"{refused[0][0]}: {refused[0][1]}: nothing changed")
        _confirm(f"Update and trust plugin {name}?", yes)
        _, off = plugin_install.update(prepared, target, plugin_servers_path(), data_root())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for server in off:
        typer.echo(
            safe.one_line(f"MCP server {server} changed: off until `skillchat mcp enable {server}`")
        )
    typer.echo(safe.one_line(f"updated plugin {name} ({(prepared.commit or '')[:12]})"))


def verified(target: Path, installed: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """`skills verify`'s lines for plugins' folders: each hashed against its lock
    record (a changed server script is caught here; its skills are checked as skills)."""
    from skillchat.errors import TrustError
    from skillchat.skills.content_hash import content_hash

    out = []
    for name, record in sorted(installed.items()):
        root = target.parent / "plugins" / name
        try:
            same = (
                root.is_dir() and not root.is_symlink() and content_hash(root) == record["digest"]
            )
        except TrustError:
            same = False
        out.append((f"{name} (plugin)", [] if same else ["its folder changed since installed"]))
    return out


def sync(target: Path) -> None:
    """Put back each locked plugin whose folder is missing (skills/plugin_install.py)."""
    import shutil
    import tempfile

    from skillchat.config import plugin_servers_path
    from skillchat.skills import plugin_install

    work = Path(tempfile.mkdtemp(prefix="skillchat-sync-"))
    try:
        for line in plugin_install.restore(target, plugin_servers_path(), data_root(), work):
            typer.echo(safe.one_line(line))
    finally:
        shutil.rmtree(work, ignore_errors=True)


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
        typer.echo(
            safe.one_line(f"{name} (plugin {record['plugin']}) runs: {command_line(record)}")
        )
        _confirm(f"Enable MCP server {name}?", yes)
    record["enabled"] = plugin_servers.digest(record) if on else None
    plugin_servers.save(path, servers)
    typer.echo(safe.one_line(f"{name}: {'enabled' if on else 'off'}"))


def off_rows(configured: set[str]) -> list[dict[str, Any]]:
    """`mcp list`'s rows for the plugins' servers that are off: what each would run,
    and the command that turns it on."""
    from skillchat import plugin_servers
    from skillchat.config import plugin_servers_path

    rows: list[dict[str, Any]] = []
    for name, record in plugin_servers.load(plugin_servers_path()).items():
        if name in configured:
            continue
        rows.append(
            {
                "name": name,
                "transport": "stdio" if record["command"] is not None else "http",
                "target": " ".join([record["command"] or record["url"], *record["args"]]),
                "enabled": False,
                "state": "off",
                "tools": 0,
                "skills": None,
                "prompts": [],
                "resources": [],
                "error": f"off (plugin {record['plugin']}): skillchat mcp enable {name}",
            }
        )
    return rows
