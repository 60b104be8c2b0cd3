"""Options shared by several commands, declared once for Typer; the options every
chat session takes (the REPL's, the root command's in cli/root_cmd.py, and `ask`'s),
each the option of a field of `SessionOptions` (cli/session_open.py), and the
functions of cli/session_open.py for a command Typer runs (they take its context).

A new session option is a field of `SessionOptions`, its option here (in
`_OPTIONS`) and, where it is a setting, its line in `overrides`; if `ask` is to
read it without Typer, its entry in cli/ask_line.py too (tests/test_ask_line.py
fails until it is there). `session_command` gives each command that takes
`options: SessionOptions` the fields as options of its own, in that parameter's
place, and calls it with them gathered.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import fields
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer._types import TyperChoice

from skillchat.backend_table import BACKEND_NAMES

# Named here too (`as`: re-exported) for the commands that import them with the
# options: their home is cli/session_open.py, which imports no Typer.
from skillchat.cli.session_open import OpenChat, Root, consoles_in, load_sourced_in, open_chat_in
from skillchat.cli.session_open import SessionOptions as SessionOptions
from skillchat.cli.session_open import skill_dirs_override as skill_dirs_override

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

# The options of the REPL (`skillchat`) and of `ask`.
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="MODEL",
        help="Model (default gpt-4.1-mini): gpt-4.1, anthropic/claude-sonnet-4-5, "
        "ollama_chat/llama3.1, or a [models.NAME] of the config.",
    ),
]
ApiBaseOpt = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        metavar="URL",
        help="OpenAI-compatible server, e.g. http://localhost:11434/v1 (Ollama).",
    ),
]


# `--backend` takes the backend table's names; Typer refuses anything else as a
# usage error (exit 2). TyperChoice is what Typer makes of an Enum, here of a tuple.
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="Model library to use.",
        show_default=False,
        click_type=TyperChoice(BACKEND_NAMES),
    ),
]
NoToolsOpt = Annotated[
    bool,
    typer.Option("--no-tools", help="Send no tools; a /name skill goes into the system prompt."),
]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the most recent saved chat.")
]
ChatIdOpt = Annotated[
    str | None,
    typer.Option(
        "--chat", metavar="ID", help="Continue the saved chat with this id (or a unique prefix)."
    ),
]
ReplyTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--reply-timeout",
        metavar="SECONDS",
        min=0.001,
        help="Longest one reply may take, however steadily it streams (default 1200).",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens", metavar="N", min=1, help="Most tokens a reply may have (sent to the model)."
    ),
]
WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        metavar="DIR",
        help="Project folder the model may read (read_file) and @path attaches from "
        "(default: the git work tree you are in).",
    ),
]
NoWorkspaceOpt = Annotated[
    bool,
    typer.Option("--no-workspace", help="No workspace, not even the git work tree you are in."),
]
GgufOpt = Annotated[
    Path | None,
    typer.Option(
        "--gguf",
        metavar="FILE",
        help="Run this GGUF model file locally (llama.cpp: skillchat's [local] extra).",
        dir_okay=False,
    ),
]
LocalOpt = Annotated[
    bool,
    typer.Option(
        "--local",
        help="Run the default local model, downloaded once into the cache (no API key).",
    ),
]
ChatTemplateOpt = Annotated[
    Path | None,
    typer.Option(
        "--chat-template",
        metavar="FILE",
        help="Jinja chat template for the local model (default: a tool-capable one).",
        dir_okay=False,
    ),
]

AllowRunOpt = Annotated[
    bool,
    typer.Option(
        "--allow-run",
        help="Run skill commands in the sandbox without asking (`ask` refuses them without it).",
    ),
]
McpOpt = Annotated[
    list[str] | None,
    typer.Option("--mcp", metavar="NAME", help="Use only this [mcp.NAME] server (repeatable)."),
]
NoMcpOpt = Annotated[bool, typer.Option("--no-mcp", help="Start no MCP server.")]
AllowMcpOpt = Annotated[
    bool,
    typer.Option(
        "--allow-mcp",
        help="Call MCP servers' tools without asking (`ask` refuses them without it).",
    ),
]
AllowNetworkOpt = Annotated[
    bool, typer.Option("--allow-network", help="Give sandboxed commands the network.")
]
AllowInstallOpt = Annotated[
    bool,
    typer.Option(
        "--allow-install",
        help="Install the packages a skill's scripts declare, from wheels, in a sandbox.",
    ),
]
AllowWriteOpt = Annotated[
    bool, typer.Option("--allow-write", help="Let sandboxed commands write to the workspace.")
]


F = TypeVar("F", bound=Callable[..., Any])


# Each field of SessionOptions (cli/session_open.py) as Typer reads it: its option.
_OPTIONS: dict[str, Any] = {
    "model": ModelOpt,
    "api_base": ApiBaseOpt,
    "backend": BackendOpt,
    "no_tools": NoToolsOpt,
    "last": ContinueOpt,
    "chat_id": ChatIdOpt,
    "skills_dir": SkillsDirOpt,
    "workspace": WorkspaceOpt,
    "no_workspace": NoWorkspaceOpt,
    "reply_timeout": ReplyTimeoutOpt,
    "max_tokens": MaxTokensOpt,
    "gguf": GgufOpt,
    "local": LocalOpt,
    "chat_template": ChatTemplateOpt,
    "config": ConfigOpt,
    "allow_run": AllowRunOpt,
    "allow_network": AllowNetworkOpt,
    "allow_write": AllowWriteOpt,
    "mcp": McpOpt,
    "no_mcp": NoMcpOpt,
    "allow_mcp": AllowMcpOpt,
}
_FIELDS = tuple(
    inspect.Parameter(
        f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=_OPTIONS[f.name]
    )
    for f in fields(SessionOptions)
)


def session_command(command: F) -> F:
    """`command` as Typer sees it: its `options: SessionOptions` parameter replaced
    by one option per field; called, it gets them back as one `SessionOptions`."""
    own = inspect.signature(command)
    params = [p for p in own.parameters.values() if p.name != "options"]
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    at = list(own.parameters).index("options")
    params = [*params[:at], *_FIELDS, *keyword[at:]]

    @wraps(command)
    def gathered(*args: Any, **kwargs: Any) -> Any:
        options = SessionOptions(**{p.name: kwargs.pop(p.name) for p in _FIELDS})
        return command(*args, options=options, **kwargs)

    gathered.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
    gathered.__annotations__ = {p.name: p.annotation for p in params}
    return gathered  # type: ignore[return-value]


def root_of(ctx: typer.Context) -> Root:
    """The root's `obj` (cli/session_open.py), made when missing."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    obj: Root = root.obj
    return obj


def consoles_of(ctx: typer.Context) -> Consoles:
    """This run's output (cli/session_open.py's `consoles_in`)."""
    return consoles_in(root_of(ctx))


def load(ctx: typer.Context, config: Path | None, **overrides: object) -> Settings:
    """Effective settings for a command: its own `--config`, else the root one.

    Config-file warnings (unknown keys) are shown once, on stderr.
    """
    return load_sourced(ctx, config, **overrides)[0]


def load_sourced(
    ctx: typer.Context, config: Path | None, **overrides: object
) -> tuple[Settings, dict[str, str]]:
    """`load`, and where each value came from (cli/session_open.py)."""
    return load_sourced_in(root_of(ctx), config, **overrides)


def open_chat(
    ctx: typer.Context,
    options: SessionOptions,
    *,
    allow_install: bool = False,
    needs_workspace: str | None = None,
) -> OpenChat:
    """cli/session_open.py's `open_chat_in`, for a command Typer runs."""
    return open_chat_in(
        root_of(ctx), options, allow_install=allow_install, needs_workspace=needs_workspace
    )
