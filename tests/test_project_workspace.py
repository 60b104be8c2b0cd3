"""The folder you start in is the workspace when it is a project: a git work tree
(its top) or a folder in the config's `projects`; said on `ask`'s stderr and in the
banner, off with `--no-workspace`. An `@path` that names nothing is said."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import sent
from helpers import ask_in, session_options, write_files
from openai_server import ScriptedServer, reply
from pty_session import PtySession

CART = "def total(items):\n    return sum(items)\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "shop", {"src/cart.py": CART, "README.md": "# shop\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def attached_content(server: ScriptedServer) -> str | None:
    for message in sent(server):
        if message.get("role") == "tool":
            return str(json.loads(message["content"])["file"]["content"])
    return None


def test_at_path_in_a_git_work_tree_attaches_without_w(server: ScriptedServer, repo: Path) -> None:
    server.script(reply("it sums"))
    done = ask_in(server, "what does @src/cart.py do?", cwd=repo / "src")  # below the top
    assert done.returncode == 0, done.stderr
    assert f"workspace: {repo} (git work tree; --no-workspace to turn it off)" in done.stderr
    assert attached_content(server) == CART


def test_no_workspace_turns_it_off_and_the_path_is_said(server: ScriptedServer, repo: Path) -> None:
    server.script(reply("no file"))
    done = ask_in(server, "--no-workspace", "what does @src/cart.py do?", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "workspace:" not in done.stderr
    assert "not attached: @src/cart.py: no workspace" in done.stderr
    assert attached_content(server) is None


def test_a_path_that_names_nothing_is_said(server: ScriptedServer, repo: Path) -> None:
    server.script(reply("ok"))
    done = ask_in(server, "see @src/kart.py and ping @alice", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "not attached: @src/kart.py: nothing by that name in the workspace" in done.stderr
    assert "@alice" not in done.stderr  # a name in prose, not a path


def test_outside_a_project_there_is_no_workspace(server: ScriptedServer, tmp_path: Path) -> None:
    plain = write_files(tmp_path / "plain", {"notes.md": "x\n"})
    server.script(reply("ok"))
    done = ask_in(server, "hi", cwd=plain)
    assert done.returncode == 0 and "workspace:" not in done.stderr, done.stderr


def test_a_folder_named_in_the_config_is_a_project(server: ScriptedServer, tmp_path: Path) -> None:
    notes = write_files(tmp_path / "notes", {"todo.md": "buy milk\n"})
    config = tmp_path / "config.toml"
    config.write_text(f"projects = [{json.dumps(str(notes))}]\n")
    server.script(reply("milk"))
    done = ask_in(server, "--config", str(config), "what is in @todo.md?", cwd=notes)
    assert done.returncode == 0, done.stderr
    assert "(projects in the config; --no-workspace" in done.stderr
    assert attached_content(server) == "buy milk\n"


def test_workspace_and_no_workspace_exclude_each_other(server: ScriptedServer, repo: Path) -> None:
    done = ask_in(server, "-w", str(repo), "--no-workspace", "hi", cwd=repo)
    assert done.returncode == 2 and "exclude each other" in done.stderr
    assert server.completions == []


def test_the_banner_says_the_project(
    server: ScriptedServer, repo: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    empty = Path.home() / "no-skills"
    empty.mkdir(exist_ok=True)
    session = pty_sessions(*session_options(server, empty), cwd=repo)
    assert "workspace 'shop' (git work tree)" in session.prompt()
    assert session.quit() == 0
