"""`skillchat config init | show | path`: write, inspect and locate the config file."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

import typer

from skillchat.backend_table import PROVIDER_KEY_ENV
from skillchat.cli.common import ConfigOpt, JsonOpt
from skillchat.cli.invocation import load_sourced
from skillchat.config import Settings, find_config_file
from skillchat.config_file import _FILE_KEYS
from skillchat.errors import ConfigError
from skillchat.sections import FLAT
from skillchat.ui.safe import json_text, one_line

app = typer.Typer(no_args_is_help=True)  # its help: cli/app.py

# Provider keys come only from the environment; `show` says which are set, never their value.
PROVIDER_KEYS = (*PROVIDER_KEY_ENV.values(), "AZURE_API_KEY")
_HIDDEN = {"config_path", "warnings", "paths_gate"}  # paths_gate: eval only


def mask(value: str) -> str:
    """A secret as `set (…1a2b)`: enough to tell two keys apart, never enough to use one."""
    return f"set (…{value[-4:]})" if len(value) >= 12 else "set"


def starter_document() -> dict[str, Any]:
    """The starter config: every key at its default, in the file's own layout, but
    `context_max_chars`: set in a file it would win over the model's own context
    window (engine/context_window.py), so the starter leaves it unset."""
    d = Settings()
    return {
        "model": d.model.name,
        "backend": d.model.backend,
        "tools": d.tools,
        "max_tool_rounds": d.limits.max_tool_rounds,
        "timeout": d.model.timeout,
        "reply_timeout": d.model.reply_timeout,
        "max_tool_calls": d.limits.max_tool_calls,
        "max_retries": d.model.max_retries,
        "auto_compact": d.limits.auto_compact,
        "compact_skills_tokens": d.limits.compact_skills_tokens,
        "max_image_bytes": d.limits.max_image_bytes,
        "max_image_side": d.limits.max_image_side,
        "skills": {
            "enabled": d.skills.enabled,
            "directories": list(d.skills.dirs),
            "max_skills": d.skills.max_skills,
            "disabled": list(d.skills.disabled),
            "bundled": d.skills.bundled,
            "strict": d.skills.strict,
            "fixtures": d.skills.fixtures,
            "max_skill_md_bytes": d.skills.max_skill_md_bytes,
            "max_resource_bytes": d.skills.max_resource_bytes,
            "catalog_max_chars": d.limits.catalog_budget,
        },
        "storage": {},
        "run": {
            "allowed_tools": d.run.allowed_tools,
            "enabled": d.run.enabled,
            "allow": d.run.allow,
            "allow_network": d.run.allow_network,
            "allow_write": d.run.allow_write,
            "timeout_s": d.run.timeout_s,
            "max_timeout_s": d.run.max_timeout_s,
            "allow_install": d.run.allow_install,
            "install_max_mb": d.run.install_max_mb,
        },
        "local": {"context_max": d.model.local_context_max},
        "ui": {
            "notify": d.ui.notify,
            "notify_after_s": d.ui.notify_after_s,
            "editing_mode": d.ui.editing_mode,
            "theme": d.ui.theme,
        },
    }


# Keys without a default, as `config init` writes them: commented, with an example.
UNSET_EXAMPLES: dict[tuple[str | None, str], str] = {
    (None, "api_base"): '"http://localhost:11434/v1"',
    (None, "context_max_chars"): "300000",
    (None, "max_tokens"): "4096",
    (None, "thinking_budget"): "8000",
    (None, "workspace"): '"."',
    (None, "projects"): '["~/notes"]',
    (None, "gguf"): '"~/models/qwen2.5-1.5b-instruct-q4_k_m.gguf"',
    (None, "chat_template"): '"~/models/tools.jinja"',
    (None, "context_window"): "32768",
    (None, "vision"): "true",
    ("storage", "path"): '"~/chats.db"',
    ("ui", "status_line"): '["model", "chat", "skills", "tokens", "context"]',
}


def starter_text(dumps: Callable[[dict[str, Any]], str]) -> str:
    """The starter file: `starter_document` section by section, every key commented
    out with its default, then the keys that have no default, with an example."""
    document = starter_document()
    parts = []
    for section in (None, *(k for k, v in document.items() if isinstance(v, dict))):
        values = document if section is None else document[section]
        plain = {k: v for k, v in values.items() if not isinstance(v, dict)}
        # Commented out: a default written as a value would count as the user's own
        # choice (a local model's window would no longer fit the catalog) and would
        # never follow skillchat's defaults when they change.
        text = "".join(f"# {line}\n" for line in dumps(plain).splitlines()) if plain else ""
        missing = [
            f"# {key} = {example}\n"
            for (where, key), example in UNSET_EXAMPLES.items()
            if where == section
        ]
        title = f"[{section}]\n" if section else ""
        parts.append(title + text + "".join(missing))
    return "\n".join(parts)


@app.command("path")
def path_cmd(ctx: typer.Context, config: ConfigOpt = None) -> None:
    """Print the config file path in use (it may not exist yet)."""
    root = ctx.find_root().obj or {}
    path, _ = find_config_file(config or root.get("config"))
    typer.echo(str(path))


@app.command("init")
def init_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter config file, every key commented out."""
    import tomli_w

    root = ctx.find_root().obj or {}
    path, _ = find_config_file(config or root.get("config"))
    if path.exists() and not force:
        raise ConfigError(f"{path}: already exists (use --force to overwrite)")
    header = (
        "# skillchat configuration. Every key is optional; see config.toml.example.\n"
        "# API keys are read from the environment (OPENAI_API_KEY, ...), never from here.\n"
        "# Every key is commented out at its default (or an example value): uncomment\n"
        "# only what you want to choose; the rest follows skillchat and your model.\n\n"
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + starter_text(tomli_w.dumps), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None
    typer.echo(f"wrote {path}")


def _redacted(url: str) -> str:
    from skillchat.redact import redact

    return redact(url)


def effective(settings: Settings) -> dict[str, Any]:
    """The settings as shown: credentials in `api_base` (`user:password@`,
    `?api-key=...`) masked, like API keys, since `config show` output gets pasted
    into bug reports."""
    from skillchat.redact import redact

    values = {name: settings.value(name) for name in FLAT if name not in _HIDDEN}
    values["skill_dirs"] = list(values["skill_dirs"])
    values["context_max_chars"] = settings.limits.budget
    values["catalog_max_chars"] = settings.limits.catalog_budget
    if values.get("api_base"):
        values["api_base"] = redact(values["api_base"])
    # MCP servers by what they run or reach; of `env` and `headers` only the names
    # (a value may be a literal token).
    values["mcp_servers"] = {
        name: {
            "target": server.target(),
            "env": [key for key, _ in server.env],
            "headers": [key for key, _ in server.headers],
            "allow": server.allow if server.allow is True else list(server.allow or ()),
            "enabled": server.enabled,
        }
        for name, server in settings.mcp.servers.items()
    }
    return values


@app.command("show", short_help="Show the settings, their sources, the keys set.")
def show_cmd(ctx: typer.Context, config: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Show the effective settings, where each came from, and which API keys are set."""
    settings, sources = load_sourced(ctx, config)
    values = effective(settings)
    keys = {k: mask(os.environ[k]) for k in PROVIDER_KEYS if os.environ.get(k)}
    from skillchat.cli.doctor_cmd import sandbox_line

    works, sandbox = sandbox_line()
    database = str(settings.storage.database_path())
    # The openai SDK sends to OPENAI_BASE_URL when no api_base is set: say so.
    env_base = os.environ.get("OPENAI_BASE_URL") if not settings.model.api_base else None
    if json_out:
        doc = {
            "config_file": str(settings.config_path) if settings.config_path else None,
            "chats_database": database,
            "openai_base_url": _redacted(env_base) if env_base else None,
            "settings": values,
            "sources": {k: sources.get(k, "default") for k in values},
            "api_keys": keys,
            "sandbox": {"available": works, "detail": sandbox.split(": ", 2)[-1]},
        }
        typer.echo(json_text(doc, indent=2))
        return
    file_line = str(settings.config_path) if settings.config_path else "(none: defaults)"
    typer.echo(f"config file: {one_line(file_line)}")
    # As the file spells them: `[skills]` then `directories = ...`, not `skill_dirs`.
    spelt = {name: (section, key) for (section, key), (name, _) in _FILE_KEYS.items()}
    sections: dict[str | None, list[str]] = {}
    for name, value in values.items():
        section, key = spelt.get(name, (None, name))
        shown = json_text(value) if not isinstance(value, str) else one_line(value)
        line = f"{key} = {shown}  [{sources.get(name, 'default')}]"
        sections.setdefault(section, []).append(line)
    for section, lines in sorted(sections.items(), key=lambda s: s[0] is not None):
        if section is not None:
            typer.echo(f"[{section}]")
        for line in lines:
            typer.echo(line)
    for key in PROVIDER_KEYS:
        typer.echo(f"{key}: {keys.get(key, 'not set')}")
    if env_base:
        where = one_line(_redacted(env_base))
        typer.echo(f"OPENAI_BASE_URL: {where} (where the openai backend sends requests)")
    typer.echo(f"chats database: {one_line(database)}")
    typer.echo(sandbox)
