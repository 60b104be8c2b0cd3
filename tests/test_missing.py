"""Saying what is not there: a `/name` that is a left-out skill or a near miss, a
mistyped REPL command, no skills on a pipe, a `--skills-dir` that does not exist,
and `skills validate .` from a project's root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import one_line_error, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "calculator", "name: calculator\ndescription: Sums.\n")
    skill_folder(root, "other", "name: other\n")  # no description
    skill_folder(root, "\x1b[31mred", "name: x\ndescription: D.\n")  # a hostile folder name
    return root


def ask(server: ScriptedServer, library: Path, text: str):
    return skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "--skills-dir", str(library), text)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("/calculatr 2+2", "/calculatr is not a skill or a command: did you mean /calculator?"),
        ("/other hi", "/other: the skill 'other' is left out: description is missing"),
    ],
)
def test_ask_refuses_a_name_that_looks_like_a_skill(
    server: ScriptedServer, library: Path, text: str, said: str
) -> None:
    done = ask(server, library, text)
    line = one_line_error(done, code=2)
    assert said in line and "nothing was sent" in line
    assert server.completions == []


def test_plain_slashes_still_go_to_the_model(server: ScriptedServer, library: Path) -> None:
    server.script(reply("it is a file"))
    done = ask(server, library, "/etc/hosts what is it")
    assert done.returncode == 0 and done.stdout == "it is a file\n", done.stderr


def test_the_repl_offers_did_you_mean_and_sends_nothing(
    server: ScriptedServer, library: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply("fine"))
    session = pty_sessions(*session_options(server, library))
    banner = session.prompt()
    assert "2 skills left out: `skillchat skills list` says why" in banner
    assert "did you mean /help?" in session.run("/hlep")
    assert "did you mean /calculator?" in session.run("/calculatr 2+2")
    assert "fine" in session.run("hello")
    assert len(server.completions) == 1  # only the real message went out
    assert session.quit() == 0


def test_no_skills_on_a_pipe_is_said_on_stderr(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = skillchat("skills", "list", "--skills-dir", str(empty))
    assert done.returncode == 0 and done.stdout == ""
    # Unwrapped: the line is wrapped at 80 columns, and a long temp path (a user's, an
    # xdist worker's) is broken across two lines.
    said = done.stderr.replace("\n", "")
    assert said.startswith("no skills found (searched: ") and str(empty) in said


def test_a_missing_skills_dir_is_a_usage_error(tmp_path: Path) -> None:
    for argv in (["skills", "list"], ["ask", "hi"]):
        done = skillchat(*argv, "--skills-dir", str(tmp_path / "nope"))
        assert "--skills-dir" in one_line_error(done, code=2) and "no such directory" in done.stderr


def test_validate_dot_from_a_project_root(tmp_path: Path) -> None:
    skill_folder(tmp_path / "skills", "good", "name: good\ndescription: Fine.\n")
    skill_folder(tmp_path / ".claude" / "skills", "bad", "name: wrong\ndescription: D.\n")
    done = skillchat("skills", "validate", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert (
        "skills/good" not in done.stdout or "error" not in done.stdout.split("skills/good")[1][:1]
    )
    assert "name 'wrong' does not match directory 'bad'" in done.stdout
    assert "2 checked" in done.stderr
