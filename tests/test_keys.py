"""`skillchat keys set|list|remove`: provider keys in a private file, used where the
environment has none (skillchat/keys.py). Each run is `python -m skillchat` in a
process of its own: a stored key goes into that process's environment."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from helpers import model_for, skillchat
from openai_server import ScriptedServer, reply

KEY = "sk-stored-0123456789abcdef"


def keys_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "skillchat" / "keys.json"


def run(*args: str, **options):  # type: ignore[no-untyped-def]
    return skillchat(*args, subprocess=True, **options)


def ask(server: ScriptedServer, *args: str, **options):  # type: ignore[no-untyped-def]
    target = ["--model", model_for(server), "--api-base", server.base_url]
    return run("ask", *target, *args, "hi", **options)


def test_a_stored_key_is_private_used_and_never_shown(server: ScriptedServer) -> None:
    stored = run("keys", "set", "openai", input=KEY + "\n")
    assert stored.returncode == 0, stored.stderr
    assert KEY not in stored.stdout + stored.stderr
    assert stat.S_IMODE(keys_file().stat().st_mode) == 0o600
    assert json.loads(keys_file().read_text()) == {"OPENAI_API_KEY": KEY}
    listed = run("keys", "list")
    assert listed.stdout.splitlines() == ["OPENAI_API_KEY"] and KEY not in listed.stdout
    server.script(reply("answer"), reply("answer"))
    assert ask(server).returncode == 0
    assert server.completions[-1].headers["authorization"] == f"Bearer {KEY}"
    env = {**os.environ, "OPENAI_API_KEY": "sk-from-the-environment-0000"}
    assert ask(server, env=env).returncode == 0  # the environment wins
    assert server.completions[-1].headers["authorization"] == "Bearer sk-from-the-environment-0000"
    overridden = run("keys", "list", env=env)
    assert overridden.stdout.splitlines() == ["OPENAI_API_KEY  (the environment's wins)"]
    removed = run("keys", "remove", "openai")
    assert removed.returncode == 0 and json.loads(keys_file().read_text()) == {}


def test_a_key_the_provider_echoes_is_masked(server: ScriptedServer) -> None:
    run("keys", "set", "OPENAI_API_KEY", input=KEY + "\n")
    server.script({"error": 401, "message": f"Incorrect API key provided: {KEY}"})
    done = ask(server, "--debug")  # the traceback holds the provider's error body
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert KEY not in done.stdout + done.stderr


def test_a_name_that_is_no_key_name_stores_nothing() -> None:
    done = run("keys", "set", "PATH", input=KEY + "\n")
    assert done.returncode == 2 and "is no key name" in done.stderr
    assert not keys_file().exists()
