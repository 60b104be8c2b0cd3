"""`skills list` on a terminal: one line per skill, as `gh` lists, however long the
descriptions; `--long` folds them whole. `skills show` suggests a near name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from helpers import one_line_error, skill_folder, skillchat
from pty_session import PtySession, plain

LONG = "Explains " + "a great many things in detail " * 12 + "END."


def library(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        skill_folder(root, name, f"name: {name}\ndescription: {name} {LONG}\n")
    return root


def listing(pty_sessions: Callable[..., PtySession], *args: str) -> list[str]:
    session = pty_sessions(*args)
    assert session.wait() == 0
    return plain("".join(session.output)).splitlines()


def test_one_line_per_skill_on_a_terminal(
    pty_sessions: Callable[..., PtySession], tmp_path: Path
) -> None:
    lines = listing(pty_sessions, "skills", "list", "--skills-dir", str(library(tmp_path)))
    rows = [line for line in lines if line.split()[:1] in (["alpha"], ["beta"], ["gamma"])]
    assert len(rows) == 3, lines
    assert all(len(row) <= 120 and "…" in row for row in rows), rows
    assert not any("END." in line for line in lines)
    assert lines[-1].strip() == "3 skills"


def test_long_folds_whole_descriptions(
    pty_sessions: Callable[..., PtySession], tmp_path: Path
) -> None:
    root = library(tmp_path)
    lines = listing(pty_sessions, "skills", "list", "--long", "--skills-dir", str(root))
    assert sum("END." in line for line in lines) == 3
    assert len(lines) > 10


def test_show_suggests_a_near_name(tmp_path: Path) -> None:
    done = skillchat("skills", "show", "alpah", "--skills-dir", str(library(tmp_path)))
    assert "no skill named 'alpah': did you mean 'alpha'?" in one_line_error(done)
