"""Installing and removing a whole plugin (skills/plugins.py reads one).

`skills add` finds a plugin manifest at the top of its source and installs all of it:

- the plugin's folder, whole, to `~/.agents/plugins/NAME` (its `${PLUGIN_ROOT}`),
  made read-only: its server and skills run what was shown, not what a run rewrote;
- each skill, copied into the skills folder and locked as any installed skill;
- its MCP servers into `plugin-servers.json` beside the config file
  (plugin_servers.py), off until `skillchat mcp enable NAME`;
- a private `${PLUGIN_DATA}` folder, `<user data dir>/plugins/NAME`, kept across
  updates and deleted by `skills remove`;
- and a `plugins` record in the lock naming all of it.

Each step that fails takes back the ones before it: a plugin is there whole or not.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillchat import plugin_servers
from skillchat.errors import InstallError
from skillchat.skills import plugins
from skillchat.skills.lock import Lock, lock_path, record_for


def data_root() -> Path:
    """Where each plugin's `${PLUGIN_DATA}` folder is made: the user's data dir."""
    from skillchat.sections import user_data_dir

    return user_data_dir() / "plugins"


def in_sandbox(skill_root: Path, skill: str) -> tuple[dict[str, str], list[tuple[Path, str, bool]]]:
    """What a command of `skill` (installed at `skill_root`) gets when a plugin
    brought it: PLUGIN_ROOT and PLUGIN_DATA, and the binds that show them (the
    plugin read-only, its data writable). Nothing for any other skill."""
    from skillchat.errors import LockError

    target = skill_root.parent
    try:
        installed = Lock.load(lock_path(target)).plugins
    except LockError:
        return {}, []
    name = next((p for p, r in installed.items() if skill in r["skills"]), None)
    if name is None or skill_root != target / skill:
        return {}, []
    return mounts(target.parent / "plugins" / name, name)


def mounts(root: Path, name: str) -> tuple[dict[str, str], list[tuple[Path, str, bool]]]:
    """PLUGIN_ROOT and PLUGIN_DATA of the plugin `name` installed at `root`, and the
    binds that show them (the plugin read-only, its data writable); nothing when
    either folder is missing or a symlink."""
    from skillchat.mounts import PLUGIN_DATA_MOUNT, PLUGIN_MOUNT

    data = data_root() / name
    if root.is_symlink() or not root.is_dir() or data.is_symlink() or not data.is_dir():
        return {}, []
    env = {"PLUGIN_ROOT": PLUGIN_MOUNT, "PLUGIN_DATA": PLUGIN_DATA_MOUNT}
    return env, [(root, PLUGIN_MOUNT, False), (data, PLUGIN_DATA_MOUNT, True)]


def plugins_dir(target: Path) -> Path:
    """Where plugins' folders go, beside the skills folder; refused when it (or the
    folder that holds both) is a symlink: an install must land where it says."""
    here = target.parent / "plugins"
    for step in (target.parent, here):
        if os.path.islink(step):
            raise InstallError(f"{step} is a symlink: plugins are not installed through it")
    return here


def stage(root: Path, manifest: str, stage_dir: Path, source_path: str) -> tuple[Any, list[Any]]:
    """Read the plugin staged at `root` and stage a copy of each of its skills
    beside it, as staged.Candidate; the plugin and the candidates."""
    from skillchat.errors import TrustError
    from skillchat.skills.staged import Candidate

    plugin = plugins.read(root, manifest)
    try:
        plugin.digest = record_for(root)["digest"]
    except TrustError as exc:  # over the bounds a folder may hold
        raise InstallError(f"plugin {plugin.name}: {exc}".replace(str(root), plugin.name)) from None
    if not plugin.skills and not plugin.servers:
        raise InstallError(f"plugin {plugin.name} holds no skill and no MCP server")
    candidates = []
    for rel in plugin.skills:
        name = os.path.basename(rel)
        if os.path.lexists(stage_dir / name):
            raise InstallError(f"plugin {plugin.name} holds two skills named '{name}'")
        shutil.copytree(root / rel, stage_dir / name, symlinks=True)
        candidates.append(Candidate(f"{source_path}/{rel}".strip("/"), stage_dir / name))
    return plugin, candidates


def check(
    prepared: Any, target: Path, configured: set[str], servers_file: Path, updating: bool = False
) -> None:
    """Refuse, before anything is written, a plugin whose name or servers' names
    are taken (its skills' names: staged.collisions); an update may reuse its own."""
    plugin = prepared.plugin
    lock = Lock.load(lock_path(target))
    here = plugin.name in lock.plugins or os.path.lexists(plugins_dir(target) / plugin.name)
    if here and not updating:
        raise InstallError(f"plugin '{plugin.name}' is already installed (skills remove it first)")
    servers = plugin_servers.load(servers_file)
    mine = {s for s, r in servers.items() if updating and r["plugin"] == plugin.name}
    taken = (configured - mine) | (set(servers) - mine)  # `configured` holds the enabled
    for name in plugin.servers:
        if name in taken:
            raise InstallError(f"plugin {plugin.name}: an MCP server named '{name}' is configured")


def _read_only(root: Path) -> None:
    """Take every write bit off the plugin's folder (execute bits stay). Done once it is
    in place: a folder moved to another parent must be writable (its `..` changes), so
    as a normal user a read-only one cannot be renamed out of its staging folder."""
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & 0o555)
        os.chmod(folder, 0o555)


