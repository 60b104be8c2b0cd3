"""What an install would bring, for the consent card: each package with the version
it resolves to and the size of its download, before anything is installed.

Python: `uv pip compile --format pylock.toml` in the install's sandbox (the same
index, variables, options and bounds as the install: wheels only (`--no-build`), no
configuration file read, a cache of its own in RAM; nothing else writable but a
temp folder). So it runs no package's code, and may run before the user is asked
(the card shows what it found). It resolves without making an environment and writes each
wheel's size: about 0.6 s on a warm cache against 0.8-1.1 s for
`uv pip install --dry-run`, which also needs an environment to install into, and
gives no sizes. Node: the versions a skill's lockfile pins (read as data, no
network); without a lockfile the card shows the ranges.

A resolution that fails is not an error here: the card says why, and the install,
if the user agrees, fails with the same reason.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from dataclasses import dataclass
from typing import Any

import tomli_w

from skillchat.errors import InstallFailed
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.envs.install import (
    CACHE_MOUNT,
    SYSTEM_PYTHON,
    UV_MOUNT,
    UV_SAFE,
    InstallLimits,
    install_spec,
    run_install,
    sandbox_python,
    uv_access,
)
from skillchat.sandbox.envs.node import NodeDeclaration
from skillchat.sandbox.envs.store import EnvStore
from skillchat.sandbox.runner import NOBODY

RESOLVE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Resolved:
    """One package an install would bring."""

    name: str
    version: str
    size: int | None = None  # bytes to download, when the index says


@dataclass(frozen=True)
class Resolution:
    """The packages, or why they could not be resolved."""

    packages: tuple[Resolved, ...] = ()
    problem: str | None = None

    def download(self) -> int | None:
        """Bytes to download in all, when every size is known."""
        sizes = [p.size for p in self.packages]
        return sum(s for s in sizes if s is not None) if sizes and None not in sizes else None


def resolve_python(
    store: EnvStore, packages: tuple[str, ...], tools: Tools, limits: InstallLimits
) -> Resolution:
    """What `packages` resolve to on the configured index, wheels only."""
    import os

    staging = store.staging("resolve")  # inside the envs folder: the sandbox makes
    work = staging / "work"  # its scratch's parent private, which /tmp must never be
    work.mkdir()
    try:
        # The requirements as a project's `dependencies`: TOML strings, PEP 508 data
        # by definition (uv pip compile reads files only, and a requirements file
        # would be read for options too).
        project = {"name": "skillchat-resolve", "version": "0", "dependencies": list(packages)}
        (work / "pyproject.toml").write_text(tomli_w.dumps({"project": project}))
        binds, variables, no_index = uv_access(limits)
        if os.geteuid() == 0:  # the resolver runs as nobody
            os.chown(work, NOBODY, NOBODY)
        python = ".".join(map(str, sandbox_python()[:2]))
        command = (
            f"{UV_MOUNT} pip compile {UV_SAFE} --quiet --format pylock.toml "
            f"--python {SYSTEM_PYTHON} --python-version {python} "
            f"{'--no-index ' if no_index else ''}"
            "-o /scratch/pylock.toml /scratch/pyproject.toml"
        )
        timeout = min(limits.timeout_s, RESOLVE_TIMEOUT_S)
        bounded = InstallLimits(
            timeout_s=timeout, http_timeout_s=limits.http_timeout_s, max_mb=limits.max_mb
        )
        spec = install_spec(work, binds, bounded, CACHE_MOUNT)
        try:
            run_install(tools, spec, command, variables, bounded, lambda line: None, "them")
            lock = tomllib.loads((work / "pylock.toml").read_text())
        except InstallFailed as exc:
            return Resolution(problem=str(exc).removeprefix("installing them failed: "))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            return Resolution(problem=f"uv wrote no readable lock: {exc}")
        return Resolution(tuple(_pylock_packages(lock)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pylock_packages(lock: dict[str, Any]) -> list[Resolved]:
    out = []
    for entry in lock.get("packages") or []:
        if not isinstance(entry, dict):
            continue
        wheels = entry.get("wheels") or []
        sizes = [w.get("size") for w in wheels if isinstance(w, dict)]
        size = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], int) else None
        out.append(Resolved(str(entry.get("name", "?")), str(entry.get("version", "?")), size))
    return out


def resolve_node(found: NodeDeclaration) -> Resolution:
    """The versions the skill's lockfile pins (not devDependencies), else nothing."""
    if found.lock is None:
        return Resolution(problem="no lockfile: the versions are chosen at the install")
    data = json.loads(found.lock)
    out = []
    for path, entry in sorted((data.get("packages") or {}).items()):
        if path and isinstance(entry, dict) and not entry.get("dev"):
            out.append(Resolved(path.rsplit("node_modules/", 1)[-1], str(entry.get("version"))))
    return Resolution(tuple(out))
