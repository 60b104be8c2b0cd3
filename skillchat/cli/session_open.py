"""How `ask` and the REPL open a session from their options, without Typer.

`SessionOptions` is what the command line says about the session (each field's
option is declared in cli/common.py, for Typer); `open_chat` is the one way both
commands open it. Nothing here imports Typer or click: `ask`'s line, when plain, is
read without them (cli/ask_line.py), and what it then runs starts here. The state
of one run of the command line is the root's `obj` (a dict: the root's `--config`,
`--debug`, and the run's `Consoles`): Typer's root context holds it, and
cli/common.py's functions taking a context read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillchat.errors import UsageError

if TYPE_CHECKING:
    from skillchat.chats.records import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings
    from skillchat.target import Target
    from skillchat.ui.console import Consoles
    from skillchat.workspace.files import Workspace

Root = dict[str, Any]  # the root's `obj`: "config", "debug", "consoles"


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


def consoles_in(root: Root) -> Consoles:
    """This run's output: one `Consoles` per invocation, made when a command first
    asks and kept in the root's `obj`, so the config's warnings, the command's own
    lines and its views share it. Each command passes it on to what prints (nothing
    below cli/ finds a console by itself)."""
    from skillchat.ui.console import Consoles

    if "consoles" not in root:
        root["consoles"] = Consoles()
    consoles: Consoles = root["consoles"]
    return consoles


def load_sourced_in(
    root: Root, config: Path | None, **overrides: object
) -> tuple[Settings, dict[str, str]]:
    """Effective settings for a command, its own `--config` else the root one, and
    where each value came from (config.py's `load_with_sources`): kept here, by the
    command line, for `config show` and for which flags win over a saved chat's
    server. Config-file warnings (unknown keys) are shown once, on stderr."""
    from skillchat.config import load_with_sources

    settings, sources = load_with_sources(config or root.get("config"), **overrides)
    for message in settings.warnings:
        consoles_in(root).warn(message)
    return settings, sources


def project_workspace(
    settings: Settings, sources: dict[str, str], *, off: bool
) -> tuple[Settings, str]:
    """The settings with the workspace off (`--no-workspace`), or, when neither
    `--workspace` nor the config names one, the project the cwd is in (a git work
    tree, or a folder in `projects`); and where the workspace came from, which says
    which."""
    from skillchat.workspace.project import project_folder

    source = sources.get("workspace", "default")
    if off:
        if source == "flag":
            raise UsageError("--workspace and --no-workspace exclude each other: pick one")
        return replace(settings, workspace=None), "flag"
    if settings.workspace or (found := project_folder(Path.cwd(), settings.projects)) is None:
        return settings, source
    folder, why = found
    return replace(settings, workspace=str(folder)), why


def workspace_note(settings: Settings, why: str) -> str | None:
    """The line that says a workspace nobody named is on, and how to turn it off."""
    from skillchat.workspace.project import PROJECT_SOURCES

    if why not in PROJECT_SOURCES or not settings.workspace:
        return None
    return f"workspace: {settings.workspace} ({why}; --no-workspace to turn it off)"


@dataclass(frozen=True)
class SessionOptions:
    """What the command line says about the session it opens (None/False: unsaid)."""

    model: str | None = None
    api_base: str | None = None
    backend: str | None = None
    no_tools: bool = False
    last: bool = False
    chat_id: str | None = None
    skills_dir: list[Path] | None = None
    workspace: Path | None = None
    no_workspace: bool = False
    reply_timeout: float | None = None
    max_tokens: int | None = None
    gguf: Path | None = None
    local: bool = False
    chat_template: Path | None = None
    config: Path | None = None
    allow_run: bool = False
    allow_network: bool = False
    allow_write: bool = False
    mcp: list[str] | None = None
    no_mcp: bool = False
    allow_mcp: bool = False

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
            "run_allow": True if self.allow_run else None,
            "run_allow_network": True if self.allow_network else None,
            "run_allow_write": True if self.allow_write else None,
            "gguf": str(self.gguf) if self.gguf else None,
            "chat_template": str(self.chat_template) if self.chat_template else None,
            "mcp_use": () if self.no_mcp else (tuple(self.mcp) if self.mcp else None),
            "mcp_allow": True if self.allow_mcp else None,
        }


@dataclass
class OpenChat:
    """A session opened from the command line, before its `Session` is made: the
    settings, the workspace (None when off), where requests go, where each setting
    came from (the workspace's: "flag", "chat", or the project's reason), the chat
    database and the saved chat it goes on with (None: a new one)."""

    settings: Settings
    workspace: Workspace | None
    target: Target
    sources: dict[str, str]
    store: ChatStore
    transcript: Transcript | None


def open_chat_in(
    root: Root,
    options: SessionOptions,
    *,
    allow_install: bool = False,
    needs_workspace: str | None = None,
) -> OpenChat:
    """The one way `ask` and the REPL open a session from their options. A bad
    workspace stops the command here, before any request or prompt, and so does an
    option that needs one (`needs_workspace`: its message) when there is none. With
    a local model (`--gguf`, `--local`, or `gguf` in the config) its server starts
    here, loading while the rest starts up; a server's `/props` is asked for its
    window here. The saved chat (`-c`, `--chat ID`) goes on with its own model,
    server or local file, and workspace, unless the command line chose them."""
    from skillchat.engine.resolve import asked, resolve
    from skillchat.session import chosen_transcript, open_store
    from skillchat.session_settings import continued_target, resumed_workspace
    from skillchat.workspace.files import workspace_from_settings

    if options.gguf and options.local:
        raise UsageError("--gguf and --local exclude each other: pick one")
    if options.mcp and options.no_mcp:
        raise UsageError("--mcp and --no-mcp exclude each other: pick one")
    overrides = options.overrides()
    overrides["run_allow_install"] = True if allow_install else None
    settings, sources = load_sourced_in(root, options.config, **overrides)
    if options.local:
        from skillchat.session_settings import with_local_model

        settings = with_local_model(settings)
        sources["gguf"] = "flag"  # chosen as `--gguf` would: a continued chat goes on with it
    target = resolve(settings, asked(settings))
    settings, why = project_workspace(settings, sources, off=options.no_workspace)
    folder = workspace_from_settings(settings, why)
    if needs_workspace and folder is None:
        raise UsageError(needs_workspace)
    warn = consoles_in(root).warn
    store = open_store(settings)
    transcript = chosen_transcript(store, last=options.last, chat_id=options.chat_id, notify=warn)
    # The chat's own server or local model file (its server started now), unless
    # the command line chose one.
    target = continued_target(settings, target, transcript, sources)
    if (kept := resumed_workspace(settings, transcript, warn, why == "flag")) is not settings:
        settings, folder, why = kept, workspace_from_settings(kept, "chat"), "chat"
    sources["workspace"] = why
    return OpenChat(settings, folder, target, sources, store, transcript)
