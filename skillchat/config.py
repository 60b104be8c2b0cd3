"""Configuration: one frozen `Settings`, built from defaults < file < environment < flags.

The file is TOML (read with `tomllib`), found at `--config`, else `$SKILLCHAT_CONFIG`,
else `<user config dir>/config.toml`. A broken file is a `ConfigError` whose message
names the file, the line and the problem; unknown keys are warnings, not errors, so an
older skillchat can read a newer config. Reading and checking the file's keys and
tables is config_file.py; this module is the settings and how they are layered.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from skillchat.backend_table import BACKEND_NAMES, MIN_THINKING
from skillchat.config_file import read_config_file
from skillchat.errors import ConfigError, UsageError

if TYPE_CHECKING:  # parsed only from a config file's [mcp.NAME] tables (config_file.py)
    from skillchat.mcp_config import McpServerConfig

APP_NAME = "skillchat"
# What a skill's `allowed-tools` may do (skillchat/skills/allowed_tools.py says how).
ALLOWED_TOOLS_MODES = ("approve", "restrict", "ignore")

# `[run] install_max_mb`'s ceiling, 1 TiB: the cap becomes a tmpfs size and a file
# limit in bytes, which bubblewrap and prlimit refuse past 64 bits (a bigger value
# would load, then fail every install with bubblewrap's own words).
MAX_INSTALL_MB = 1 << 20
ENV_CONFIG = "SKILLCHAT_CONFIG"
# The default model for a user whose only key is ANTHROPIC_API_KEY (`_keyed_default`).
ANTHROPIC_DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
# The budgets when nothing states or fits them (`Settings.budget`, `catalog_budget`).
DEFAULT_CONTEXT_CHARS = 300_000
DEFAULT_CATALOG_CHARS = 30_000
# The skills that ship inside the package (calculator, commit-message,
# skills-system-validation): package data, so they are there after `pipx install`
# or `uv tool install`, whatever folder skillchat runs from. Their sources are the
# repository's top-level `skills/`; `skillchat/bundled_skills` is a link to it, which
# the wheel's build follows (so the wheel holds the files), and in a checkout this is
# that folder's real path (`resolved_skill_dirs` tells it from the project's `./skills`).
BUNDLED_SKILLS = (Path(__file__).resolve().parent / "bundled_skills").resolve()
# Bundled skills that are test fixtures, not a user's tools: out of the catalog unless
# `[skills] fixtures = true` or the bundled folder is named as a skills directory.
BUNDLED_FIXTURES = frozenset({"skills-system-validation"})


def fixture_hint(name: str) -> str:
    """How to show a bundled fixture a command named but could not find: hidden by
    default, so "no skill named" alone would leave the user guessing why."""
    if name not in BUNDLED_FIXTURES:
        return ""
    return (
        f"; '{name}' is a bundled test fixture, hidden unless `[skills] fixtures = true`"
        f" in the config file or `--skills-dir {BUNDLED_SKILLS}`"
    )


# Environment variables that override single keys (flag > environment > file > default).
ENV_KEYS = {
    "SKILLCHAT_MODEL": "model",
    "SKILLCHAT_API_BASE": "api_base",
    "SKILLCHAT_BACKEND": "backend",
}


def user_config_dir() -> Path:
    """`$XDG_CONFIG_HOME/skillchat` on Linux (platformdirs elsewhere)."""
    from platformdirs import user_config_dir as _dir

    return Path(_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """`$XDG_DATA_HOME/skillchat` on Linux: chats and input history live here."""
    from platformdirs import user_data_dir as _dir

    return Path(_dir(APP_NAME, appauthor=False))


def plugin_servers_path() -> Path:
    """The MCP servers installed plugins brought (plugin_servers.py), beside the config."""
    return user_config_dir() / "plugin-servers.json"


def user_skill_dirs() -> list[str]:
    """The user-level skill directories: the user put these skills there, so they
    are trusted; every other skills directory needs `skillchat skills trust`."""
    return ["~/.agents/skills", "~/.claude/skills", str(user_config_dir() / "skills")]


def default_skill_dirs() -> list[str]:
    """The directories scanned when none are configured, highest precedence first:
    the project's, then the user's."""
    return ["./skills", "./.agents/skills", "./.claude/skills", *user_skill_dirs()]


@dataclass(frozen=True)
class Settings:
    """What the user asked for (defaults < file < environment < flags), compared by
    value. Where each value came from is the command line's (`load_with_sources`);
    where a chat's requests go, fitted to that place, is its `Target` (target.py)."""

    model: str = "gpt-4.1-mini"
    api_base: str | None = None
    backend: str = "auto"
    tools: bool = True
    # Claude Code's `paths` (engine/steps/paths.py): a skill that declares them is in
    # the catalog only while a workspace file matches. Not a config key: `eval` turns
    # it off, since its queries come with no workspace and it measures descriptions.
    paths_gate: bool = True
    max_tool_rounds: int = 20
    # None: 300,000 (DEFAULT_CONTEXT_CHARS), or fitted to a known window (resolve.py).
    context_max_chars: int | None = None
    # Compaction (engine/compaction.py): automatically when the chat, old tool results
    # elided, still passes the context budget; the activated skills' instructions put
    # back after the summary take at most this many tokens (and a quarter of the budget).
    auto_compact: bool = True
    compact_skills_tokens: int = 5_000
    timeout: float = 60.0
    # 20 minutes: a reasoning model may think for several minutes before its first
    # token, and a local model on a CPU at ~5 tokens/s needs ~15 min for 4,000 tokens.
    reply_timeout: float = 1200.0
    max_tokens: int | None = None
    # Extended thinking (Anthropic's backend): the tokens the model may think for
    # before it answers, None for none (`--thinking`, `--thinking-budget N`).
    thinking_budget: int | None = None
    max_tool_calls: int = 16
    max_retries: int = 3
    skills_enabled: bool = True
    skill_dirs: tuple[str, ...] = field(default_factory=lambda: tuple(default_skill_dirs()))
    # A bound on discovery (time, memory), not on the prompt: build_catalog fits any
    # number of skills into catalog_max_chars. 1,000 holds a large real library.
    max_skills: int = 1000
    # Skill names left out wherever they are found (`/skills disable` adds to it
    # for one session).
    skills_disabled: tuple[str, ...] = ()
    # The skills installed with skillchat (BUNDLED_SKILLS), found from any folder.
    skills_bundled: bool = True
    # Load only skills that meet every spec MUST (as `skills validate`), not also the
    # ones Claude Code loads (a long description, a name unlike its folder).
    skills_strict: bool = False
    # Show the bundled fixtures (BUNDLED_FIXTURES) in the catalog.
    skills_fixtures: bool = False
    max_skill_md_bytes: int = 200_000
    max_resource_bytes: int = 2_000_000
    # Images read or attached (safe_io/images.py): sent to a model that takes them
    # (`vision`; None: as litellm's model map says) up to these; a larger one is
    # described instead. 3.75 MB keeps the base64 under the 5 MB most providers take.
    vision: bool | None = None
    max_image_bytes: int = 3_750_000
    max_image_side: int = 8000
    # None: 30,000 (DEFAULT_CATALOG_CHARS), or a quarter of a fitted budget.
    catalog_max_chars: int | None = None
    storage_path: str | None = None
    # Where packages' environments live; None: beside the chat database. An outcome
    # eval's trial has a database of its own, and shares the user's environments.
    envs_path: str | None = None
    run_allowed_tools: str = "approve"
    workspace: str | None = None
    # Folders that are projects (besides git work trees): started at or below one, it
    # is the workspace unless `workspace` or --workspace names one (workspace/project.py).
    projects: tuple[str, ...] = ()
    # Running skill commands in the sandbox (skillchat/sandbox): offered when a
    # sandbox works and `run_enabled`; `run_allow` runs without asking (`ask` never
    # asks, so without it `ask` refuses); network and workspace writes widen it.
    run_enabled: bool = True
    run_allow: bool = False
    run_allow_network: bool = False
    run_allow_write: bool = False
    run_timeout_s: float = 120.0
    run_max_timeout_s: float = 600.0
    # Installing the packages a skill's scripts declare (skillchat/sandbox/envs): the REPL
    # asks; `ask` and `eval` install only with this. `[packages]` declares what a
    # skill forgot: skill name -> requirement strings.
    run_allow_install: bool = False
    # The most an install may unpack, in MB: uv's cache and npm's work folder are a
    # tmpfs of this size while it runs (RAM), and the environment is held to it.
    run_install_max_mb: int = 2048
    skill_packages: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gguf: str | None = None
    chat_template: str | None = None
    local_context_max: int = 8192
    # The model's context window in tokens, when the user knows it better than the
    # server's /props or LiteLLM's map (a named model's `context_window`).
    context_window: int | None = None
    # `[models.NAME]` tables: a name for a model with its server and limits, chosen
    # with `--model NAME` (see `apply_named_model`).
    named_models: dict[str, dict[str, Any]] = field(default_factory=dict)
    # `[mcp.NAME]` tables (mcp_config.py); `mcp_use` the servers of this session
    # (None: every enabled one; `--mcp NAME` names them, `--no-mcp` none); `mcp_allow`
    # lets `ask` and `eval` call their tools (`--allow-mcp`); `mcp_elicit` lets them
    # answer a server's question with its schema's defaults (`--allow-elicit`).
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    mcp_use: tuple[str, ...] | None = None
    mcp_allow: bool = False
    mcp_elicit: bool = False
    # `[skill_models]`: skill name -> the model its turns go to (a `[models.NAME]` or
    # a model id), over the skill's own `model:` (engine/skill_model.py).
    skill_models: dict[str, str] = field(default_factory=dict)
    # `[hooks]` as the file has it (skillchat/hooks/spec.py reads it); `hooks_enabled`
    # off under `--bare`, which also leaves out the project's config and skills.
    hooks: dict[str, Any] = field(default_factory=dict)
    hooks_enabled: bool = True
    # The project's own files in `.skillchat/` (its per-skill overrides): off under
    # `--bare`, as its config and hooks are.
    project_files: bool = True
    # `[ui]`: the REPL's status line items (ui/status_line.py; None: the default).
    ui_status_line: tuple[str, ...] | None = None
    # How the REPL tells of a turn that took `ui_notify_after_s` or more, or a
    # question that waits (ui/notify.py): bell, osc9, osc777 or off.
    ui_notify: str = "bell"
    ui_editing_mode: str = "emacs"  # the REPL's keys: emacs or vi
    ui_theme: str = "dark"  # the REPL's colours: dark, light or auto (ui/background.py)
    ui_notify_after_s: float = 30.0
    config_path: Path | None = None
    warnings: tuple[str, ...] = ()

    @property
    def budget(self) -> int:
        """The transcript budget in characters (`context_max_chars`, else the default)."""
        return self.context_max_chars or DEFAULT_CONTEXT_CHARS

    @property
    def catalog_budget(self) -> int:
        """The skills catalog's budget in characters (`catalog_max_chars`, else the default)."""
        return self.catalog_max_chars or DEFAULT_CATALOG_CHARS

    def resolved_skill_dirs(self, cwd: Path | None = None) -> list[Path]:
        """Skill directories as absolute paths: `~` expanded, relative to the cwd;
        the bundled skills last (lowest precedence) unless `[skills] bundled = false`
        (or `--skills-dir`, naming the directories of this one command, turned them off).
        In skillchat's own repository, `./skills` is the bundled skills' folder itself:
        it is listed once, as the bundled one (trusted as skillchat is), not a second
        time as an untrusted project folder shadowing it."""
        base = cwd or Path.cwd()
        dirs = [base / Path(d).expanduser() for d in self.skill_dirs]
        if self.skills_bundled:
            bundled = os.path.realpath(BUNDLED_SKILLS)
            dirs = [d for d in dirs if os.path.realpath(d) != bundled]
            dirs.append(BUNDLED_SKILLS)
        return dirs

    def hides_fixtures(self, cwd: Path | None = None) -> bool:
        """Whether discovery leaves out the bundled fixtures: yes, unless asked for
        (`[skills] fixtures = true`) or their folder is named as a skills directory (by
        the user: the default `./skills`, in skillchat's repository, names none)."""
        if self.skills_fixtures:
            return False
        base = cwd or Path.cwd()
        chosen = () if self.skill_dirs == tuple(default_skill_dirs()) else self.skill_dirs
        named = {os.path.realpath(base / Path(d).expanduser()) for d in chosen}
        return os.path.realpath(BUNDLED_SKILLS) not in named

    def resolved_workspace(self, cwd: Path | None = None) -> Path | None:
        """The workspace folder (`~` expanded, relative to the cwd), or None when off."""
        if not self.workspace:
            return None
        return (cwd or Path.cwd()) / Path(self.workspace).expanduser()

    def active_mcp_servers(self) -> list[McpServerConfig]:
        """The MCP servers of this session: the ones `--mcp` names, else every
        enabled one; none under `--no-mcp` (an empty `mcp_use`)."""
        if self.mcp_use is not None:
            return [self.mcp_servers[name] for name in self.mcp_use if name in self.mcp_servers]
        return [server for server in self.mcp_servers.values() if server.enabled]

    def database_path(self) -> Path:
        """The chat database: `[storage] path`, else `<user data dir>/chats.db`."""
        if self.storage_path:
            return Path(self.storage_path).expanduser()
        return user_data_dir() / "chats.db"

    def envs_folder(self) -> Path:
        """The skills' package environments (sandbox/envs/store.py)."""
        if self.envs_path:
            return Path(self.envs_path)
        return self.database_path().parent / "envs"


