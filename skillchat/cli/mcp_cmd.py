"""`skillchat mcp list` and `skillchat mcp tools NAME`: the configured MCP servers.

`list` starts each server (as a chat would), lists its tools and stops it: a line
per server with its transport, its target (variables as written, never their
values), whether it started and how many tools it offers, or why it failed.
`tools NAME` lists one server's tools (`--json` for scripts: name, offered name,
description, input schema, annotations, and whether a provider can take it).
Exit 1 when a server named or listed did not start.
`login NAME` / `logout NAME`: an HTTP server's OAuth login (mcp/login.py), forgotten.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skillchat.cli import plugin_cmd
from skillchat.cli.common import ConfigOpt, JsonOpt
from skillchat.cli.invocation import consoles_of, load
from skillchat.errors import McpError, UsageError

if TYPE_CHECKING:
    from skillchat.ui.console import Consoles

app = typer.Typer(  # its help: cli/app.py
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


LISTED = 30  # a server's prompts and resources shown in the table (--json: all)


@app.command("list")
def list_cmd(ctx: typer.Context, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Each configured server: does it start, how many tools (and skills), its prompts
    and resources (by name), or why not."""
    settings = load(ctx, config)
    servers = list(settings.mcp.servers.values())
    off = plugin_cmd.off_rows(set(settings.mcp.servers))
    if not servers and not off:
        where = settings.config_path or "the config file"
        raise UsageError(f"no MCP server is configured: add an [mcp.NAME] table to {where}")
    states = _started(servers)
    rows: list[dict[str, Any]] = []
    for server in servers:
        state = states[server.name]
        rows.append(
            {
                "name": server.name,
                "transport": server.transport,
                "target": server.target(),
                "enabled": server.enabled,
                "state": state.state,
                "tools": len(state.tools),
                # None: the server does not declare the skills extension
                "skills": None if state.skill_entries is None else len(state.skill_entries),
                # `/mcp__SERVER__PROMPT` and `@SERVER:URI` in the REPL (mcp/prompts.py)
                "prompts": [
                    {"command": f"/{p.command}", "usage": p.usage()} for p in state.prompts
                ],
                "resources": [f"@{server.name}:{r.uri}" for r in state.resources],
                "error": state.error or None,
            }
        )
    rows += off  # a plugin's server the user has not enabled: shown, never started
    _show_list(consoles_of(ctx), rows, json_out)
    if any(row["state"] not in ("ready", "off") for row in rows):
        raise typer.Exit(1)


@app.command("tools")
def tools_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The server: [mcp.NAME] in the config.")],
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The tools of one server, as the model would be offered them."""
    from skillchat.config import plugin_servers_path
    from skillchat.mcp.catalog import build_offer, share_of
    from skillchat.plugin_servers import off_reason

    settings = load(ctx, config)
    server = settings.mcp.servers.get(name)
    if server is None and (off := off_reason(plugin_servers_path(), name)) is not None:
        raise UsageError(off)
    if server is None:
        known = ", ".join(settings.mcp.servers) or "none configured"
        raise UsageError(f"no [mcp.{name}] in the config ({known})")
    state = _started([server])[name]
    if state.state != "ready":
        raise McpError(f"MCP server '{name}' did not start: {state.error}")
    listed = [(name, tool) for tool in state.tools]
    offer = build_offer(listed, share_of(settings.limits.budget))
    left = dict(offer.left_out)
    rows = []
    for entry in [*offer.full, *offer.names_only]:
        rows.append(
            {
                "name": entry.tool,
                "offered_as": entry.name,
                "description": entry.description,
                "input_schema": entry.schema,
                "annotations": entry.annotations,
                "schema_offered": entry in offer.full,
            }
        )
    for offered, why in left.items():
        rows.append({"offered_as": offered, "left_out": why})
    _show_tools(consoles_of(ctx), rows, json_out)


@app.command("enable")
def enable_cmd(
    name: Annotated[str, typer.Argument(help="An MCP server an installed plugin brought.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Enable without asking.")] = False,
) -> None:
    """Turn on a plugin's MCP server, after showing the command it runs."""
    plugin_cmd.set_enabled(name, True, yes)


@app.command("disable")
def disable_cmd(
    name: Annotated[str, typer.Argument(help="An MCP server an installed plugin brought.")],
) -> None:
    """Turn a plugin's MCP server off again."""
    plugin_cmd.set_enabled(name, False, True)


