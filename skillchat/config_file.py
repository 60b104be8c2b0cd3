"""The config file's TOML, read and type-checked into settings by their flat names.

Every key the file may hold (`_FILE_KEYS`) and its tables (`[models.NAME]`,
`[packages]`, `[skill_models]`; `[mcp.NAME]` in mcp_config.py), each error naming
the file and its line, and unknown keys as warnings with the nearest known one.
It sits below config.py, which finds the file and layers what it read between
the defaults and the environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillchat.errors import ConfigError

if TYPE_CHECKING:  # read only when there is a config file
    import tomllib


# (section, key) in the TOML file -> (the setting's flat name, expected type(s)); where
# each flat name lives in `Settings` is sections.py's FLAT.
def _near_key(dotted: str) -> str:
    """The hint after "unknown key": `; did you mean '[skills] directories'?` for a
    misspelt key or a setting's own name (`skill_dirs`); "" when none is near."""
    from difflib import get_close_matches

    spelt = {
        (f"{section}.{key}" if section else key): (f"[{section}] {key}" if section else key)
        for section, key in _FILE_KEYS
    }
    by_name = {name: (section, key) for (section, key), (name, _) in _FILE_KEYS.items()}
    bare = dotted.rpartition(".")[2]
    if bare in by_name:
        section, key = by_name[bare]
        return f"; did you mean '{f'[{section}] {key}' if section else key}'?"
    near = get_close_matches(dotted, list(spelt), n=1, cutoff=0.75)
    return f"; did you mean '{spelt[near[0]]}'?" if near else ""


_FILE_KEYS: dict[tuple[str | None, str], tuple[str, tuple[type, ...]]] = {
    (None, "model"): ("model", (str,)),
    (None, "api_base"): ("api_base", (str,)),
    (None, "backend"): ("backend", (str,)),
    (None, "tools"): ("tools", (bool,)),
    (None, "max_tool_rounds"): ("max_tool_rounds", (int,)),
    (None, "context_max_chars"): ("context_max_chars", (int,)),
    (None, "auto_compact"): ("auto_compact", (bool,)),
    (None, "compact_skills_tokens"): ("compact_skills_tokens", (int,)),
    (None, "timeout"): ("timeout", (int, float)),
    (None, "reply_timeout"): ("reply_timeout", (int, float)),
    (None, "max_tokens"): ("max_tokens", (int,)),
    (None, "thinking_budget"): ("thinking_budget", (int,)),
    (None, "max_tool_calls"): ("max_tool_calls", (int,)),
    (None, "max_retries"): ("max_retries", (int,)),
    (None, "workspace"): ("workspace", (str,)),
    (None, "projects"): ("projects", (list,)),
    (None, "gguf"): ("gguf", (str,)),
    (None, "chat_template"): ("chat_template", (str,)),
    (None, "context_window"): ("context_window", (int,)),
    (None, "vision"): ("vision", (bool,)),
    (None, "max_image_bytes"): ("max_image_bytes", (int,)),
    (None, "max_image_side"): ("max_image_side", (int,)),
    ("local", "context_max"): ("local_context_max", (int,)),
    ("skills", "enabled"): ("skills_enabled", (bool,)),
    ("skills", "directories"): ("skill_dirs", (list,)),
    ("skills", "max_skills"): ("max_skills", (int,)),
    ("skills", "disabled"): ("skills_disabled", (list,)),
    ("skills", "bundled"): ("skills_bundled", (bool,)),
    ("skills", "strict"): ("skills_strict", (bool,)),
    ("skills", "fixtures"): ("skills_fixtures", (bool,)),
    ("skills", "max_skill_md_bytes"): ("max_skill_md_bytes", (int,)),
    ("skills", "max_resource_bytes"): ("max_resource_bytes", (int,)),
    ("skills", "catalog_max_chars"): ("catalog_max_chars", (int,)),
    ("storage", "path"): ("storage_path", (str,)),
    ("run", "allowed_tools"): ("run_allowed_tools", (str,)),
    ("run", "enabled"): ("run_enabled", (bool,)),
    ("run", "allow"): ("run_allow", (bool,)),
    ("run", "allow_network"): ("run_allow_network", (bool,)),
    ("run", "allow_write"): ("run_allow_write", (bool,)),
    ("run", "timeout_s"): ("run_timeout_s", (int, float)),
    ("run", "max_timeout_s"): ("run_max_timeout_s", (int, float)),
    ("run", "allow_install"): ("run_allow_install", (bool,)),
    ("run", "install_max_mb"): ("run_install_max_mb", (int,)),
    ("ui", "status_line"): ("ui_status_line", (list,)),
    ("ui", "notify"): ("ui_notify", (str,)),
    ("ui", "editing_mode"): ("ui_editing_mode", (str,)),
    ("ui", "theme"): ("ui_theme", (str,)),
    ("ui", "notify_after_s"): ("ui_notify_after_s", (int, float)),
}
_SECTIONS = {"skills", "storage", "run", "local", "ui"}
_STRING_LISTS = {"skill_dirs", "skills_disabled", "projects", "ui_status_line"}
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", list: "a list"}


def _toml_error(path: Path, err: tomllib.TOMLDecodeError) -> ConfigError:
    # tomllib says "Invalid value (at line 3, column 7)"; turn it into "file:3: ...".
    msg = str(err)
    lineno = getattr(err, "lineno", None)
    if lineno is None and "(at line " in msg:
        try:
            lineno = int(msg.rsplit("(at line ", 1)[1].split(",")[0])
        except ValueError:
            lineno = None
    problem = msg.split(" (at line ")[0]
    where = f"{path}:{lineno}" if lineno else str(path)
    return ConfigError(f"{where}: invalid TOML: {problem}")


