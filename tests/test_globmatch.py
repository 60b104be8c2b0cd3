"""Globs in bounded work (skillchat/workspace/globmatch.py): step by step and through
`re` they agree (git's own answers are tests/test_gitignore.py's), a repeated `**/`
over a deep path hangs neither a search nor a read under a hostile `.gitignore`, and
the deadline is looked at while a path is matched."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from chat_helpers import tool_messages
from helpers import session_options, skillchat, write_files
from hypothesis import given
from hypothesis import strategies as st
from openai_server import ScriptedServer, call, reply

from skillchat.errors import GlobTimeout
from skillchat.workspace.globmatch import compile_pattern

DEEP = "/".join(f"d{n}" for n in range(40))
STARRY = "/".join(["**"] * 10) + "/*.txt"


@given(
    pattern=st.text(alphabet="ab/*?[]!\\", max_size=10),
    path=st.text(alphabet="ab/", max_size=10),
    pathname=st.booleans(),
)
def test_step_by_step_agrees_with_re(pattern: str, path: str, pathname: bool) -> None:
    by_steps = compile_pattern(pattern, pathname=pathname, regex_repeats=-1)(path)
    assert by_steps is compile_pattern(pattern, pathname=pathname, regex_repeats=99)(path)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        (STARRY, f"{DEEP}/x.txt", True),
        (STARRY, f"{DEEP}/x.md", False),
        ("**/**/d39/**", f"{DEEP}/x.txt", True),
        ("d0/**/**/x.txt", "d0/x.txt", True),
        ("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 250, False),
    ],
)
def test_patterns_that_backtrack_in_a_regex(pattern: str, path: str, expected: bool) -> None:
    assert compile_pattern(pattern, pathname="/" in pattern)(path) is expected


def test_the_deadline_is_looked_at_inside_one_match() -> None:
    matches = compile_pattern(
        STARRY, pathname=True, deadline=time.monotonic() - 1, regex_repeats=-1
    )
    with pytest.raises(GlobTimeout):
        matches(f"{DEEP}/x.txt")


def test_a_starry_glob_over_a_deep_tree_finds_the_file(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Through `skillchat ask`: the regex version ran for minutes here (the run's
    timeout ends a hang); now the search ends complete, with the one hit."""
    project = write_files(
        tmp_path / "project",
        {f"{DEEP}/needle.txt": "a needle here\n", f"{DEEP}/other.md": "a needle too\n"},
    )
    glob = STARRY
    server.script(reply(calls=[call("search_files", {"query": "needle", "glob": glob})]))
    server.script(reply(calls=[call("list_files", {"glob": glob})]), reply("done"))
    (tmp_path / "skills").mkdir()
    done = skillchat(
        "ask", *session_options(server, tmp_path / "skills"), "-w", str(project), "find it",
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found, listed = [json.loads(m["content"]) for m in tool_messages(server)]
    assert [hit["docPath"] for hit in found["results"]] == [f"{DEEP}/needle.txt"]
    assert found["isTruncated"] is False
    assert [entry["path"] for entry in listed["entries"]] == [f"{DEEP}/needle.txt"]
    assert listed["isTruncated"] is False


def test_a_starry_gitignore_line_does_not_hang_a_read(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A cloned repository's `.gitignore` is as untrusted as a model's glob: with the
    regex, attaching a file 40 folders deep ran for minutes; the rule still applies."""
    project = write_files(
        tmp_path / "project",
        {".gitignore": STARRY + "\n", f"{DEEP}/notes.md": "kept\n", f"{DEEP}/x.txt": "no\n"},
    )
    server.script(reply("read"), reply("refused"))
    (tmp_path / "skills").mkdir()
    options = [*session_options(server, tmp_path / "skills"), "-w", str(project)]
    done = skillchat("ask", *options, "--attach", f"{DEEP}/notes.md", "go")
    assert done.returncode == 0, done.stderr
    [attached] = tool_messages(server, 0)
    assert json.loads(attached["content"])["file"]["content"] == "kept\n"
    done = skillchat("ask", *options, "--attach", f"{DEEP}/x.txt", "go")
    assert done.returncode != 0 and "ignored" in done.stderr
