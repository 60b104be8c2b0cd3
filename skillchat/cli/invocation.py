"""What one run of the command line holds, without Typer: the root's `obj` (a dict:
the root's `--config`, `--debug`, and the run's `Consoles`), reached from the
command's context (`Invocation`: Typer's, or `PlainRun` where `ask`'s plain line is
read without Typer, cli/ask_line.py); and what several commands share on it: the
run's `Consoles` and the settings a command runs on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.ui.console import Consoles


class Root(Protocol):
    """The root of a run: its `obj`, None until a command sets it."""

    obj: Any


class Invocation(Protocol):
    """A command's context, as the functions here use it (`typer.Context` is one)."""

    def find_root(self) -> Root: ...


@dataclass
class PlainRun:
    """The run of `ask`'s plain line, which has no Typer context: its own root."""

    obj: dict[str, Any] = field(default_factory=dict)

    def find_root(self) -> PlainRun:
        return self


def skill_dirs_override(dirs: list[Path] | None) -> tuple[str, ...] | None:
    """`--skills-dir` values as the settings override (None when not given). A
    directory that does not exist is a usage error: named on the command line, it
    is a typo, not an optional place like the configured ones."""
    if not dirs:
        return None
    for d in dirs:
        if not d.expanduser().exists():  # one that exists but cannot be listed is reported
            raise UsageError(f"--skills-dir {d}: no such directory")
    return tuple(str(d) for d in dirs)


def consoles_of(ctx: Invocation) -> Consoles:
    """This run's output: one `Consoles` per invocation, made when a command first
    asks and kept on the root context, so the config's warnings, the command's own
    lines and its views share it. Each command passes it on to what prints (nothing
    below cli/ finds a console by itself)."""
    from skillchat.ui.console import Consoles

    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    if "consoles" not in root.obj:
        root.obj["consoles"] = Consoles()
    consoles: Consoles = root.obj["consoles"]
    return consoles


def load(ctx: Invocation, config: Path | None, **overrides: object) -> Settings:
    """Effective settings for a command: its own `--config`, else the root one.

    Config-file warnings (unknown keys) are shown once, on stderr.
    """
    return load_sourced(ctx, config, **overrides)[0]


def load_sourced(
    ctx: Invocation, config: Path | None, **overrides: object
) -> tuple[Settings, dict[str, str]]:
    """`load`, and where each value came from (config.py's `load_with_sources`):
    kept here, by the command line, for `config show` and for which flags win over
    a saved chat's server."""
    from skillchat.config import load_with_sources

    root = ctx.find_root().obj or {}
    settings, sources = load_with_sources(config or root.get("config"), **overrides)
    for message in settings.warnings:
        consoles_of(ctx).warn(message)
    return settings, sources
