"""Configuration: lookup order, precedence, broken files, and the `config` commands."""

from __future__ import annotations

import json
import tomllib
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from helpers import skillchat

from skillchat.backend_table import BACKEND_NAMES
from skillchat.config import Settings, load_settings, load_with_sources
from skillchat.config_file import _FILE_KEYS
from skillchat.engine.context_window import user_set
from skillchat.errors import ConfigError
from skillchat.sections import FLAT

REPO = Path(__file__).resolve().parents[1]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_any_file(isolated_env: Path) -> None:
    s = load_settings()
    assert s == load_settings() and s != load_settings(model="other")  # compared by value
    assert s.config_path is None
    assert (
        s.skills.enabled is True and s.limits.max_tool_rounds == 20 and s.skills.max_skills == 1000
    )
    assert s.skills.max_skill_md_bytes == 200_000 and s.skills.max_resource_bytes == 2_000_000
    assert s.skills.dirs[:3] == ("./skills", "./.agents/skills", "./.claude/skills")
    assert s.skills.dirs[-1] == str(isolated_env / ".config" / "skillchat" / "skills")
    assert s.storage.database_path() == isolated_env / ".local/share/skillchat/chats.db"


def test_every_setting_has_one_flat_name_and_one_place() -> None:
    """The loader's flat names (flags, config keys, `config show`) and the sections'
    fields are one table: a field without its name could never be set."""
    places = {
        (section.name, f.name)
        for section in fields(Settings)
        if is_dataclass(section.default_factory)
        for f in fields(section.default_factory)
    } | {(None, f.name) for f in fields(Settings) if not is_dataclass(f.default_factory)}
    assert sorted(FLAT.values(), key=str) == sorted(places, key=str)
    assert all(file_name in FLAT for file_name, _ in _FILE_KEYS.values())
    changed = Settings().replaced(run_allow=True, skill_dirs=("x",), model="m")
    assert (changed.run.allow, changed.skills.dirs, changed.model.name) == (True, ("x",), "m")
    assert changed.value("run_allow") is True and changed != Settings()
    with pytest.raises(TypeError, match="no setting named 'runallow'"):
        Settings().replaced(runallow=True)


def test_user_config_file_is_found_in_xdg_config_home(isolated_env: Path) -> None:
    write(isolated_env / ".config/skillchat/config.toml", 'model = "from-file"\n')
    s, sources = load_with_sources()
    assert s.model.name == "from-file" and sources["model"] == "file"


def test_precedence_flag_over_env_over_file(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write(isolated_env / "c.toml", 'model = "file"\nbackend = "litellm"\n')
    monkeypatch.setenv("SKILLCHAT_CONFIG", str(cfg))
    assert load_settings().model.name == "file"
    monkeypatch.setenv("SKILLCHAT_MODEL", "env")
    assert load_settings().model.name == "env"
    s, sources = load_with_sources(model="flag")
    assert (s.model.name, sources["model"], s.model.backend) == ("flag", "flag", "litellm")


def test_explicit_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: config file not found"):
        load_settings(tmp_path / "missing.toml")


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    cfg = write(tmp_path / "bad.toml", 'model = "ok"\n\n[skills]\nenabled = yes\n')
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert str(info.value).startswith(f"{cfg}:4: invalid TOML")


def test_wrong_type_names_key_and_line(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[skills]\nmax_skills = "many"\n')
    with pytest.raises(ConfigError, match=r"c\.toml:2: 'skills\.max_skills' must be an integer"):
        load_settings(cfg)
    cfg = write(tmp_path / "d.toml", "tools = 1\n")
    with pytest.raises(ConfigError, match="'tools' must be true or false"):
        load_settings(cfg)
    cfg = write(tmp_path / "e.toml", "[skills]\ndirectories = [1]\n")
    with pytest.raises(ConfigError, match="list of strings"):
        load_settings(cfg)


def test_bad_values_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="backend must be one of"):
        load_settings(write(tmp_path / "a.toml", 'backend = "magic"\n'))
    with pytest.raises(ConfigError, match="max_tool_rounds must be at least 1"):
        load_settings(write(tmp_path / "b.toml", "max_tool_rounds = 0\n"))


def test_the_backend_names_are_the_tables(tmp_path: Path) -> None:
    """The config file and `--backend` accept the backend table's names, no list of
    their own: a new backend is its module and its row."""
    for name in BACKEND_NAMES:
        loaded = load_settings(write(tmp_path / f"{name}.toml", f'backend = "{name}"\n'))
        assert loaded.model.backend == name
    done = skillchat("ask", "--backend", "nope", "hi")
    assert done.returncode == 2
    assert ", ".join(f"'{name}'" for name in BACKEND_NAMES) in done.stderr


def test_unknown_keys_are_warnings(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path / "c.toml", 'colour = "red"\n[skills]\nfoo = 1\n'))
    assert any("unknown key 'colour'" in w for w in s.warnings)
    assert any("unknown key 'skills.foo'" in w for w in s.warnings)
    near = load_settings(write(tmp_path / "d.toml", 'skill_dirs = ["x"]\n[run]\nalow = true\n'))
    assert any(w.endswith("'skill_dirs' ignored; did you mean '[skills] directories'?")
               for w in near.warnings)  # fmt: skip
    assert any(w.endswith("'run.alow' ignored; did you mean '[run] allow'?") for w in near.warnings)


