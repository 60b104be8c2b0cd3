"""The in-process harness (tests/in_process.py) answers as the real process does.

Most CLI tests run `skillchat` inside pytest's process; they are only worth what the
harness's fidelity is worth. Here the same commands run both ways and must agree,
and what a run may not leave behind (environment, working directory, a held signal
handler, a timer) is checked after the runs that touch it."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply

COMMANDS = [
    ("--version",),
    ("skills", "list"),
    ("skills", "list", "--json"),
    ("config", "show"),
    ("ask",),  # no prompt: a usage error, exit 2
    ("what is 2+2 today",),  # a question without `ask`
    ("chats", "show", "nope"),  # exit 1, one error line
    ("--model", "x", "chats", "list"),  # options before a command
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_in_process_and_subprocess_agree(argv: tuple[str, ...], tmp_path: Path) -> None:
    skill_folder(tmp_path / ".agents" / "skills", "tidy", "name: tidy\ndescription: Tidy.\n")
    inside = skillchat(*argv, cwd=tmp_path)
    # The reference: the real process (what the harness must reproduce).
    child = skillchat(*argv, cwd=tmp_path, subprocess=True)
    assert (inside.returncode, inside.stdout, inside.stderr) == (
        child.returncode,
        child.stdout,
        child.stderr,
    )


def test_piped_stdin_is_a_pipe_and_text_reads_as_text_mode(server: ScriptedServer) -> None:
    """A prompt and piped text are both sent; `\\r\\n` in the answer reads as `\\n`, as
    `text=True` decodes a child's output."""
    server.script(reply("one\r\ntwo"))
    done = skillchat("ask", *session_options(server, "."), "sum up", input="a\nb\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "one\ntwo\n"
    assert server.completions[0].body["messages"][-1]["content"] == "sum up\n\n```\na\nb\n```"


def test_env_and_cwd_apply_to_the_run_and_are_put_back(tmp_path: Path) -> None:
    before_env, before_cwd = dict(os.environ), os.getcwd()
    env = {**os.environ, "OPENAI_API_KEY": "sk-in-process-0123456789abcdef"}
    done = skillchat("config", "show", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "OPENAI_API_KEY" in done.stdout and "0123456789abcdef" not in done.stdout
    assert dict(os.environ) == before_env
    assert os.getcwd() == before_cwd


def test_a_hung_run_times_out_and_leaves_no_timer(server: ScriptedServer) -> None:
    """A reply that never comes: TimeoutExpired, as from a child, with what the run
    wrote so far; SIGALRM is ours again after."""
    handler = signal.getsignal(signal.SIGALRM)
    server.script(reply("never", hold="forever"))
    with pytest.raises(subprocess.TimeoutExpired):
        skillchat("ask", *session_options(server, "."), "hi", timeout=2)
    assert signal.getsignal(signal.SIGALRM) == handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_start_up_variables_need_a_real_process() -> None:
    with pytest.raises(AssertionError, match="PYTHONPATH"):
        skillchat("--version", env={**os.environ, "PYTHONPATH": "/nowhere"})