def _started(servers: list[Any]) -> dict[str, Any]:
    """Start `servers`, wait for each, and stop them: their states as they were up
    (or failed), with the tools listed."""
    from copy import copy

    from skillchat.mcp.hub import McpHub

    hub = McpHub(servers)
    hub.start()
    try:
        hub.wait()
        return {name: copy(state) for name, state in hub.servers.items()}
    finally:
        hub.close()


def _show_list(consoles: Consoles, rows: list[dict[str, Any]], json_out: bool) -> None:
    import sys

    from rich.table import Table

    from skillchat.ui.safe import json_text, one_line, text

    if json_out:
        sys.stdout.write(json_text({"servers": rows}) + "\n")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("server", "transport", "target", "status"):
        table.add_column(column)
    for row in rows:
        status = f"{row['tools']} tools" if row["state"] == "ready" else f"failed: {row['error']}"
        if row["state"] == "off":
            status = row["error"]
        if row["state"] == "ready" and row["skills"] is not None:
            status += f", {row['skills']} skills"
        if not row["enabled"] and row["state"] != "off":
            status += " (enabled = false: only with --mcp)"
        cells = (row["name"], row["transport"], row["target"], status)
        table.add_row(*(text(one_line(str(v), 200)) for v in cells))
        extras = [("prompt", " ".join((p["command"], p["usage"]))) for p in row["prompts"]]
        extras += [("resource", uri) for uri in row["resources"]]
        for kind, shown in extras[:LISTED]:
            table.add_row("", kind, text(one_line(shown, 200)))
        if len(extras) > LISTED:
            table.add_row("", "", text(f"… {len(extras) - LISTED} more (--json lists them all)"))
    consoles.out.print(table)


def _show_tools(consoles: Consoles, rows: list[dict[str, Any]], json_out: bool) -> None:
    import sys

    from rich.table import Table

    from skillchat.ui.safe import json_text, one_line, text

    if json_out:
        sys.stdout.write(json_text({"tools": rows}) + "\n")
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("tool")
    table.add_column("description")
    for row in rows:
        if "left_out" in row:
            why = f"left out: {row['left_out']}"
            table.add_row(text(one_line(row["offered_as"], 80)), text(one_line(why, 120)))
        else:
            description = one_line(row["description"], 120)
            table.add_row(text(one_line(row["offered_as"], 80)), text(description))
    consoles.out.print(table)


@app.command("login")
def login_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The HTTP server: [mcp.NAME] in the config.")],
    config: ConfigOpt = None,
) -> None:
    """Log in to an HTTP server that asks for OAuth: prints the authorization URL (and
    opens a browser when one is set), takes the redirect on 127.0.0.1, keeps the token
    in a file only you can read."""
    from skillchat.mcp.login import login

    server = _http_server(ctx, name, config)
    consoles = consoles_of(ctx)

    def show(url: str) -> None:
        consoles.err.print(f"To log in to '{name}', open this URL in a browser:", highlight=False)
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
        _open_browser(url)

    tools = login(server, show)
    consoles.err.print(f"logged in to '{name}' ({tools} tools)", highlight=False)


@app.command("logout")
def logout_cmd(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The HTTP server: [mcp.NAME] in the config.")],
    config: ConfigOpt = None,
) -> None:
    """Forget the token `mcp login` kept for a server."""
    from skillchat.mcp.tokens import TokenFile

    server = _http_server(ctx, name, config)
    forgot = TokenFile(name, server.url or "").forget()
    said = f"logged out of '{name}'" if forgot else f"no login kept for '{name}'"
    consoles_of(ctx).err.print(said, highlight=False)


def _http_server(ctx: typer.Context, name: str, config: Any) -> Any:
    settings = load(ctx, config)
    server = settings.mcp.servers.get(name)
    if server is None:
        known = ", ".join(settings.mcp.servers) or "none configured"
        raise UsageError(f"no [mcp.{name}] in the config ({known})")
    if server.url is None:
        raise UsageError(f"[mcp.{name}] is a stdio server: only an HTTP server has a login")
    return server


def _open_browser(url: str) -> None:
    """A browser, only where the user has one: `$BROWSER`, or a desktop session."""
    import os

    if any(os.environ.get(v) for v in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")):
        import webbrowser

        with suppress(webbrowser.Error):
            webbrowser.open(url)
