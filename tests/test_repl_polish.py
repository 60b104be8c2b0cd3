"""REPL polish in a real pseudo-terminal against the scripted server: leaving with a
bare word, no library-loading chatter before the first answer."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import session_options, skill_folder
from openai_server import ScriptedServer, reply
from pty_session import PtySession


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "notes", "name: notes\ndescription: Keeps notes.\n", "# Notes\n")
    return root


@pytest.fixture
def repl(
    server: ScriptedServer, skills: Path, pty_sessions: Callable[..., PtySession]
) -> Callable[..., PtySession]:
    def start(*args: str) -> PtySession:
        session = pty_sessions(*session_options(server, skills), *args)
        session.prompt()
        return session

    return start


@pytest.mark.parametrize("word", ["exit", "quit", " Quit "])
def test_the_first_answer_is_plain_and_exit_or_quit_alone_leaves_without_sending(
    server, repl, word: str
) -> None:
    server.script(reply("the first answer"))
    session = repl()
    shown = session.run("hi")
    assert "the first answer" in shown
    assert "loading the" not in shown and "library" not in shown  # no loading chatter
    session.line(word)
    assert session.wait() == 0
    assert len(server.completions) == 1  # the word was not sent to the model


def test_a_repeated_skill_or_retry_is_not_an_error_card(server, repl) -> None:
    server.script(reply("first"), reply("second"), reply("third"))
    session = repl()
    assert "first" in session.run("/notes one")
    again = session.run("/notes two")
    assert "second" in again
    assert "already in this chat, unchanged: not sent again" in again
    assert "ALREADY_IN_CONTEXT" not in again and "error" not in again
    retried = session.run("/retry")
    assert "third" in retried and "ALREADY_IN_CONTEXT" not in retried
    assert "already loaded" in retried
    assert session.quit() == 0


def test_help_rows_align(repl) -> None:
    session = repl()
    shown = session.run("/help")
    rows = [line for line in shown.splitlines() if line.startswith("/")]
    assert len(rows) > 10 and any(r.startswith("/skills [disable|enable NAME]") for r in rows)
    starts = {re.match(r"/\S+(?: \S+)*\s{2,}", row).end() for row in rows}  # type: ignore[union-attr]
    assert len(starts) == 1  # every description starts in the same column
    assert session.quit() == 0
