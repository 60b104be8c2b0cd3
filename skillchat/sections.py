"""The sections of `Settings`, one per layer that reads it, and the folders they name.

`Settings` (config.py) is these sections and the few values several layers read
(`tools`, the workspace, hooks). Each section is frozen and compared by value, so a
layer that needs one section takes that section alone: the sandbox a `RunSettings`,
skill discovery a `SkillsSettings`, the backends a `ModelSettings`, the chats store
a `StorageSettings`. The loader, the flags, the environment and `config show` name
settings flat (`run_allow`, `skill_dirs`, `named_models`): `FLAT` is the one table
from those names to where each lives (`Settings.value`, `Settings.replaced`).

The folders the sections' defaults name (the user's config and data folders, the
skills' default directories, the bundled skills) are here because the skills and
storage sections default to them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # parsed only from a config file's [mcp.NAME] tables (config_file.py)
    from skillchat.mcp_config import McpServerConfig

APP_NAME = "skillchat"
# The budgets when nothing states or fits them (`LimitsSettings.budget`, `catalog_budget`).
DEFAULT_CONTEXT_CHARS = 300_000
DEFAULT_CATALOG_CHARS = 30_000
# The skills that ship inside the package (calculator, commit-message,
# skills-system-validation): package data, so they are there after `pipx install`
# or `uv tool install`, whatever folder skillchat runs from. Their sources are the
# repository's top-level `skills/`; `skillchat/bundled_skills` is a link to it, which
# the wheel's build follows (so the wheel holds the files), and in a checkout this is
# that folder's real path (`resolved_dirs` tells it from the project's `./skills`).
BUNDLED_SKILLS = (Path(__file__).resolve().parent / "bundled_skills").resolve()


def user_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/skillchat` on Linux (platformdirs elsewhere)."""
    from platformdirs import user_config_dir as _dir

    return Path(_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """`$XDG_DATA_HOME/skillchat` on Linux: chats and input history live here."""
    from platformdirs import user_data_dir as _dir

    return Path(_dir(APP_NAME, appauthor=False))


def user_skill_dirs() -> list[str]:
    """The user-level skill directories: the user put these skills there, so they
    are trusted; every other skills directory needs `skillchat skills trust`."""
    return ["~/.agents/skills", "~/.claude/skills", str(user_config_dir() / "skills")]


def default_skill_dirs() -> list[str]:
    """The directories scanned when none are configured, highest precedence first:
    the project's, then the user's."""
    return ["./skills", "./.agents/skills", "./.claude/skills", *user_skill_dirs()]


@dataclass(frozen=True)
class ModelSettings:
    """The model the user asked for and how its requests go: engine/resolve.py
    makes a `Target` of it, the backends take their timeouts from it, the local
    server its file's limits, a skill's turns their model (`by_skill`)."""

    name: str = "gpt-4.1-mini"
    api_base: str | None = None
    backend: str = "auto"
    timeout: float = 60.0
    # 20 minutes: a reasoning model may think for several minutes before its first
    # token, and a local model on a CPU at ~5 tokens/s needs ~15 min for 4,000 tokens.
    reply_timeout: float = 1200.0
    max_tokens: int | None = None
    # Extended thinking (Anthropic's backend): the tokens the model may think for
    # before it answers, None for none (`--thinking`, `--thinking-budget N`).
    thinking_budget: int | None = None
    max_retries: int = 3
    # Whether the model takes images (None: as litellm's model map says).
    vision: bool | None = None
    gguf: str | None = None
    chat_template: str | None = None
    local_context_max: int = 8192
    # The model's context window in tokens, when the user knows it better than the
    # server's /props or LiteLLM's map (a named model's `context_window`).
    context_window: int | None = None
    # `[models.NAME]` tables: a name for a model with its server and limits, chosen
    # with `--model NAME` (config.py's `apply_named_model`); their keys are flat names.
    named: dict[str, dict[str, Any]] = field(default_factory=dict)
    # `[skill_models]`: skill name -> the model its turns go to (a `[models.NAME]` or
    # a model id), over the skill's own `model:` (engine/skill_model.py).
    by_skill: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LimitsSettings:
    """What bounds a chat's turn and fits its window: the loop's rounds and calls,
    the transcript and catalog budgets (fitted to a window by engine/resolve.py),
    compaction, the images sent."""

    max_tool_rounds: int = 20
    max_tool_calls: int = 16
    # None: 300,000 (DEFAULT_CONTEXT_CHARS), or fitted to a known window (resolve.py).
    context_max_chars: int | None = None
    # None: 30,000 (DEFAULT_CATALOG_CHARS), or a quarter of a fitted budget.
    catalog_max_chars: int | None = None
    # Compaction (engine/compaction.py): automatically when the chat, old tool results
    # elided, still passes the context budget; the activated skills' instructions put
    # back after the summary take at most this many tokens (and a quarter of the budget).
    auto_compact: bool = True
    compact_skills_tokens: int = 5_000
    # Images read or attached (safe_io/images.py): sent to a model that takes them up
    # to these; a larger one is described instead. 3.75 MB keeps the base64 under
    # the 5 MB most providers take.
    max_image_bytes: int = 3_750_000
    max_image_side: int = 8000

    @property
    def budget(self) -> int:
        """The transcript budget in characters (`context_max_chars`, else the default)."""
        return self.context_max_chars or DEFAULT_CONTEXT_CHARS

    @property
    def catalog_budget(self) -> int:
        """The skills catalog's budget in characters (`catalog_max_chars`, else the default)."""
        return self.catalog_max_chars or DEFAULT_CATALOG_CHARS


@dataclass(frozen=True)
class SkillsSettings:
    """Which skills are found and how (skills/discover.py, the catalog's gates)."""

    enabled: bool = True
    dirs: tuple[str, ...] = field(default_factory=lambda: tuple(default_skill_dirs()))
    # A bound on discovery (time, memory), not on the prompt: build_catalog fits any
    # number of skills into the catalog's budget. 1,000 holds a large real library.
    max_skills: int = 1000
    # Skill names left out wherever they are found (`/skills disable` adds to it
    # for one session).
    disabled: tuple[str, ...] = ()
    # The skills installed with skillchat (BUNDLED_SKILLS), found from any folder.
    bundled: bool = True
    # Load only skills that meet every spec MUST (as `skills validate`), not also the
    # ones Claude Code loads (a long description, a name unlike its folder).
    strict: bool = False
    # Show the bundled fixtures (config.py's BUNDLED_FIXTURES) in the catalog.
    fixtures: bool = False
    max_skill_md_bytes: int = 200_000
    max_resource_bytes: int = 2_000_000
    # Claude Code's `paths` (engine/steps/paths.py): a skill that declares them is in
    # the catalog only while a workspace file matches. Not a config key: `eval` turns
    # it off, since its queries come with no workspace and it measures descriptions.
    paths_gate: bool = True

    def resolved_dirs(self, cwd: Path | None = None) -> list[Path]:
        """Skill directories as absolute paths: `~` expanded, relative to the cwd;
        the bundled skills last (lowest precedence) unless `[skills] bundled = false`
        (or `--skills-dir`, naming the directories of this one command, turned them off).
        In skillchat's own repository, `./skills` is the bundled skills' folder itself:
        it is listed once, as the bundled one (trusted as skillchat is), not a second
        time as an untrusted project folder shadowing it."""
        base = cwd or Path.cwd()
        dirs = [base / Path(d).expanduser() for d in self.dirs]
        if self.bundled:
            bundled = os.path.realpath(BUNDLED_SKILLS)
            dirs = [d for d in dirs if os.path.realpath(d) != bundled]
            dirs.append(BUNDLED_SKILLS)
        return dirs

    def hides_fixtures(self, cwd: Path | None = None) -> bool:
        """Whether discovery leaves out the bundled fixtures: yes, unless asked for
        (`[skills] fixtures = true`) or their folder is named as a skills directory (by
        the user: the default `./skills`, in skillchat's repository, names none)."""
        if self.fixtures:
            return False
        base = cwd or Path.cwd()
        chosen = () if self.dirs == tuple(default_skill_dirs()) else self.dirs
        named = {os.path.realpath(base / Path(d).expanduser()) for d in chosen}
        return os.path.realpath(BUNDLED_SKILLS) not in named


@dataclass(frozen=True)
class RunSettings:
    """Running skill commands in the sandbox (skillchat/sandbox) and installing the
    packages a skill's scripts declare (sandbox/envs).

    Commands are offered when a sandbox works and `enabled`; `allow` runs them
    without asking (`ask` never asks, so without it `ask` refuses); network and
    workspace writes widen it. The REPL asks before an install; `ask` and `eval`
    install only with `allow_install`."""

    enabled: bool = True
    allow: bool = False
    allow_network: bool = False
    allow_write: bool = False
    timeout_s: float = 120.0
    max_timeout_s: float = 600.0
    allow_install: bool = False
    # The most an install may unpack, in MB: uv's cache and npm's work folder are a
    # tmpfs of this size while it runs (RAM), and the environment is held to it.
    install_max_mb: int = 2048
    # What a skill's `allowed-tools` may do (skillchat/skills/allowed_tools.py).
    allowed_tools: str = "approve"
    # `[packages]`: what a skill forgot to declare, skill name -> requirement strings.
    packages: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class StorageSettings:
    """Where the chats and the packages' environments are kept."""

    path: str | None = None
    # Where packages' environments live; None: beside the chat database. An outcome
    # eval's trial has a database of its own, and shares the user's environments.
    envs_path: str | None = None

    def database_path(self) -> Path:
        """The chat database: `[storage] path`, else `<user data dir>/chats.db`."""
        if self.path:
            return Path(self.path).expanduser()
        return user_data_dir() / "chats.db"

    def envs_folder(self) -> Path:
        """The skills' package environments (sandbox/envs/store.py)."""
        if self.envs_path:
            return Path(self.envs_path)
        return self.database_path().parent / "envs"


@dataclass(frozen=True)
class McpSettings:
    """`[mcp.NAME]` tables (mcp_config.py) and this session's use of them: `use` the
    servers of this session (None: every enabled one; `--mcp NAME` names them,
    `--no-mcp` none); `allow` lets `ask` and `eval` call their tools (`--allow-mcp`);
    `elicit` lets them answer a server's question with its schema's defaults
    (`--allow-elicit`)."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    use: tuple[str, ...] | None = None
    allow: bool = False
    elicit: bool = False

    def active(self) -> list[McpServerConfig]:
        """The MCP servers of this session: the ones `--mcp` names, else every
        enabled one; none under `--no-mcp` (an empty `use`)."""
        if self.use is not None:
            return [self.servers[name] for name in self.use if name in self.servers]
        return [server for server in self.servers.values() if server.enabled]


@dataclass(frozen=True)
class UiSettings:
    """`[ui]`: the REPL's status line items (ui/status_line.py; None: the default),
    how it tells of a turn that took `notify_after_s` or more or of a question that
    waits (ui/notify.py: bell, osc9, osc777 or off), its keys (emacs or vi) and its
    colours (dark, light or auto: ui/background.py)."""

    status_line: tuple[str, ...] | None = None
    notify: str = "bell"
    editing_mode: str = "emacs"
    theme: str = "dark"
    notify_after_s: float = 30.0


# The loader's flat name of every setting -> (its section, its field there); None:
# a field of `Settings` itself. In the order `config show` lists them.
FLAT: dict[str, tuple[str | None, str]] = {
    "model": ("model", "name"),
    "api_base": ("model", "api_base"),
    "backend": ("model", "backend"),
    "tools": (None, "tools"),
    "paths_gate": ("skills", "paths_gate"),
    "max_tool_rounds": ("limits", "max_tool_rounds"),
    "context_max_chars": ("limits", "context_max_chars"),
    "auto_compact": ("limits", "auto_compact"),
    "compact_skills_tokens": ("limits", "compact_skills_tokens"),
    "timeout": ("model", "timeout"),
    "reply_timeout": ("model", "reply_timeout"),
    "max_tokens": ("model", "max_tokens"),
    "thinking_budget": ("model", "thinking_budget"),
    "max_tool_calls": ("limits", "max_tool_calls"),
    "max_retries": ("model", "max_retries"),
    "skills_enabled": ("skills", "enabled"),
    "skill_dirs": ("skills", "dirs"),
    "max_skills": ("skills", "max_skills"),
    "skills_disabled": ("skills", "disabled"),
    "skills_bundled": ("skills", "bundled"),
    "skills_strict": ("skills", "strict"),
    "skills_fixtures": ("skills", "fixtures"),
    "max_skill_md_bytes": ("skills", "max_skill_md_bytes"),
    "max_resource_bytes": ("skills", "max_resource_bytes"),
    "vision": ("model", "vision"),
    "max_image_bytes": ("limits", "max_image_bytes"),
    "max_image_side": ("limits", "max_image_side"),
    "catalog_max_chars": ("limits", "catalog_max_chars"),
    "storage_path": ("storage", "path"),
    "envs_path": ("storage", "envs_path"),
    "run_allowed_tools": ("run", "allowed_tools"),
    "workspace": (None, "workspace"),
    "projects": (None, "projects"),
    "run_enabled": ("run", "enabled"),
    "run_allow": ("run", "allow"),
    "run_allow_network": ("run", "allow_network"),
    "run_allow_write": ("run", "allow_write"),
    "run_timeout_s": ("run", "timeout_s"),
    "run_max_timeout_s": ("run", "max_timeout_s"),
    "run_allow_install": ("run", "allow_install"),
    "run_install_max_mb": ("run", "install_max_mb"),
    "skill_packages": ("run", "packages"),
    "gguf": ("model", "gguf"),
    "chat_template": ("model", "chat_template"),
    "local_context_max": ("model", "local_context_max"),
    "context_window": ("model", "context_window"),
    "named_models": ("model", "named"),
    "mcp_servers": ("mcp", "servers"),
    "mcp_use": ("mcp", "use"),
    "mcp_allow": ("mcp", "allow"),
    "mcp_elicit": ("mcp", "elicit"),
    "skill_models": ("model", "by_skill"),
    "hooks": (None, "hooks"),
    "hooks_enabled": (None, "hooks_enabled"),
    "project_files": (None, "project_files"),
    "ui_status_line": ("ui", "status_line"),
    "ui_notify": ("ui", "notify"),
    "ui_editing_mode": ("ui", "editing_mode"),
    "ui_theme": ("ui", "theme"),
    "ui_notify_after_s": ("ui", "notify_after_s"),
    "config_path": (None, "config_path"),
    "warnings": (None, "warnings"),
}