def test_non_utf8_and_directory_configs(tmp_path: Path) -> None:
    bad = tmp_path / "latin.toml"
    bad.write_bytes(b'model = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(bad)
    with pytest.raises(ConfigError, match="is a directory"):
        load_settings(tmp_path)


def test_relative_and_home_skill_dirs(isolated_env: Path, tmp_path: Path) -> None:
    s = load_settings(skill_dirs=("rel", "~/abs"))
    assert s.skills.resolved_dirs(tmp_path) == [tmp_path / "rel", isolated_env / "abs"]


# --- the commands, as a user runs them ----------------------------------------------------


def test_config_init_writes_a_loadable_starter_and_refuses_to_overwrite(
    isolated_env: Path,
) -> None:
    done = skillchat("config", "init")
    target = isolated_env / ".config/skillchat/config.toml"
    assert done.returncode == 0 and str(target) in done.stdout
    text = target.read_text()
    doc = tomllib.loads(text)
    # Every key is listed commented out at its default: none counts as the user's choice.
    assert f'# model = "{Settings().model.name}"' in text and "# max_skills = 1000" in text
    assert '# allowed_tools = "approve"' in text and "model" not in doc
    assert all(not values for values in doc.values())
    assert load_settings().config_path == target
    assert not user_set(load_settings(), "catalog_max_chars")
    # Left unset, so the context budget still follows the model's window.
    assert "context_max_chars" not in doc
    assert not user_set(load_settings(), "context_max_chars")
    again = skillchat("config", "init")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert "Traceback" not in again.stderr
    assert skillchat("config", "init", "--force").returncode == 0


def test_config_path_follows_flag_and_env(isolated_env: Path, tmp_path: Path) -> None:
    assert skillchat("config", "path").stdout.strip() == str(
        isolated_env / ".config/skillchat/config.toml"
    )
    other = tmp_path / "x.toml"
    assert skillchat("config", "path", "--config", str(other)).stdout.strip() == str(other)
    assert skillchat("--config", str(other), "config", "path").stdout.strip() == str(other)


def test_config_show_masks_keys_and_reports_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-very-secret-value-9f8e"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    cfg = write(tmp_path / "c.toml", 'model = "m1"\n')
    done = skillchat("config", "show", "--json", "--config", str(cfg))
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout and secret[:-4] not in done.stdout
    doc = json.loads(done.stdout)
    assert doc["settings"]["model"] == "m1" and doc["sources"]["model"] == "file"
    assert doc["api_keys"]["OPENAI_API_KEY"] == "set (…9f8e)"
    text = skillchat("config", "show", "--config", str(cfg))
    assert secret not in text.stdout and "model = m1  [file]" in text.stdout
    # The keys as the file spells them, under their section.
    assert "skill_dirs" not in text.stdout and "\n[skills]\nenabled = true" in text.stdout
    assert "\ndirectories = [" in text.stdout


def test_broken_config_is_one_line_and_exit_1(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", "model = \n")
    done = skillchat("config", "show", "--config", str(cfg))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and f"{cfg}:1: invalid TOML" in done.stderr
    debug = skillchat("--debug", "config", "show", "--config", str(cfg))
    assert "Traceback" in debug.stderr


def test_usage_error_exits_2() -> None:
    done = skillchat("config", "show", "--no-such-flag")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_version() -> None:
    done = skillchat("--version")
    assert done.returncode == 0 and done.stdout.startswith("skillchat ")


def test_example_config_documents_every_key_and_loads_cleanly() -> None:
    import re

    from skillchat.config_file import _FILE_KEYS, read_config_file

    text = (REPO / "config.toml.example").read_text()
    for section, key in _FILE_KEYS:
        assert re.search(rf"^#? ?{re.escape(key)} =", text, re.M), f"{section}.{key} undocumented"
    _, warnings = read_config_file(REPO / "config.toml.example")
    assert warnings == []


def test_run_allowed_tools_is_one_of_three_modes(tmp_path: Path) -> None:
    assert load_settings().run.allowed_tools == "approve"
    cfg = write(tmp_path / "r.toml", '[run]\nallowed_tools = "restrict"\n')
    s, sources = load_with_sources(cfg)
    assert s.run.allowed_tools == "restrict" and sources["run_allowed_tools"] == "file"
    with pytest.raises(ConfigError, match="allowed_tools must be one of approve, restrict, ignore"):
        load_settings(write(tmp_path / "b.toml", '[run]\nallowed_tools = "yes"\n'))
    with pytest.raises(ConfigError, match=r"b2\.toml:2: 'run\.allowed_tools' must be a string"):
        load_settings(write(tmp_path / "b2.toml", "[run]\nallowed_tools = true\n"))


def test_reply_bounds_from_the_file_and_flags(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("reply_timeout = 30\nmax_tokens = 512\nmax_tool_calls = 4\n")
    settings = load_settings(path)
    assert (
        settings.model.reply_timeout,
        settings.model.max_tokens,
        settings.limits.max_tool_calls,
    ) == (30, 512, 4)
    flagged = load_settings(path, reply_timeout=5.5, max_tokens=64)
    assert (flagged.model.reply_timeout, flagged.model.max_tokens) == (5.5, 64)
    assert Settings().model.max_tokens is None  # unset: the server's own limit
    for bad, message in (
        ("reply_timeout = 0", "reply_timeout > 0"),
        ("max_tokens = 0", "max_tokens must be at least 1"),
        ("max_tool_calls = 0", "max_tool_calls must be at least 1"),
        ('max_tokens = "many"', "'max_tokens' must be an integer"),
    ):
        path.write_text(bad + "\n")
        with pytest.raises(ConfigError, match=message):
            load_settings(path)
