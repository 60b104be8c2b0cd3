"""Consent in the interactive session, in a real terminal against the real sandbox:
the question shows the command, yes / no / always behave, Ctrl-C at the question is
no, and Ctrl-C during a run kills the sandbox while the chat goes on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from consent_helpers import QUESTION, bundled_repl, results, run_call
from helpers import session_options
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import processes_with, require_sandbox, unique_number


@pytest.fixture
def repl(server: ScriptedServer, pty_sessions: Callable[..., PtySession]) -> PtySession:
    return bundled_repl(server, pty_sessions)


def test_no_then_always_then_no_more_questions(server: ScriptedServer, repl: PtySession) -> None:
    server.script(
        reply("", calls=[run_call("echo first-run")]),
        reply("refused, fine"),
        reply("", calls=[run_call("echo second-run")]),
        reply("ran it"),
        reply("", calls=[run_call("echo third-run")]),
        reply("ran again"),
    )
    repl.line("one")
    screen = repl.expect(QUESTION)
    assert "$ echo first-run" in screen and "skill: calculator" in screen
    assert "in /scratch · network: off · workspace writes: off" in screen
    repl.send("n")  # one key, no Enter
    assert "refused, fine" in repl.prompt()
    repl.line("two")
    repl.expect(QUESTION)
    repl.send("a")  # one key, no Enter
    screen = repl.prompt()
    assert "second-run" in screen and "exit 0" in screen and "ran it" in screen
    screen = repl.run("three")  # "always" for calculator: no question this time
    assert QUESTION not in screen and "third-run" in screen
    got = results(server)
    assert got[0]["error_code"] == "NOT_ALLOWED"
    assert [r.get("stdout") for r in got[1:]] == ["second-run\n", "third-run\n"]
    assert repl.quit() == 0


def test_ctrl_c_at_the_question_is_no_and_during_a_run_kills_it(
    server: ScriptedServer, repl: PtySession
) -> None:
    n = unique_number()
    server.script(
        reply("", calls=[run_call("echo never")]),
        reply("you said no"),
        reply("", calls=[run_call(f"echo started-$(({n} - 1 + 1)); sleep {n}")]),
        reply("after the interrupt"),
    )
    repl.line("one")
    repl.expect(QUESTION)
    repl.interrupt()
    assert "you said no" in repl.prompt()
    assert results(server)[0]["error_code"] == "NOT_ALLOWED"
    repl.line("two")
    repl.expect(QUESTION)
    repl.send("y")  # one key, no Enter
    live = repl.expect(f"started-{n}")  # the live card streams the output's tail
    assert "run_command · running" in live and f"$ echo started-$(({n} - 1 + 1))" in live
    repl.interrupt()
    kept = repl.expect("⏹ interrupted")
    # The card stays, with the output so far, above the interrupted line.
    assert "run_command · interrupted" in kept and f"started-{n}" in kept
    repl.prompt()
    assert processes_with(f"sleep {n}") == []
    assert "after the interrupt" in repl.run("go on")
    assert repl.quit() == 0


def test_a_trusted_skills_allowed_tools_skip_the_question(
    server: ScriptedServer, pty_sessions: Callable[..., PtySession], isolated_env: Path
) -> None:
    require_sandbox()
    root = isolated_env / ".agents" / "skills"  # user-level: trusted
    (root / "echoer").mkdir(parents=True)
    (root / "echoer" / "SKILL.md").write_text(
        "---\nname: echoer\ndescription: Echoes.\nallowed-tools: Bash(echo:*)\n---\nRun echo.\n"
    )
    echo = call("run_command", {"command": "echo pre-approved-run", "skill_name": "echoer"})
    other = call("run_command", {"command": "pwd", "skill_name": "echoer"})
    server.script(reply("", calls=[echo]), reply("ran"), reply("", calls=[other]), reply("no"))
    session = pty_sessions(*session_options(server, root))
    session.prompt()
    screen = session.run("one")
    assert QUESTION not in screen and "pre-approved: allowed by Bash(echo:*)" in screen
    assert "pre-approved-run" in screen
    session.line("two")
    screen = session.expect(QUESTION)  # not in its allowed-tools: asked, saying why
    assert "asking because: not in skill 'echoer' allowed-tools" in screen
    session.send("n")  # one key, no Enter
    session.prompt()
    assert session.quit() == 0


def test_a_command_from_no_skill_offers_yes_or_no_only(
    server: ScriptedServer, repl: PtySession
) -> None:
    server.script(
        reply("", calls=[call("run_command", {"command": "echo loose-run"})]),
        reply("done"),
    )
    repl.line("go")
    screen = repl.expect("Run it? [y]es / [n]o: ")
    assert "[a]lways" not in screen and "always =" not in screen
    repl.send("a")  # not an answer here: ignored
    repl.send("y")
    screen = repl.prompt()
    assert "loose-run" in screen and "exit 0" in screen and "done" in screen
