"""`skillchat skills deps [NAME]`: what each skill's scripts declare (Python
packages, and Node's in a package.json), where it was
found, whether its environment is ready (and its size), and what cannot be
installed and why. `--install` prepares the environments ahead (for offline use and
CI; running the command is the consent), `--remove` removes NAME's, `--prune`
removes every environment no discovered skill declares and leftovers of crashed
installs."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt, SkillsDirOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.skills_cmd import app, find_skill, settings_and_registry
from skillchat.errors import InstallFailed, RefusedDeclaration, UsageError
from skillchat.ui import safe
from skillchat.ui.console import Consoles

MAX_SCRIPTS = 200  # .py files looked at per skill for PEP 723 blocks


def _declarations(name: str, root: Path, override: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every declaration of one skill: the skill-wide one, and each script's own."""
    from skillchat.sandbox.envs.declared import declaration, read_pep723

    rows: list[dict[str, Any]] = []
    folder = root / "scripts"
    scripts = sorted(folder.glob("*.py"))[:MAX_SCRIPTS] if folder.is_dir() else []
    for script in [None, *scripts]:
        try:
            if script is not None and read_pep723(root, script, script.name) is None:
                continue
            found = declaration(name, root, script, override)
        except RefusedDeclaration as exc:
            rows.append({"skill": name, "packages": [], "sources": [], "refused": str(exc)})
            continue
        if found.packages:
            rows.append(
                {"skill": name, "packages": list(found.packages), "sources": list(found.sources)}
            )
    return rows + _node_declarations(name, root)


def _node_declarations(name: str, root: Path) -> list[dict[str, Any]]:
    """The skill's package.json (at its root, else in `scripts/`), as a row whose
    `node` entry is the declaration itself (not shown)."""
    import os

    from skillchat.sandbox.envs.node import configured_registry, node_declaration
    from skillchat.sandbox.envs.npm_install import node_env_key

    try:
        found = node_declaration(name, root, None, configured_registry(os.environ))
    except RefusedDeclaration as exc:
        return [{"skill": name, "kind": "node", "packages": [], "sources": [], "refused": str(exc)}]
    if found is None or not found.packages:
        return []
    row = {"skill": name, "kind": "node", "packages": list(found.packages)}
    return [row | {"sources": list(found.sources), "key": node_env_key(found), "node": found}]


@app.command("deps", short_help="Packages skills' scripts declare, and their environments.")
def deps_cmd(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Only this skill.")] = None,
    install: Annotated[
        bool, typer.Option("--install", help="Prepare the environments now.")
    ] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Remove NAME's environments.")] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="Remove environments no skill declares.")
    ] = False,
    skills_dir: SkillsDirOpt = None,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List what skills' scripts need; prepare, remove or prune their environments."""
    from skillchat.sandbox.envs.install import ensure, sandbox_python
    from skillchat.sandbox.envs.npm_install import ensure_node
    from skillchat.sandbox.envs.store import EnvStore, env_key

    if remove and not name:
        raise UsageError("--remove needs a skill NAME")
    consoles = consoles_of(ctx)
    settings, registry = settings_and_registry(ctx, config, skills_dir)
    store = EnvStore(settings.storage.envs_folder())
    skills = [find_skill(registry, name)] if name else list(registry.skills.values())
    rows: list[dict[str, Any]] = []
    for skill in skills:
        rows += _declarations(skill.name, skill.root, settings.run.packages.get(skill.name, ()))
    python = sandbox_python()
    for row in rows:
        if "refused" not in row and "key" not in row:
            row["key"] = env_key(tuple(row["packages"]), python)
    failed = False
    if install:
        tools = _tools()
        progress = partial(_progress, consoles)
        for row in rows:
            if "key" in row:
                try:
                    if "node" in row:
                        ensure_node(store, row["node"], tools, progress=progress)
                    else:
                        ensure(store, tuple(row["packages"]), tools, progress=progress)
                except InstallFailed as exc:
                    row["error"] = str(exc)
                    failed = True
    if remove:
        for row in rows:
            if "key" in row and store.remove(row["key"]):
                consoles.err.print(safe.text(f"removed the environment of {row['skill']}"))
    if prune:
        every = [
            r
            for s in registry.skills.values()
            for r in _declarations(s.name, s.root, settings.run.packages.get(s.name, ()))
        ]
        keep = {
            r.get("key") or env_key(tuple(r["packages"]), python)
            for r in every
            if "refused" not in r
        }
        for gone in store.prune(keep):
            consoles.err.print(safe.text(f"removed {gone}"))
    for row in rows:
        row.pop("node", None)
        record = store.ready(row["key"]) if "key" in row else None
        row["ready"] = record is not None
        if record is not None:
            row["size_bytes"] = record.size_bytes
            row["installed"] = record.installed
    _show(consoles, rows, json_out)
    if failed or (install and any("refused" in r for r in rows)):
        raise typer.Exit(1)


def _tools() -> Any:
    from skillchat.sandbox.detect import probe

    status = probe()
    if not status.available or status.tools is None:
        raise UsageError(f"no sandbox to install in: {status.reason}")
    return status.tools


def _progress(consoles: Consoles, line: str) -> None:
    consoles.err.print(safe.text(f"  install: {line}", style="muted"))


def _show(consoles: Consoles, rows: list[dict[str, Any]], json_out: bool) -> None:
    if json_out:
        print(safe.json_text(rows, indent=1))
        return
    if not rows:
        consoles.err.print("no skill declares packages")
        return
    for row in rows:
        if "refused" in row:
            state = f"refused: {row['refused']}"
        elif "error" in row:
            state = f"failed: {row['error']}"
        elif row["ready"]:
            state = f"ready, {row['size_bytes'] / 1e6:.1f} MB"
        else:
            state = "not installed"
        line = "\t".join(
            [row["skill"], " ".join(row["packages"]), "; ".join(row["sources"]), state]
        )
        print(safe.clean(line))