def _bare(values: dict[str, Any], sources: dict[str, str]) -> None:
    """`--bare`, for scripts: what the command line names and nothing found around
    it. No hooks (the user's nor a project's), no MCP servers but those `--mcp`
    names, no skills folders but those `--skills-dir` names (the bundled skills,
    part of skillchat, stay unless it does). The user's config file is still read
    for the rest (the model and its server, the sandbox's limits): it is the user's
    own, as the command line is; nothing of the project's is."""
    values["hooks_enabled"] = False
    sources["hooks_enabled"] = "flag"
    values["project_files"], sources["project_files"] = False, "flag"
    if sources.get("mcp_use") != "flag":
        values["mcp_use"], sources["mcp_use"] = (), "flag"
    if sources.get("skill_dirs") != "flag":
        values["skill_dirs"], sources["skill_dirs"] = (), "flag"


def find_config_file(explicit: str | Path | None) -> tuple[Path, bool]:
    """The config path to use and whether the user named it (so it must exist)."""
    if explicit:
        return Path(explicit).expanduser(), True
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env).expanduser(), True
    return user_config_dir() / "config.toml", False


def apply_named_model(values: dict[str, Any], sources: dict[str, str]) -> None:
    """`--model NAME` (or `model = "NAME"`) naming a `[models.NAME]` table: its
    settings apply, except where a flag or the environment set one (the command
    line wins over the table). A name is looked up once: a table's own `model` is
    the provider's id, never another name."""
    named = values.get("named_models") or {}
    entry = named.get(values.get("model", ""))
    if entry is None:
        return
    name = values["model"]
    for field_name, value in entry.items():
        if sources.get(field_name) in ("flag", "env") and field_name != "model":
            continue
        values[field_name] = value
        sources[field_name] = f"models.{name}"


