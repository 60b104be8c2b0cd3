"""What `run_command` asks before a skill's command runs: does its script declare
packages (Python's, or Node's in a package.json), is their environment ready, may it
be installed now (the user's consent, as for commands), and what the run then mounts.

The environment is mounted read-only at /opt/skillchat/env and its bin/ comes first
on PATH, so `python`, `python3` and the environment's scripts are its own; the run
keeps the network off (unless `--allow-network`): everything was fetched before.
A Node environment's node_modules is mounted read-only at /node_modules, where
Node finds it from any script (skillchat/sandbox/envs/npm_install.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.errors import EnvRefused, InstallFailed, RefusedDeclaration
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.envs.declared import (
    Declaration,
    declaration,
    python_satisfies,
    script_of,
)
from skillchat.sandbox.envs.install import (
    ENV_MOUNT,
    InstallLimits,
    ensure,
    sandbox_python,
)
from skillchat.sandbox.envs.node import (
    NODE_SUFFIXES,
    NodeDeclaration,
    configured_registry,
    is_node_command,
    node_declaration,
)
from skillchat.sandbox.envs.npm_install import (
    NODE_RUN_ENV,
    ensure_node,
    node_binds,
    node_env_key,
)
from skillchat.sandbox.envs.resolve import Resolution, resolve_node, resolve_python
from skillchat.sandbox.envs.store import EnvStore, Record, env_key, fingerprint
from skillchat.sandbox.layout import PATH


@dataclass(frozen=True)
class InstallRequest:
    """What the user is asked before a first install."""

    skill: str
    packages: tuple[str, ...]
    sources: tuple[str, ...]
    kind: str = "python"  # or "node": npm's packages
    # What the packages resolve to (versions, sizes): asked for by a front end that
    # shows the user a card, as it costs a trip to the index (envs/resolve.py).
    resolve: Callable[[], Resolution] = field(default=Resolution, compare=False)

    def describe(self) -> str:
        return (
            f"{', '.join(self.packages)} for skill {self.skill} "
            f"(declared in {'; '.join(self.sources)})"
        )


InstallConsent = Callable[[InstallRequest], bool]
# Shows an install as it goes: entered around it, gives the sink uv's lines.
Progress = Callable[[InstallRequest], AbstractContextManager[Callable[[str], None]]]


@contextmanager
def _quiet(request: InstallRequest) -> Iterator[Callable[[str], None]]:
    yield lambda line: None


@dataclass
class EnvUse:
    """What a run adds for its skill's environment (nothing when none is declared)."""

    binds: tuple[tuple[Path, str, bool], ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class SkillEnvs:
    """The environments of one chat's skills."""

    def __init__(
        self,
        store: EnvStore,
        tools: Tools,
        roots: Callable[[], Mapping[str, Path]],
        overrides: Mapping[str, tuple[str, ...]],
        consent: InstallConsent,
        *,
        progress: Progress | None = None,
        limits: InstallLimits | None = None,
    ) -> None:
        self.store = store
        self.tools = tools
        self.roots = roots
        self.overrides = overrides
        self.consent = consent
        self.progress = progress or _quiet
        self.limits = limits or InstallLimits()
        self.checked: set[str] = set()  # environments whose fingerprint matched

    def node_declared(self, skill: str | None, command: str) -> tuple[str, NodeDeclaration] | None:
        """The skill and the package.json of the Node script the command runs, when
        the command runs Node and the skill has one."""
        roots = self.roots()
        name, script = script_of(command, skill, roots)
        if name is None or name not in roots or not is_node_command(script, command):
            return None
        try:
            found = node_declaration(name, roots[name], script, configured_registry(os.environ))
        except RefusedDeclaration as exc:
            message = f"cannot prepare skill {name}'s packages: {exc}"
            raise EnvRefused("NOT_ALLOWED", message) from None
        return (name, found) if found is not None and found.packages else None

    def _prepare_node(self, name: str, wanted: NodeDeclaration) -> EnvUse:
        notes: list[str] = []
        record = self._checked(node_env_key(wanted), notes)
        if record is None:
            request = InstallRequest(
                name, wanted.packages, wanted.sources, "node", lambda: resolve_node(wanted)
            )
            record = self._install(
                request,
                lambda sink: ensure_node(
                    self.store, wanted, self.tools, limits=self.limits, progress=sink
                ),
                notes,
            )
        return EnvUse(
            binds=node_binds(self.store.path(record.key)), env=dict(NODE_RUN_ENV), notes=notes
        )

    def _checked(self, key: str, notes: list[str]) -> Record | None:
        """The ready environment `key` when its files are as installed (checked once
        per chat); a changed one is removed, to be made again."""
        record = self.store.ready(key)
        if record is not None and record.key not in self.checked:
            if fingerprint(self.store.path(record.key)) != record.fingerprint:
                self.store.remove(record.key)
                notes.append("its environment had changed since it was installed")
                return None
            self.checked.add(record.key)
        return record

    def _install(
        self,
        request: InstallRequest,
        make: Callable[[Callable[[str], None]], tuple[Record, bool]],
        notes: list[str],
    ) -> Record:
        """Ask, then install with progress shown; EnvRefused when not allowed or failed."""
        if not self.consent(request):
            raise EnvRefused(
                "NOT_ALLOWED",
                f"not allowed: the command needs {request.describe()} installed, and "
                "installing needs the user's consent: skillchat ask --allow-install "
                "(or `allow_install = true` under [run] in the config)",
            )
        try:
            with self.progress(request) as sink:
                record, made = make(sink)
        except InstallFailed as exc:
            raise EnvRefused("INSTALL_FAILED", str(exc)) from None
        if made:
            notes.append(_installed_note(record))
        return record

    def declared(self, skill: str | None, command: str) -> tuple[str, Declaration] | None:
        """The skill the command runs a script of, and what that script declares."""
        roots = self.roots()
        name, script = script_of(command, skill, roots)
        if name is None or name not in roots:
            return None
        try:
            found = declaration(name, roots[name], script, self.overrides.get(name, ()))
        except RefusedDeclaration as exc:
            message = f"cannot prepare skill {name}'s packages: {exc}"
            raise EnvRefused("NOT_ALLOWED", message) from None
        return name, found

    def prepare(self, skill: str | None, command: str) -> EnvUse:
        """The environment for this command, installed first if the user agrees."""
        node = self.node_declared(skill, command)
        if node is not None:
            return self._prepare_node(*node)
        script = script_of(command, skill, self.roots())[1]
        if script is not None and script.suffix in NODE_SUFFIXES:
            return EnvUse()  # a Node script without a package.json: no Python for it
        found = self.declared(skill, command)
        if found is None or not found[1].packages:
            return EnvUse()
        name, wanted = found
        python = sandbox_python()
        if not python_satisfies(python, wanted.requires_python):
            raise EnvRefused(
                "NOT_ALLOWED",
                f"{wanted.sources[0]} requires Python {wanted.requires_python}; the sandbox "
                f"has {'.'.join(map(str, python))}",
            )
        notes: list[str] = []
        record = self._checked(env_key(wanted.packages, python), notes)
        if record is None:
            request = InstallRequest(
                name,
                wanted.packages,
                wanted.sources,
                resolve=lambda: resolve_python(
                    self.store, wanted.packages, self.tools, self.limits
                ),
            )
            record = self._install(
                request,
                lambda sink: ensure(
                    self.store, wanted.packages, self.tools, limits=self.limits, progress=sink
                ),
                notes,
            )
        return EnvUse(
            binds=((self.store.path(record.key), ENV_MOUNT, False),),
            env={"PATH": f"{ENV_MOUNT}/bin:{PATH}", "VIRTUAL_ENV": ENV_MOUNT},
            notes=notes,
        )


def _installed_note(record: Record) -> str:
    return (
        f"installed {record.summary()} in {record.duration_ms / 1000:.1f} s, "
        f"fetched {_size(record.fetched_bytes)}"
    )


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    return f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"
