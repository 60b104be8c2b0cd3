"""The "N skills left out" line is said once per state of the skills folders, with each
skill's reason; later `ask`s and the REPL's `/new` and `/reload` stay quiet until
the left-out set changes (the fingerprint lives in the user cache folder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "calculator", "name: calculator\ndescription: Sums.\n")
    skill_folder(root, "other", "name: other\n")  # no description
    return root


def ask(server: ScriptedServer, library: Path, text: str):
    return skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "--skills-dir", str(library), text)  # fmt: skip


def test_ask_says_it_once_with_the_reason_then_again_when_it_changes(
    server: ScriptedServer, library: Path
) -> None:
    server.script(reply("one"), reply("two"), reply("three"))
    first = ask(server, library, "hi")
    assert first.returncode == 0, first.stderr
    assert "1 skill left out: `skillchat skills list` says why" in first.stderr
    assert "other: description is missing" in first.stderr
    second = ask(server, library, "hi")
    assert second.returncode == 0 and second.stdout == "two\n", second.stderr
    assert "left out" not in second.stderr
    skill_folder(library, "broken", "name: broken\n")  # the state changes
    third = ask(server, library, "hi")
    assert "2 skills left out" in third.stderr
    assert "broken: description is missing" in third.stderr


def test_the_repl_says_it_in_the_banner_only(
    server: ScriptedServer, library: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    session = pty_sessions(*session_options(server, library))
    banner = session.prompt()
    assert "1 skill left out" in banner and "description is missing" in banner
    assert "left out" not in session.run("/new")
    assert "left out" not in session.run("/reload")
    assert session.quit() == 0
    again = pty_sessions(*session_options(server, library))
    assert "left out" not in again.prompt()
    assert again.quit() == 0
