"""The options every command with a config takes (`--config`, `--skills-dir`,
`--json`, `--no-mcp`, declared in cli/opts.py), as Typer takes them. The run's
`Consoles` and the settings a command runs on are cli/invocation.py's; the options
of a chat session, and how `ask`, the REPL and eval open one, cli/session_options.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from skillchat.cli.opts import CONFIG, JSON, NO_MCP, SKILLS_DIR

ConfigOpt = Annotated[Path | None, CONFIG.typer()]
SkillsDirOpt = Annotated[list[Path] | None, SKILLS_DIR.typer()]
JsonOpt = Annotated[bool, JSON.typer()]
NoMcpOpt = Annotated[bool, NO_MCP.typer()]
