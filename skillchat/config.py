"""Configuration: one frozen `Settings`, built from defaults < file < environment < flags.

The file is TOML (read with `tomllib`), found at `--config`, else `$SKILLCHAT_CONFIG`,
else `<user config dir>/config.toml`. A broken file is a `ConfigError` whose message
names the file, the line and the problem; unknown keys are warnings, not errors, so an
older skillchat can read a newer config. Reading and checking the file's keys and
tables is config_file.py; the sections of the settings are sections.py; this module
is `Settings` and how its values are layered.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from skillchat.backend_table import BACKEND_NAMES, MIN_THINKING
from skillchat.config_file import read_config_file
from skillchat.errors import ConfigError, UsageError
from skillchat.sections import (
    BUNDLED_SKILLS,
    FLAT,
    LimitsSettings,
    McpSettings,
    ModelSettings,
    RunSettings,
    SkillsSettings,
    StorageSettings,
    UiSettings,
    user_config_dir,
)

# What a skill's `allowed-tools` may do (skillchat/skills/allowed_tools.py says how).
ALLOWED_TOOLS_MODES = ("approve", "restrict", "ignore")

# `[run] install_max_mb`'s ceiling, 1 TiB: the cap becomes a tmpfs size and a file
# limit in bytes, which bubblewrap and prlimit refuse past 64 bits (a bigger value
# would load, then fail every install with bubblewrap's own words).
MAX_INSTALL_MB = 1 << 20
ENV_CONFIG = "SKILLCHAT_CONFIG"
# The default model for a user whose only key is ANTHROPIC_API_KEY (`_keyed_default`).
ANTHROPIC_DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"
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


def plugin_servers_path() -> Path:
    """The MCP servers installed plugins brought (plugin_servers.py), beside the config."""
    return user_config_dir() / "plugin-servers.json"


@dataclass(frozen=True)
class Settings:
    """What the user asked for (defaults < file < environment < flags), compared by
    value. Where each value came from is the command line's (`load_with_sources`);
    where a chat's requests go, fitted to that place, is its `Target` (target.py).

    In sections, each read by the layer it is named for (sections.py): `model` (the
    model, its server or local file, its timeouts: engine/resolve.py, the backends,
    the local server), `limits` (the loop's rounds and calls, the transcript and
    catalog budgets, compaction, images: the engine), `skills` (discovery and the
    catalog's gates), `run` (the sandbox's commands and installs), `storage` (the
    chats store, the environments), `mcp` (the servers and their consent), `ui`
    (the REPL). What several layers read is a field of its own. The loader names
    every setting flat (`run_allow`, as flags and the config file's keys map to it):
    `sections.FLAT` is where each lives, `value` and `replaced` read and set one by
    that name."""

    model: ModelSettings = field(default_factory=ModelSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    skills: SkillsSettings = field(default_factory=SkillsSettings)
    run: RunSettings = field(default_factory=RunSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    tools: bool = True
    workspace: str | None = None
    # Folders that are projects (besides git work trees): started at or below one, it
    # is the workspace unless `workspace` or --workspace names one (workspace/project.py).
    projects: tuple[str, ...] = ()
    # `[hooks]` as the file has it (skillchat/hooks/spec.py reads it); `hooks_enabled`
    # off under `--bare`, which also leaves out the project's config and skills.
    hooks: dict[str, Any] = field(default_factory=dict)
    hooks_enabled: bool = True
    # The project's own files in `.skillchat/` (its per-skill overrides): off under
    # `--bare`, as its config and hooks are.
    project_files: bool = True
    config_path: Path | None = None
    warnings: tuple[str, ...] = ()

    def value(self, name: str) -> Any:
        """The setting the loader calls `name` (`run_allow`: `self.run.allow`)."""
        section, key = FLAT[name]
        return getattr(self if section is None else getattr(self, section), key)

    def replaced(self, **values: Any) -> Settings:
        """These settings with `values`, named as the loader names them (`FLAT`):
        how the loader builds its result from the defaults, and how a `[models.NAME]`
        table (flat keys) or a command (`eval`'s `tools=True`) changes some."""
        own: dict[str, Any] = {}
        changed: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            if name not in FLAT:
                raise TypeError(f"Settings has no setting named {name!r}")
            section, key = FLAT[name]
            if section is None:
                own[key] = value
            else:
                changed.setdefault(section, {})[key] = value
        for section, section_values in changed.items():
            own[section] = replace(getattr(self, section), **section_values)
        return replace(self, **own)

    def resolved_workspace(self, cwd: Path | None = None) -> Path | None:
        """The workspace folder (`~` expanded, relative to the cwd), or None when off."""
        if not self.workspace:
            return None
        return (cwd or Path.cwd()) / Path(self.workspace).expanduser()


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
    entry = settings.model.named.get(model)
    if entry is None:
        return settings.replaced(model=model)
    # A table says where its model runs: a local file (`gguf`) or a server, never
    # the local file the chat ran before it.
    entry = {"model": model, "gguf": None, **entry}
    entry = {k: v for k, v in entry.items() if k == "model" or k not in given}
    return settings.replaced(**entry)


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
    if settings.model.backend not in BACKEND_NAMES:
        raise ConfigError(
            f"{where}: backend must be one of {', '.join(BACKEND_NAMES)}, "
            f"not '{settings.model.backend}'"
        )
    if settings.run.allowed_tools not in ALLOWED_TOOLS_MODES:
        raise ConfigError(
            f"{where}: [run] allowed_tools must be one of {', '.join(ALLOWED_TOOLS_MODES)}, "
            f"not '{settings.run.allowed_tools}'"
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
        value = settings.value(name)
        if value is not None and value < 1:
            raise ConfigError(f"{where}: {name} must be at least 1")
    if not 1 <= settings.run.install_max_mb <= MAX_INSTALL_MB:
        raise ConfigError(f"{where}: run_install_max_mb must be between 1 and {MAX_INSTALL_MB}")
    if not 0 < settings.run.timeout_s <= settings.run.max_timeout_s:
        raise ConfigError(f"{where}: run timeout_s must be > 0 and at most max_timeout_s")
    if (
        settings.model.max_retries < 0
        or settings.model.timeout <= 0
        or settings.model.reply_timeout <= 0
    ):
        raise ConfigError(f"{where}: max_retries must be >= 0, timeout and reply_timeout > 0")
    if settings.model.max_tokens is not None and settings.model.max_tokens < 1:
        raise ConfigError(f"{where}: max_tokens must be at least 1")
    if settings.model.thinking_budget is not None and settings.model.thinking_budget < MIN_THINKING:
        raise ConfigError(f"{where}: thinking_budget must be at least {MIN_THINKING:,}")
    if settings.model.api_base is not None:
        url = urlsplit(settings.model.api_base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise (UsageError if sources.get("api_base") == "flag" else ConfigError)(
                f"api_base '{settings.model.api_base}' is not an http(s) URL: write it as "
                "http://HOST:PORT/v1 (e.g. http://localhost:11434/v1)"
            )
    if settings.model.context_window is not None and settings.model.context_window < 1:
        raise ConfigError(f"{where}: context_window must be at least 1")
    if (
        settings.ui.notify not in ("bell", "osc9", "osc777", "off")
        or settings.ui.notify_after_s < 0
    ):
        raise ConfigError(
            f"{where}: [ui] notify must be bell, osc9, osc777 or off, notify_after_s >= 0"
        )
    if settings.ui.editing_mode not in ("emacs", "vi"):
        raise ConfigError(f"{where}: [ui] editing_mode must be emacs or vi")
    if settings.ui.theme not in ("dark", "light", "auto"):
        raise ConfigError(f"{where}: [ui] theme must be dark, light or auto")
    unknown = sorted(set(settings.mcp.use or ()) - set(settings.mcp.servers))
    if unknown:
        from skillchat.plugin_servers import off_reason

        if off := off_reason(plugin_servers_path(), unknown[0]):
            raise UsageError(f"--mcp {unknown[0]}: {off}")
        known = ", ".join(settings.mcp.servers) or "none configured"
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
    sources: dict[str, str] = dict.fromkeys(FLAT, "default")
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
    settings = Settings().replaced(**values, config_path=config_path, warnings=tuple(warnings))
    _check(settings, sources)
    return settings, sources