def _line_of(text: str, section: str | None, key: str) -> int | None:
    """Best-effort line number of `key` (within `[section]`) for error messages."""
    current: str | None = None
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line.strip("[] ")
        elif current == section and line.split("=", 1)[0].strip().strip('"') == key:
            return i
    return None


def read_config_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Parse and type-check a config file into settings by flat name (+ warnings)."""
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(path, exc) from None

    values: dict[str, Any] = {}
    warnings: list[str] = []
    if "models" in data:
        values["named_models"] = _named_models(path, text, data.pop("models"))
    if "mcp" in data:  # the module and its dataclass load only for a config that has one
        from skillchat.mcp_config import mcp_servers

        values["mcp_servers"] = mcp_servers(path, data.pop("mcp"))
    if "packages" in data:
        values["skill_packages"] = _skill_packages(path, text, data.pop("packages"))
    if "skill_models" in data:
        values["skill_models"] = _skill_models(path, text, data.pop("skill_models"))
    if "hooks" in data:  # read by skillchat/hooks/spec.py: a bad hook is one line there
        values["hooks"] = data.pop("hooks")
    for top_key, top_value in data.items():
        items: list[tuple[str | None, str, Any]]
        if top_key in _SECTIONS and isinstance(top_value, dict):
            items = [(top_key, k, v) for k, v in top_value.items()]
        else:
            items = [(None, top_key, top_value)]
        for section, key, value in items:
            spec = _FILE_KEYS.get((section, key))
            dotted = f"{section}.{key}" if section else key
            if spec is None:
                warnings.append(f"{path}: unknown key '{dotted}' ignored{_near_key(dotted)}")
                continue
            name, types = spec
            ok = isinstance(value, types) and not (bool not in types and isinstance(value, bool))
            if ok and name in _STRING_LISTS:
                ok = all(isinstance(v, str) for v in value)
            if not ok:
                line = _line_of(text, section, key)
                where = f"{path}:{line}" if line else str(path)
                want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
                if name in _STRING_LISTS:
                    want = "a list of strings"
                raise ConfigError(f"{where}: '{dotted}' must be {want}")
            values[name] = tuple(value) if name in _STRING_LISTS else value
    return values, warnings


def _skill_packages(path: Path, text: str, table: Any) -> dict[str, tuple[str, ...]]:
    """`[packages]`: skill name -> the requirements its scripts need and it does not
    declare (`skill-creator = ["pyyaml"]`). Each is checked when it is installed."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'packages' must be a table: [packages]")
    out: dict[str, tuple[str, ...]] = {}
    for skill, wanted in table.items():
        if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
            line = _line_of(text, "packages", skill)
            where = f"{path}:{line}" if line else str(path)
            raise ConfigError(f"{where}: 'packages.{skill}' must be a list of strings")
        out[skill] = tuple(wanted)
    return out


def _skill_models(path: Path, text: str, table: Any) -> dict[str, str]:
    """`[skill_models]`: skill name -> model (`pdf = "local-qwen"`). A table of its
    own, like `[packages]`, because `[skills.NAME]` would collide with `[skills]`
    keys that are valid skill names too (`strict`, `enabled`, `disabled`...)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'skill_models' must be a table: [skill_models]")
    for skill, model in table.items():
        if not isinstance(model, str) or not model.strip():
            line = _line_of(text, "skill_models", skill)
            where = f"{path}:{line}" if line else str(path)
            raise ConfigError(f"{where}: 'skill_models.{skill}' must be a model name")
    return dict(table)


# What a `[models.NAME]` table may set: the settings of one model and its server.
MODEL_KEYS: dict[str, tuple[str, tuple[type, ...]]] = {
    "model": ("model", (str,)),
    "api_base": ("api_base", (str,)),
    "backend": ("backend", (str,)),
    "max_tokens": ("max_tokens", (int,)),
    "context_window": ("context_window", (int,)),
    "vision": ("vision", (bool,)),
    "gguf": ("gguf", (str,)),  # a local model file, run by the embedded llama.cpp
}


def _named_models(path: Path, text: str, tables: Any) -> dict[str, dict[str, Any]]:
    """`[models.NAME]` tables, checked: each needs `model`, known keys of the right
    type, and never an API key (keys live in environment variables)."""
    if not isinstance(tables, dict):
        raise ConfigError(f"{path}: 'models' must be tables: [models.NAME]")
    named: dict[str, dict[str, Any]] = {}
    for name, table in tables.items():
        section = f"models.{name}"
        line = _line_of(text, section, "model") or _line_of(text, section, "api_key")
        where = f"{path}:{line}" if line else str(path)
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: 'models.{name}' must be a table: [models.{name}]")
        if "api_key" in table:
            raise ConfigError(
                f"{where}: [models.{name}] api_key is not read from a config file: set the "
                "key in its environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY...)"
            )
        entry: dict[str, Any] = {}
        for key, value in table.items():
            spec = MODEL_KEYS.get(key)
            key_line = _line_of(text, section, key)
            at = f"{path}:{key_line}" if key_line else str(path)
            if spec is None:
                known = ", ".join(MODEL_KEYS)
                raise ConfigError(f"{at}: unknown key '{key}' in [models.{name}] ({known})")
            field_name, types = spec
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                want = _TYPE_NAMES.get(types[0], types[0].__name__)
                raise ConfigError(f"{at}: [models.{name}] {key} must be {want}")
            entry[field_name] = value
        if "model" not in entry and "gguf" not in entry:  # a file names its own model
            raise ConfigError(f"{where}: [models.{name}] needs a 'model' (or a 'gguf' file)")
        named[name] = entry
    return named
