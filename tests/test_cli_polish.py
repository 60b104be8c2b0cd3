"""Small things a newcomer meets first: a question typed without `ask`, `ask --json`
failing, `config init` writing every key, and what Ctrl-D says in the REPL."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from helpers import closed_port, one_line_error, session_options, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.config_file import _FILE_KEYS, read_config_file


def test_a_question_without_ask_and_a_terminal_points_to_print() -> None:
    done = skillchat("what is 2+2")
    line = one_line_error(done, code=2)
    assert "skillchat -p 'QUESTION'" in line
    typo = skillchat("aks", "hi")
    assert typo.returncode == 2 and "Did you mean 'ask'?" in typo.stderr  # click's own


def test_ask_json_fails_with_a_json_object() -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    done = skillchat("ask", "--json", "--api-base", base, "--model", "openai/m", "hi")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == 1 and "cannot connect" in doc["error"]
    assert "cannot connect" in one_line_error(done)


def test_config_init_writes_every_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    done = skillchat("config", "init", "--config", str(path))
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    for section, key in _FILE_KEYS:
        assert re.search(rf"^#? ?{re.escape(key)} =", text, re.M), f"{section}.{key} missing"
    values, warnings = read_config_file(path)
    assert warnings == [] and "api_base" not in values  # commented keys stay unset


def test_ctrl_d_says_how_to_go_on(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    (tmp_path / "none").mkdir()
    server.script(reply("hi there"))
    session = pty_sessions(*session_options(server, tmp_path / "none"))
    session.prompt()
    assert "hi there" in session.run("hello")
    session.send("\x04")
    said = session.expect("goes on with it")
    assert re.search(r"chat ([0-9a-f]{8}) saved: skillchat -c \(or --chat \1\)", said)
    assert session.wait() == 0


def test_help_summaries_are_whole_and_say_model_keys_and_examples() -> None:
    env = {**os.environ, "COLUMNS": "100"}
    for group in ([], ["skills"], ["chats"], ["config"], ["models"]):
        done = skillchat(*group, "--help", env=env)
        assert done.returncode == 0, done.stderr
        commands = done.stdout.split("Commands:")[-1].split("\n\n")[0]
        assert "..." not in commands, f"{group}: a cut summary\n{commands}"
    for argv in ([], ["ask"]):
        text = skillchat(*argv, "--help", env=env).stdout
        assert "Examples:" in text and "gpt-4.1-mini" in text and "OPENAI_API_KEY" in text
        assert "<str>" not in text and "--model MODEL" in text
        assert "Continue the last chat started in this folder." in " ".join(text.split())


def test_help_as_a_command_shows_the_help_and_help_me_is_a_question() -> None:
    root = skillchat("help")
    assert root.returncode == 0 and "Usage: skillchat [OPTIONS] COMMAND" in root.stdout
    nested = skillchat("help", "skills", "list")
    assert nested.returncode == 0 and "Usage: skillchat skills list" in nested.stdout
    question = skillchat("help", "me", "write a poem")  # still a question (no terminal here)
    assert "skillchat -p 'QUESTION'" in one_line_error(question, code=2)


def test_usage_lines_name_arguments_in_capitals() -> None:
    """Typer writes a required argument `{source}`, markup its plain help never
    styles: every command's usage line, and a usage error's, says SOURCE."""
    commands: list[list[str]] = []
    for group in ([], ["skills"], ["chats"], ["config"], ["models"], ["mcp"]):
        listing = skillchat(*group, "--help").stdout.split("Commands:")[-1]
        names = re.findall(r"^  ([a-z][a-z-]*)\s", listing, re.MULTILINE)
        commands += [[*group, name] for name in names]
    for argv in commands:
        usage = skillchat(*argv, "--help").stdout.splitlines()[0]
        assert "{" not in usage, usage
    add = skillchat("skills", "add", "--help").stdout
    assert add.startswith("Usage: skillchat skills add [OPTIONS] SOURCE [NAMES]...")
    missing = skillchat("eval")
    assert (
        missing.returncode == 2 and "Usage: skillchat eval [OPTIONS] QUERIES_FILE" in missing.stderr
    )
