"""What several commands share: the options every command with a config takes
(`--config`, `--skills-dir`, `--json`), declared once, the run's `Consoles`, and the
settings a command runs on. The options of a chat session, and how `ask`, the REPL
and eval open one, are cli/session_options.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.ui.console import Consoles

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="Config file (default: $SKILLCHAT_CONFIG, then the user one).",
        dir_okay=False,
    ),
]
SkillsDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--skills-dir",
        metavar="DIR",
        help="Skills directory; repeatable; replaces the configured list (and the bundled skills).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
NoMcpOpt = Annotated[bool, typer.Option("--no-mcp", help="Start no MCP server.")]


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


def consoles_of(ctx: typer.Context) -> Consoles:
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


def load(ctx: typer.Context, config: Path | None, **overrides: object) -> Settings:
    """Effective settings for a command: its own `--config`, else the root one.

    Config-file warnings (unknown keys) are shown once, on stderr.
    """
    return load_sourced(ctx, config, **overrides)[0]


def load_sourced(
    ctx: typer.Context, config: Path | None, **overrides: object
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
