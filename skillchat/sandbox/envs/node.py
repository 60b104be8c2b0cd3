"""What a command's Node script declares: a `package.json` beside the script, else
at the skill's root (a command naming no script: the root, then `scripts/`), with
its lockfile when there is one.

Only packages from the registry are accepted: every dependency's spec must be a
version range or a tag (`^9.6.1`, `1.x`, `latest`). A spec npm would fetch from
elsewhere or make from a folder (`file:`, `link:`, `git+...`, `github:`,
`user/repo`, a URL, `workspace:`, an `npm:` alias) is refused with one line naming
the key and the file. Every lockfile entry is checked, whatever the lockfile's
version (v1's nested `dependencies`, v2/v3's `packages`): its `resolved` must be on
the registry, its `version` a plain version (npm installs a v1 entry whose
`version` is a URL, a path or a git spec from there), and none may be linked to a
folder.

The install never sees the skill's package.json itself: skillchat writes one with
only its dependency tables (`installed_manifest`), so the skill's own `scripts`
(`preinstall`, `prepare`...) are not there to run, and npm runs with
`--ignore-scripts` for every package below it (skillchat/sandbox/envs/npm_install.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.errors import RefusedDeclaration
from skillchat.sandbox.envs.declared import (
    MAX_DECLARATION_BYTES,
    escaped,
    read_in_skill,
    shown_path,
)

NODE_SUFFIXES = (".js", ".mjs", ".cjs")
NODE_PROGRAMS = ("node", "nodejs", "npx")
LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")
# The tables of package.json that name packages to install. devDependencies are
# kept so a lockfile still matches, and omitted at the install (`--omit=dev`).
DEPENDENCY_TABLES = ("dependencies", "optionalDependencies", "devDependencies")
DEFAULT_REGISTRY = "https://registry.npmjs.org/"
_RANGE = re.compile(r"^[A-Za-z0-9.+^~<>=| *-]*$")
_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
# What a lockfile entry's `version` is when the package came from a registry.
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class NodeDeclaration:
    """What one command's Node script needs: the dependency tables skillchat writes
    into the install's package.json, the lockfile's text, and where they came from."""

    tables: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    lock: str | None
    sources: tuple[str, ...]

    @property
    def packages(self) -> tuple[str, ...]:
        """`name@range` of what is installed (not devDependencies), for the card."""
        return tuple(
            f"{name}@{spec or '*'}"
            for table, items in self.tables
            if table != "devDependencies"
            for name, spec in items
        )

    def installed_manifest(self) -> str:
        """The package.json the install runs with: the dependency tables only."""
        data: dict[str, Any] = {"name": "skillchat-env", "version": "0.0.0", "private": True}
        data |= {table: dict(items) for table, items in self.tables}
        return json.dumps(data, indent=1) + "\n"


def node_key(found: NodeDeclaration, node: str) -> str:
    """The environment's name: the same tables and lockfile on the same Node major
    version and machine, one name (`n` first: never the key of a Python set)."""
    canonical = json.dumps(
        {
            "tables": [[t, sorted(items)] for t, items in found.tables],
            "lock": hashlib.sha256((found.lock or "").encode()).hexdigest(),
            "node": node.split(".")[0],
            "machine": platform.machine(),
        },
        sort_keys=True,
    )
    return "n" + hashlib.sha256(canonical.encode()).hexdigest()[:23]


def is_node_command(script: Path | None, command: str) -> bool:
    """Whether the command runs Node: its script is a .js/.mjs/.cjs file, or, when
    it names no script of the skill, one of its words is `node` or `npx`."""
    if script is not None:
        return script.suffix in NODE_SUFFIXES
    return any(os.path.basename(word) in NODE_PROGRAMS for word in command.split())


def node_declaration(
    skill: str, root: Path, script: Path | None, registry: str = DEFAULT_REGISTRY
) -> NodeDeclaration | None:
    """The package.json (and lockfile) for a command of `skill` running `script`, or
    None when there is none."""
    places = [script.parent, root] if script is not None else [root, root / "scripts"]
    for folder in dict.fromkeys(places):
        manifest = folder / "package.json"
        if manifest.is_file():
            return _read(skill, root, folder, manifest, registry)
    return None


def _read(skill: str, root: Path, folder: Path, manifest: Path, registry: str) -> NodeDeclaration:
    shown = shown_path(skill, root, manifest)
    data = _json(root, manifest, shown)
    if not isinstance(data, dict):
        raise RefusedDeclaration(f"{shown}: not a JSON object")
    tables = []
    for table in DEPENDENCY_TABLES:
        items = data.get(table) or {}
        if not isinstance(items, dict):
            raise RefusedDeclaration(f"{shown}: `{table}` must be an object")
        checked = tuple(
            (name, check_spec(name, spec, f"{shown}: {table}.{name}"))
            for name, spec in items.items()
        )
        if checked:
            tables.append((table, tuple(sorted(checked))))
    sources = [shown]
    lock = None
    for name in LOCKFILES:
        if (folder / name).is_file():
            lock_shown = shown_path(skill, root, folder / name)
            lock_data = _json(root, folder / name, lock_shown)
            check_lock(lock_data, lock_shown, registry)
            lock = json.dumps(lock_data, sort_keys=True)
            sources.append(lock_shown)
            break
    return NodeDeclaration(tuple(tables), lock, tuple(sources))


def check_spec(name: Any, spec: Any, where: str) -> str:
    """A dependency's spec when it is a registry range or tag, else RefusedDeclaration."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise RefusedDeclaration(f"{where}: `{name}` is not a package name")
    if not isinstance(spec, str):
        raise RefusedDeclaration(f"{where}: the version must be a string")
    text = spec.strip()
    lowered = text.lower()
    if lowered.startswith(("file:", "link:", "workspace:", ".", "/", "~")):
        reason = "a local folder or file, not a package from the registry"
    elif lowered.startswith(("git", "github:", "gitlab:", "bitbucket:", "gist:")) or (
        "://" in text or "/" in text
    ):
        reason = "version control or a URL: only packages from the configured registry"
    elif lowered.startswith("npm:"):
        reason = "an alias installs another package than the one named"
    elif not _RANGE.match(text):
        reason = "not a version range skillchat can install"
    else:
        return text
    raise RefusedDeclaration(f'{where}: `"{spec}"` is refused: {reason}')


