"""The command line imports and builds only the command run: `--help` lists the
root's commands from its table (cli/app.py), `skills` builds only the subcommand
named (cli/skills_cmd.py). What the user sees is the same as if all were built."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from skillchat.cli import root_cmd as cli_app
from skillchat.cli import skills_cmd

REPO = Path(__file__).resolve().parents[1]
BUNDLED = str(REPO / "skillchat" / "bundled_skills")

PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from skillchat.cli.app import run
with redirect_stdout(io.StringIO()):
    code = run(sys.argv[1:])
print(json.dumps({"code": code, "cli": sorted(m for m in sys.modules
                                               if m.startswith("skillchat.cli."))}))
"""


@pytest.mark.parametrize("limit", [20, 45, 74, 200])
def test_the_root_listing_is_the_one_click_makes_from_the_built_commands(limit: int) -> None:
    for name in cli_app._COMMANDS:
        built = cli_app._subcommand(name)
        assert cli_app._short_help(name, limit) == built.get_short_help_str(limit), name


def test_the_skills_table_names_each_command_where_it_is_registered() -> None:
    for module in set(skills_cmd.SUBCOMMANDS.values()):
        import_module(module)
    registered = {
        info.name: info.callback.__module__ if info.callback else None
        for info in skills_cmd.app.registered_commands
    }
    assert registered == skills_cmd.SUBCOMMANDS


def _cli_modules(*argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return [m.removeprefix("skillchat.cli.") for m in report["cli"]]


def test_help_imports_no_subcommand() -> None:
    assert _cli_modules("--help") == [
        "app",
        "invocation",
        "lazy",
        "opts",
        "question",
        "root_cmd",
        "session_options",
    ]


def test_a_skills_command_imports_its_own_module_only() -> None:
    assert "skills_add_cmd" not in _cli_modules("skills", "list", "--skills-dir", BUNDLED)
    found = _cli_modules("skills", "validate", BUNDLED)
    assert "skills_validate_cmd" in found
    assert not {"skills_add_cmd", "skills_deps_cmd", "skills_usage_cmd"} & set(found)


def test_ask_help_imports_ask_alone() -> None:
    assert _cli_modules("ask", "--help") == [
        "app",
        "ask_cmd",
        "ask_line",
        "invocation",
        "lazy",
        "opts",
        "question",
        "root_cmd",
        "session_options",
    ]