def with_model(settings: Settings, model: str, given: Collection[str]) -> Settings:
    """`settings` going on with `model` (`eval -m NAME`): a named model brings its
    table, except where a flag or the environment set a value (`given`: `eval -m
    NAME --api-base X`: the command line wins, as with `--model NAME`)."""
    entry = settings.named_models.get(model)
    if entry is None:
        return replace(settings, model=model)
    # A table says where its model runs: a local file (`gguf`) or a server, never
    # the local file the chat ran before it.
    entry = {"model": model, "gguf": None, **entry}
    entry = {k: v for k, v in entry.items() if k == "model" or k not in given}
    return replace(settings, **entry)


def _keyed_default(values: dict[str, Any], sources: dict[str, str]) -> None:
    """No model named anywhere, no OpenAI key or server, but ANTHROPIC_API_KEY set:
    the default model is Anthropic's, so a user with that key alone starts as an
    OpenAI user does (`config show` says why: `[ANTHROPIC_API_KEY]`)."""
    if sources.get("model") != "default" or values.get("api_base") or values.get("gguf"):
        return
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        return
    if os.environ.get("ANTHROPIC_API_KEY"):
        values["model"] = ANTHROPIC_DEFAULT_MODEL
        sources["model"] = "ANTHROPIC_API_KEY"