def check_lock(data: Any, shown: str, registry: str) -> None:
    """Every lockfile entry comes from the registry (the configured one, or npm's,
    which npm maps to the configured one): a plain `version`, a `resolved` there;
    none is linked to a folder."""
    if not isinstance(data, dict):
        raise RefusedDeclaration(f"{shown}: not a JSON object")
    allowed = tuple(dict.fromkeys(r.rstrip("/") + "/" for r in (registry, DEFAULT_REGISTRY)))
    entries: list[tuple[str, Any]] = []
    packages = data.get("packages")
    if isinstance(packages, dict):
        entries += [(f'packages["{k}"]', v) for k, v in packages.items() if k]
    _v1_entries(data.get("dependencies"), "dependencies", entries)
    for where, entry in entries:
        if not isinstance(entry, dict):
            continue
        if entry.get("link"):
            raise RefusedDeclaration(f"{shown}: {where} is refused: linked to a local folder")
        version = entry.get("version")
        if version is not None and not (isinstance(version, str) and _VERSION.match(version)):
            raise RefusedDeclaration(
                f"{shown}: {where}.version `{escaped(str(version))}` is refused: "
                "only packages from the configured registry, at a version"
            )
        resolved = entry.get("resolved")
        if resolved is not None and not (
            isinstance(resolved, str) and resolved.startswith(allowed)
        ):
            raise RefusedDeclaration(
                f"{shown}: {where}.resolved `{escaped(str(resolved))}` is refused: "
                "only packages from the configured registry"
            )


def _v1_entries(deps: Any, where: str, out: list[tuple[str, Any]]) -> None:
    if not isinstance(deps, dict):
        return
    for name, entry in deps.items():
        out.append((f'{where}["{name}"]', entry))
        if isinstance(entry, dict):
            _v1_entries(entry.get("dependencies"), f'{where}["{name}"].dependencies', out)


def _json(root: Path, path: Path, shown: str) -> Any:
    try:
        return json.loads(read_in_skill(root, path, shown, MAX_DECLARATION_BYTES * 50))
    except ValueError as exc:
        raise RefusedDeclaration(f"{shown}: not JSON: {exc}") from None


def configured_registry(environ: Mapping[str, str]) -> str:
    """The registry the user named in npm's variables, else npm's."""
    for name in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if environ.get(name):
            return environ[name]
    return DEFAULT_REGISTRY
