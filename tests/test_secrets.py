"""No key on the screen: a provider error body that echoes the API key (and another
provider's key, and a bearer token), through `ask` with and without `--debug`, and
credentials in `api_base` in `config show` and in error lines."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import closed_port, one_line_error, skillchat
from openai_server import ScriptedServer, error

from skillchat.redact import redact

OPENAI_KEY = "sk-proj-SECRETopenai0123456789abcdef"
LOCAL_KEY = "proxy-SECRETlocal-7f3a9c2e1b5d"  # not key-shaped: found by its variable
OTHER_KEY = "SECRETanthropic-0123456789"
TOKEN = "eyJSECRETbearer.0123456789"


def ask(server_url: str, *args: str, key: str, debug: bool = False) -> subprocess.CompletedProcess:
    """`skillchat ask` with both keys set, no retries (a 500 is answered once)."""
    env = {**os.environ, "OPENAI_API_KEY": key, "ANTHROPIC_API_KEY": OTHER_KEY}
    config = Path("no-retries.toml")  # the test's own working directory
    config.write_text("max_retries = 0\n")
    argv = ["ask", "--config", str(config), "--model", "openai/test-model"]
    argv += ["--api-base", server_url, "--skills-dir", ".", *args, "hi"]
    return skillchat(*(["--debug"] if debug else []), *argv, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("key", [OPENAI_KEY, LOCAL_KEY])
@pytest.mark.parametrize("status", [400, 401, 500])
def test_an_echoed_key_is_never_printed(server: ScriptedServer, key: str, status: int) -> None:
    echo = f"Incorrect API key provided: {key}; also {OTHER_KEY}; Authorization: Bearer {TOKEN}"
    server.script(error(status, message=echo), error(status, message=echo))
    plain = ask(server.base_url, key=key)
    one_line_error(plain)
    debug = ask(server.base_url, key=key, debug=True)
    assert debug.returncode == 1 and "Traceback" in debug.stderr  # the chain is shown...
    assert "Bearer ***" in debug.stderr or status == 401  # ...with its secrets masked
    for done in (plain, debug):
        assert "SECRET" not in done.stdout + done.stderr, done.stderr


API_BASE = "https://bob:hunter2SECRET@proxy.example/v1?api-key=QWERTYSECRET&region=eu"


def test_config_show_masks_credentials_in_api_base(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'api_base = "{API_BASE}"\n')
    text = skillchat("config", "show", "--config", str(config))
    assert "SECRET" not in text.stdout
    assert "api_base = https://***@proxy.example/v1?api-key=***&region=eu  [file]" in text.stdout
    shown = skillchat("config", "show", "--json", "--config", str(config))
    assert "SECRET" not in shown.stdout
    assert json.loads(shown.stdout)["settings"]["api_base"].startswith("https://***@proxy")


@pytest.mark.parametrize("debug", [False, True])
def test_error_lines_mask_credentials_in_api_base(debug: bool) -> None:
    url = f"http://bob:hunter2SECRET@127.0.0.1:{closed_port()}/v1?key=QWERTYSECRET"
    done = ask(url, key=OPENAI_KEY, debug=debug)
    if not debug:
        assert "cannot connect" in one_line_error(done)
    assert done.returncode == 1 and "SECRET" not in done.stderr, done.stderr


def test_what_redact_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_SECRET0123")
    monkeypatch.setenv("SHORT_KEY", "1")  # too short to be a key: "1" stays readable
    text = redact(
        "hf_SECRET0123 Bearer abc.SECRET sk-ant-SECRET012 https://u:SECRET@h/?token=SECRET&a=1 1"
    )
    assert text == "*** Bearer *** sk-*** https://***@h/?token=***&a=1 1"