def _check(settings: Settings, sources: dict[str, str]) -> None:
    where = str(settings.config_path) if settings.config_path else "settings"
    if settings.backend not in BACKEND_NAMES:
        raise ConfigError(
            f"{where}: backend must be one of {', '.join(BACKEND_NAMES)}, not '{settings.backend}'"
        )
    if settings.run_allowed_tools not in ALLOWED_TOOLS_MODES:
        raise ConfigError(
            f"{where}: [run] allowed_tools must be one of {', '.join(ALLOWED_TOOLS_MODES)}, "
            f"not '{settings.run_allowed_tools}'"
        )
    for name in (
        "max_tool_rounds",
        "max_tool_calls",
        "context_max_chars",
        "compact_skills_tokens",
        "max_skills",
        "max_skill_md_bytes",
        "max_resource_bytes",
        "catalog_max_chars",
        "local_context_max",
        "max_image_bytes",
        "max_image_side",
    ):
        value = getattr(settings, name)
        if value is not None and value < 1:
            raise ConfigError(f"{where}: {name} must be at least 1")
    if not 1 <= settings.run_install_max_mb <= MAX_INSTALL_MB:
        raise ConfigError(f"{where}: run_install_max_mb must be between 1 and {MAX_INSTALL_MB}")
    if not 0 < settings.run_timeout_s <= settings.run_max_timeout_s:
        raise ConfigError(f"{where}: run timeout_s must be > 0 and at most max_timeout_s")
    if settings.max_retries < 0 or settings.timeout <= 0 or settings.reply_timeout <= 0:
        raise ConfigError(f"{where}: max_retries must be >= 0, timeout and reply_timeout > 0")
    if settings.max_tokens is not None and settings.max_tokens < 1:
        raise ConfigError(f"{where}: max_tokens must be at least 1")
    if settings.thinking_budget is not None and settings.thinking_budget < MIN_THINKING:
        raise ConfigError(f"{where}: thinking_budget must be at least {MIN_THINKING:,}")
    if settings.api_base is not None:
        url = urlsplit(settings.api_base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise (UsageError if sources.get("api_base") == "flag" else ConfigError)(
                f"api_base '{settings.api_base}' is not an http(s) URL: write it as "
                "http://HOST:PORT/v1 (e.g. http://localhost:11434/v1)"
            )
    if settings.context_window is not None and settings.context_window < 1:
        raise ConfigError(f"{where}: context_window must be at least 1")
    if (
        settings.ui_notify not in ("bell", "osc9", "osc777", "off")
        or settings.ui_notify_after_s < 0
    ):
        raise ConfigError(
            f"{where}: [ui] notify must be bell, osc9, osc777 or off, notify_after_s >= 0"
        )
    if settings.ui_editing_mode not in ("emacs", "vi"):
        raise ConfigError(f"{where}: [ui] editing_mode must be emacs or vi")
    if settings.ui_theme not in ("dark", "light", "auto"):
        raise ConfigError(f"{where}: [ui] theme must be dark, light or auto")
    unknown = sorted(set(settings.mcp_use or ()) - set(settings.mcp_servers))
    if unknown:
        from skillchat.plugin_servers import off_reason

        if off := off_reason(plugin_servers_path(), unknown[0]):
            raise UsageError(f"--mcp {unknown[0]}: {off}")
        known = ", ".join(settings.mcp_servers) or "none configured"
        raise UsageError(f"--mcp {unknown[0]}: no [mcp.{unknown[0]}] in the config ({known})")


def load_settings(config: str | Path | None = None, **overrides: Any) -> Settings:
    """Build the effective settings. `overrides` are command-line flags; None means unset."""
    return load_with_sources(config, **overrides)[0]


def load_with_sources(
    config: str | Path | None = None, **overrides: Any
) -> tuple[Settings, dict[str, str]]:
    """The settings and where each value came from ("default", "file", "env",
    "flag", "models.NAME"): the command line's to keep (`config show`, which flags
    win over a saved chat's server)."""
    path, required = find_config_file(config)
    bare = overrides.pop("bare", None)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {f.name: "default" for f in fields(Settings)}
    warnings: list[str] = []
    config_path: Path | None = None
    if path.exists() or required:
        if not path.exists():
            raise ConfigError(f"{path}: config file not found")
        file_values, warnings = read_config_file(path)
        values.update(file_values)
        sources.update({k: "file" for k in file_values})
        config_path = path
    if plugin_servers_path().exists():  # the enabled ones; the user's own table wins a name
        from skillchat.plugin_servers import enabled_servers

        values["mcp_servers"] = {
            **enabled_servers(plugin_servers_path()),
            **values.get("mcp_servers", {}),
        }
    for env, name in ENV_KEYS.items():
        if os.environ.get(env):
            values[name] = os.environ[env]
            sources[name] = "env"
    for name, value in overrides.items():
        if value is not None:
            values[name] = tuple(value) if name == "skill_dirs" else value
            sources[name] = "flag"
    if bare:
        _bare(values, sources)
    apply_named_model(values, sources)
    _keyed_default(values, sources)
    if "skill_dirs" in overrides and overrides["skill_dirs"] is not None:
        values["skills_bundled"] = False  # `--skills-dir`: these directories alone
    settings = replace(Settings(), **values, config_path=config_path, warnings=tuple(warnings))
    _check(settings, sources)
    return settings, sources