def _delete(root: Path) -> None:
    """Delete a plugin's read-only folder: each folder writable again first."""
    if not os.path.lexists(root):
        return
    if not root.is_symlink():  # a link is renamed away, never followed
        for folder, _, _ in os.walk(root):
            os.chmod(folder, 0o755)
    aside = Path(tempfile.mkdtemp(dir=root.parent, prefix=".skillchat-remove-"))
    os.rename(root, aside / root.name)
    shutil.rmtree(aside, ignore_errors=True)


def install(
    prepared: Any, target: Path, ref: str | None, servers_file: Path, data_root: Path
) -> list[Path]:
    """Install the plugin of `prepared` whole (see the module doc); the skill folders."""
    from skillchat.skills import install as skill_install

    plugin = prepared.plugin
    home = plugins_dir(target)
    home.mkdir(parents=True, exist_ok=True)
    root, data = home / plugin.name, data_root / plugin.name
    staging = Path(tempfile.mkdtemp(dir=home, prefix=".skillchat-add-"))
    shutil.copytree(plugin.root, staging / plugin.name, symlinks=True)
    servers_before = plugin_servers.load(servers_file)
    new_data = not os.path.lexists(data)  # an update keeps the old one
    moved: list[Path] = []
    try:
        moved = skill_install.install(prepared, target, ref)
        os.rename(staging / plugin.name, root)
        _read_only(root)
        data.mkdir(parents=True, exist_ok=True, mode=0o700)
        servers = dict(servers_before)
        for name, server in plugin.servers.items():
            servers[name] = plugins.resolved(server, plugin.name, root, data)
        plugin_servers.save(servers_file, servers)
        lock = Lock.load(lock_path(target))
        lock.plugins[plugin.name] = {
            "source": prepared.source.shown,
            "ref": ref,
            "commit": prepared.commit,
            "path": prepared.source.path,
            "kind": plugin.kind,
            "version": plugin.version,
            "root": str(root),
            "data": str(data),
            "digest": plugin.digest,
            "skills": [c.name for c in prepared.skills],
            "servers": sorted(plugin.servers),
            "hooks": plugin.hooks,  # run once trusted, while as recorded (hooks/plugin_hooks.py)
            "installed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        lock.save()
    except BaseException:
        for folder in moved:
            skill_install.remove(target, folder.name)
        _delete(root)
        if new_data:
            _delete(data)
        plugin_servers.save(servers_file, servers_before)
        raise
    finally:
        _delete(staging / plugin.name)
        shutil.rmtree(staging, ignore_errors=True)
    return moved


def remove(
    target: Path, name: str, servers_file: Path, data_root: Path, keep_data: bool = False
) -> list[str]:
    """Take the plugin `name` away: its servers first (nothing starts them again),
    its skills, its folder, its data, and last its lock record (an interrupted
    remove is finished by running it again). What was removed, one line each."""
    from skillchat.skills import install as skill_install

    record = Lock.load(lock_path(target)).plugins[name]
    root = plugins_dir(target) / name  # refused through a symlink before anything goes
    done = []
    servers = plugin_servers.load(servers_file)
    gone = [s for s, r in servers.items() if r["plugin"] == name]
    plugin_servers.save(servers_file, {s: r for s, r in servers.items() if s not in gone})
    done += [f"MCP server {s} (from {servers_file})" for s in gone]
    locked = Lock.load(lock_path(target)).skills
    for skill in record["skills"]:
        if skill in locked:
            skill_install.remove(target, skill)
            done.append(f"skill {skill}")
    _delete(root)
    done.append(f"plugin folder {root}")
    data = data_root / name  # never the lock's word: a path there could be anything
    if os.path.lexists(data) and not keep_data:
        _delete(data)
        done.append(f"its data folder {data} (deleted, with what its servers and skills kept)")
    lock = Lock.load(lock_path(target))
    lock.plugins.pop(name, None)
    lock.save()
    return done


def update(
    prepared: Any, target: Path, servers_file: Path, data_root: Path
) -> tuple[list[Path], list[str]]:
    """Replace the installed plugin with `prepared` (read and checked whole before
    this), keeping its data. A server whose record is the same as the one the user
    enabled stays on; any other is off until enabled again (plugin_servers.py). The
    skills' folders, and the servers now off that were on."""
    name = prepared.plugin.name
    record = Lock.load(lock_path(target)).plugins[name]
    before = plugin_servers.load(servers_file)
    remove(target, name, servers_file, data_root, keep_data=True)
    moved = install(prepared, target, record["ref"], servers_file, data_root)
    servers = plugin_servers.load(servers_file)
    off = []
    for server, old in before.items():
        if old["plugin"] != name or not plugin_servers.is_enabled(old):
            continue
        if server in servers and plugin_servers.digest(servers[server]) == old["enabled"]:
            servers[server]["enabled"] = old["enabled"]
        else:
            off.append(server)
    plugin_servers.save(servers_file, servers)
    return moved, off


def restore(target: Path, servers_file: Path, data_root: Path, work: Path) -> list[str]:
    """`skills sync`'s part for plugins: each locked plugin whose folder is missing
    fetched at its locked commit, held to the lock's digest, and put back read-only
    with its data folder and its servers (off, as at install); its skills sync as
    skills. A line per plugin."""
    from skillchat.skills.install import prepare
    from skillchat.skills.sync import source_of

    lines = []
    for i, (name, record) in enumerate(sorted(Lock.load(lock_path(target)).plugins.items())):
        root = plugins_dir(target) / name
        if os.path.lexists(root):
            lines.append(f"plugin {name}: in place")
            continue
        (sub := work / str(i)).mkdir()
        prepared = prepare(source_of(record, record["commit"] or record["ref"]), sub, [], False)
        plugin = prepared.plugin
        if plugin is None or plugin.name != name or plugin.digest != record["digest"]:
            raise InstallError(f"plugin {name}: the source no longer holds what the lock says")
        root.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=root.parent, prefix=".skillchat-sync-"))
        try:
            shutil.copytree(plugin.root, staging / name, symlinks=True)
            os.rename(staging / name, root)
            _read_only(root)
        finally:
            _delete(staging / name)
            shutil.rmtree(staging, ignore_errors=True)
        (data_root / name).mkdir(parents=True, exist_ok=True, mode=0o700)
        servers = plugin_servers.load(servers_file)
        for server, spec in plugin.servers.items():
            if server not in servers:
                servers[server] = plugins.resolved(spec, name, root, data_root / name)
        plugin_servers.save(servers_file, servers)
        lines.append(f"plugin {name}: installed (its servers off until enabled)")
    return lines
