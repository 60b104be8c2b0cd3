"""Named models: `[models.NAME]` tables chosen with `--model NAME`, the command line
winning over the table, bad tables as one-line config errors, and a named model's
`context_window` as the first source of the context budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import one_line_error, skillchat
from openai_server import ScriptedServer, reply

from skillchat.config import load_settings, load_with_sources
from skillchat.engine.context_window import budget_for_window, context_budget
from skillchat.errors import ConfigError

TABLE = """
[models.qwen]
model = "openai/Qwen/Qwen2.5-7B-Instruct"
api_base = "{base}"
backend = "openai"
max_tokens = 321
context_window = 2048
"""


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_a_named_model_brings_its_server_and_limits(server: ScriptedServer, tmp_path: Path) -> None:
    path = config(tmp_path, TABLE.format(base=server.base_url))
    server.script(reply("from qwen"))
    done = skillchat("ask", "--config", str(path), "--model", "qwen", "--no-tools", "hi")
    assert done.returncode == 0 and done.stdout.strip() == "from qwen", done.stderr
    body = server.completions[0].body
    assert body["model"] == "Qwen/Qwen2.5-7B-Instruct" and body["max_tokens"] == 321
    settings, sources = load_with_sources(path, model="qwen")
    assert settings.model.context_window == 2048 and sources["api_base"] == "models.qwen"


def test_the_command_line_wins_over_the_table(server: ScriptedServer, tmp_path: Path) -> None:
    path = config(tmp_path, TABLE.format(base="http://127.0.0.1:9/v1"))
    settings, sources = load_with_sources(
        path, model="qwen", api_base=server.base_url, max_tokens=50
    )
    assert settings.model.api_base == server.base_url and settings.model.max_tokens == 50
    assert settings.model.name == "openai/Qwen/Qwen2.5-7B-Instruct"
    assert sources["api_base"] == "flag" and sources["model"] == "models.qwen"
    assert load_settings(path).model.name != "openai/Qwen/Qwen2.5-7B-Instruct"  # only when named


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[models.x]\nmodel = "m"\ncolour = "red"\n',
            r"config\.toml:3: unknown key 'colour' in \[models\.x\]",
        ),
        (
            '[models.x]\nmodel = "m"\napi_key = "sk-secret"\n',
            r"api_key is not read from a config file",
        ),
        ('[models.x]\napi_base = "http://h/v1"\n', r"\[models\.x\] needs a 'model'"),
        (
            '[models.x]\nmodel = "m"\nmax_tokens = "many"\n',
            r"config\.toml:3: \[models\.x\] max_tokens must be an integer",
        ),
        ("models = 3\n", r"'models' must be tables"),
    ],
)
def test_a_bad_table_is_a_config_error(tmp_path: Path, table: str, message: str) -> None:
    path = config(tmp_path, table)
    with pytest.raises(ConfigError, match=message):
        load_settings(path)
    done = skillchat("config", "show", "--config", str(path))
    line = one_line_error(done, code=2) if done.returncode == 2 else one_line_error(done)
    assert "sk-secret" not in line + done.stdout


def test_context_window_is_the_first_source_of_the_budget(tmp_path: Path) -> None:
    path = config(tmp_path, TABLE.format(base="http://127.0.0.1:9/v1"))
    settings = load_settings(path, model="qwen")
    messages = [{"role": "user", "content": "x" * 10_000}]
    asked: list[bool] = []

    def window() -> int | None:
        asked.append(True)
        return 1_000_000

    assert context_budget(settings, window, messages) == budget_for_window(
        2048, settings.limits.budget
    )
    assert asked == []  # the user's word: the server and the map are not asked


@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_a_server_model_id_with_a_slash_goes_to_that_server_as_is(
    server: ScriptedServer, backend: str
) -> None:
    server.script(reply("served"))
    done = skillchat(
        "ask", "--no-tools", "--backend", backend, "--model", "Qwen/Qwen2.5-7B-Instruct",
        "--api-base", server.base_url, "hi",
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "served", done.stderr
    assert server.completions[0].body["model"] == "Qwen/Qwen2.5-7B-Instruct"


@pytest.mark.parametrize("base", ["localhost:8080/v1", "ftp://h/v1", "http:///v1"])
def test_a_malformed_api_base_is_a_usage_error_at_once(base: str) -> None:
    done = skillchat("ask", "--api-base", base, "hi")
    assert "is not an http(s) URL" in one_line_error(done, code=2)


def test_openai_base_url_is_reported_as_the_server_it_is(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    server.script(reply("from the env server"))
    done = skillchat("ask", "--model", "gpt-4.1-mini", "--no-tools", "hi")
    assert done.returncode == 0 and done.stdout.strip() == "from the env server", done.stderr
    assert "$" not in done.stderr  # not priced at OpenAI's prices
    assert server.completions[0].body["model"] == "gpt-4.1-mini"


def test_config_show_names_the_chats_database_and_openai_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://me:s3cret@127.0.0.1:9/v1")
    done = skillchat("config", "show")
    assert done.returncode == 0, done.stderr
    assert "chats database: " in done.stdout and "chats.db" in done.stdout
    assert "OPENAI_BASE_URL: http://***@127.0.0.1:9/v1" in done.stdout
    assert "s3cret" not in done.stdout
