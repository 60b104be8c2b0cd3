"""A chat session's command line: its options, declared once in `SessionOptions`,
and the one way `ask`, the REPL (the root command, cli/app.py) and eval turn them
into settings (`chosen_settings`); `ask` and the REPL go on with `open_chat`
(cli/open_chat.py).

A new session option is a field of `SessionOptions` (its `Opt`, cli/opts.py, in
the annotation) and, where it is a setting, its line in `overrides`: `session_command`
gives each command that takes `options: SessionOptions` the fields as options of
its own, in that parameter's place, and calls it with them gathered. Eval leaves
out the ones its runs have no use for (cli/eval_cmd.py).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, fields, replace
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, get_type_hints

from skillchat.backend_table import BACKEND_NAMES, DEFAULT_THINKING
from skillchat.cli.invocation import Invocation, load_sourced, skill_dirs_override
from skillchat.cli.opts import BARE, CONFIG, NO_MCP, SKILLS_DIR, Opt, typer_hint
from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.config import Settings

ModelOpt = Annotated[
    str | None,
    Opt(
        "--model",
        "-m",
        metavar="MODEL",
        help="Model (default gpt-4.1-mini): gpt-4.1, anthropic/claude-sonnet-4-5, "
        "ollama_chat/llama3.1, or a [models.NAME] of the config.",
    ),
]
ApiBaseOpt = Annotated[
    str | None,
    Opt(
        "--api-base",
        metavar="URL",
        help="OpenAI-compatible server, e.g. http://localhost:11434/v1 (Ollama).",
    ),
]


# `--backend` takes the backend table's names; Typer refuses anything else as a
# usage error (exit 2).
BackendOpt = Annotated[
    str | None,
    Opt(
        "--backend",
        help="Model library to use.",
        choices=BACKEND_NAMES,
    ),
]
NoToolsOpt = Annotated[
    bool,
    Opt("--no-tools", help="Send no tools; a /name skill goes into the system prompt."),
]
ContinueOpt = Annotated[
    bool, Opt("--continue", "-c", help="Continue the last chat started in this folder.")
]
ChatIdOpt = Annotated[
    str | None,
    Opt("--chat", metavar="ID", help="Continue the saved chat with this id (or a unique prefix)."),
]
ReplyTimeoutOpt = Annotated[
    float | None,
    Opt(
        "--reply-timeout",
        metavar="SECONDS",
        min=0.001,
        help="Longest one reply may take, however steadily it streams (default 1200).",
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    Opt(
        "--max-tokens", metavar="N", min=1, help="Most tokens a reply may have (sent to the model)."
    ),
]
ThinkingOpt = Annotated[
    bool,
    Opt(
        "--thinking",
        help="Let the model think first (Anthropic's extended thinking, 8,000 tokens).",
    ),
]
ThinkingBudgetOpt = Annotated[
    int | None,
    Opt(
        "--thinking-budget",
        metavar="TOKENS",
        min=1024,
        help="Extended thinking with this many tokens to think (at least 1,024).",
    ),
]
WorkspaceOpt = Annotated[
    Path | None,
    Opt(
        "--workspace",
        "-w",
        metavar="DIR",
        help="Project folder the model may read (read_file) and @path attaches from "
        "(default: the git work tree you are in).",
    ),
]
NoWorkspaceOpt = Annotated[
    bool,
    Opt("--no-workspace", help="No workspace, not even the git work tree you are in."),
]
GgufOpt = Annotated[
    Path | None,
    Opt(
        "--gguf",
        metavar="FILE",
        help="Run this GGUF model file locally (llama.cpp: skillchat's [local] extra).",
        dir_okay=False,
    ),
]
LocalOpt = Annotated[
    bool,
    Opt(
        "--local",
        help="Run the default local model, downloaded once into the cache (no API key).",
    ),
]
ChatTemplateOpt = Annotated[
    Path | None,
    Opt(
        "--chat-template",
        metavar="FILE",
        help="Jinja chat template for the local model (default: a tool-capable one).",
        dir_okay=False,
    ),
]

AllowRunOpt = Annotated[
    bool,
    Opt(
        "--allow-run",
        help="Run skill commands in the sandbox without asking (`ask` refuses them without it).",
    ),
]
McpOpt = Annotated[
    list[str] | None,
    Opt("--mcp", metavar="NAME", help="Use only this [mcp.NAME] server (repeatable)."),
]
AllowMcpOpt = Annotated[
    bool,
    Opt(
        "--allow-mcp",
        help="Call MCP servers' tools without asking (`ask` refuses them without it).",
    ),
]
AllowElicitOpt = Annotated[
    bool,
    Opt(
        "--allow-elicit",
        help="`ask`, `eval`: answer an MCP server's questions with their defaults "
        "(declined without it; the REPL asks).",
    ),
]
AllowNetworkOpt = Annotated[
    bool, Opt("--allow-network", help="Give sandboxed commands the network.")
]
AllowInstallOpt = Annotated[
    bool,
    Opt(
        "--allow-install",
        help="Install the packages a skill's scripts declare, from wheels, in a sandbox.",
    ),
]
AllowWriteOpt = Annotated[
    bool, Opt("--allow-write", help="Let sandboxed commands write to the workspace.")
]


F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class SessionOptions:
    """What the command line says about the session it opens (None/False: unsaid)."""

    model: ModelOpt = None
    api_base: ApiBaseOpt = None
    backend: BackendOpt = None
    no_tools: NoToolsOpt = False
    last: ContinueOpt = False
    chat_id: ChatIdOpt = None
    skills_dir: Annotated[list[Path] | None, SKILLS_DIR] = None
    workspace: WorkspaceOpt = None
    no_workspace: NoWorkspaceOpt = False
    reply_timeout: ReplyTimeoutOpt = None
    max_tokens: MaxTokensOpt = None
    thinking: ThinkingOpt = False
    thinking_budget: ThinkingBudgetOpt = None
    gguf: GgufOpt = None
    local: LocalOpt = False
    chat_template: ChatTemplateOpt = None
    config: Annotated[Path | None, CONFIG] = None
    allow_run: AllowRunOpt = False
    allow_network: AllowNetworkOpt = False
    allow_write: AllowWriteOpt = False
    mcp: McpOpt = None
    no_mcp: Annotated[bool, NO_MCP] = False
    allow_mcp: AllowMcpOpt = False
    allow_elicit: AllowElicitOpt = False
    bare: Annotated[bool, BARE] = False

    def said(self) -> bool:
        """Whether any option but `--config` was given (they belong after a
        subcommand's name; `--config` is every command's, before it or after)."""
        return replace(self, config=None) != SessionOptions()

    def overrides(self) -> dict[str, object]:
        """The settings these options set, as config.py's `load_settings` takes them
        (None: unset)."""
        return {
            "model": self.model,
            "api_base": self.api_base,
            "backend": self.backend,
            "tools": False if self.no_tools else None,
            "skill_dirs": skill_dirs_override(self.skills_dir),
            "workspace": str(self.workspace) if self.workspace else None,
            "reply_timeout": self.reply_timeout,
            "max_tokens": self.max_tokens,
            "thinking_budget": self.thinking_budget
            or (DEFAULT_THINKING if self.thinking else None),
            "run_allow": True if self.allow_run else None,
            "run_allow_network": True if self.allow_network else None,
            "run_allow_write": True if self.allow_write else None,
            "gguf": str(self.gguf) if self.gguf else None,
            "chat_template": str(self.chat_template) if self.chat_template else None,
            "mcp_use": () if self.no_mcp else (tuple(self.mcp) if self.mcp else None),
            "mcp_allow": True if self.allow_mcp else None,
            "mcp_elicit": True if self.allow_elicit else None,
            "bare": True if self.bare else None,
        }


# Each field's declared hint (this module's annotations are strings): `Opt`s, read
# by Typer once `session_command` makes them Typer's, and by cli/ask_line.py as
# they are.
HINTS = get_type_hints(SessionOptions, include_extras=True)


def session_command(*, leave_out: Collection[str] = ()) -> Callable[[F], F]:
    """A decorator: the command as Typer sees it, its `options: SessionOptions`
    parameter replaced by one option per field (but those it `leave_out`), its own
    parameters' `Opt`s made Typer's; called, it gets them back as one
    `SessionOptions`, the fields left out at their default."""
    taken = tuple(
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=f.default,
            annotation=typer_hint(HINTS[f.name]),
        )
        for f in fields(SessionOptions)
        if f.name not in leave_out
    )

    def made(command: F) -> F:
        own = inspect.signature(command)
        hints = get_type_hints(command, include_extras=True)  # Typer needs them evaluated
        params = [
            p.replace(annotation=typer_hint(hints.get(p.name, p.annotation)))
            for p in own.parameters.values()
            if p.name != "options"
        ]
        keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
        at = list(own.parameters).index("options")
        params = [*params[:at], *taken, *keyword[at:]]

        @wraps(command)
        def gathered(*args: Any, **kwargs: Any) -> Any:
            options = SessionOptions(**{p.name: kwargs.pop(p.name) for p in taken})
            return command(*args, options=options, **kwargs)

        gathered.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
        gathered.__annotations__ = {p.name: p.annotation for p in params}
        return gathered  # type: ignore[return-value]

    return made


def chosen_settings(
    ctx: Invocation, options: SessionOptions, *, allow_install: bool = False
) -> tuple[Settings, dict[str, str]]:
    """The settings a session opened with `options` runs on, and where each value came
    from (config.py's `load_with_sources`): the one place `ask`, the REPL and eval
    turn their options into settings. `allow_install`: `--allow-install`, which
    `ask` and eval take and the REPL asks instead. `--local` fetches the default
    local model's file here (chosen as `--gguf` would be: a continued chat goes on
    with it)."""
    if options.gguf and options.local:
        raise UsageError("--gguf and --local exclude each other: pick one")
    if options.mcp and options.no_mcp:
        raise UsageError("--mcp and --no-mcp exclude each other: pick one")
    overrides = options.overrides()
    overrides["run_allow_install"] = True if allow_install else None
    settings, sources = load_sourced(ctx, options.config, **overrides)
    if options.local:
        from skillchat.session_settings import with_local_model

        settings = with_local_model(
            settings, lambda line: print(f"skillchat: {line}", file=sys.stderr)
        )
        sources["gguf"] = "flag"
    return settings, sources
