"""Inline commands in a SKILL.md body (`` !`cmd` ``, Claude Code): run in the real
sandbox under run_command's consent and policy before the body reaches the model,
or kept as written with a note; never silently, never on the host."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import RecordingView, settings_for
from consent_helpers import QUESTION
from helpers import ask_json, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.session import Session
from skillchat.skills.arguments import ArgumentFiller
from skillchat.tools.inline_commands import NO_RUNNER, run_inline_commands

BODY = (
    "Status: !`echo inline-$0-out`\n"
    "Not one: a!`echo x` and `!`echo y`` stay.\n"
    "```!\necho block-out\n```\n"
)


def approve(request: RunRequest) -> Verdict:
    return Verdict("approved")


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "inl", "name: inl\ndescription: Shows status.\n", BODY)
    return root


def test_found_as_claude_code_finds_them_and_kept_with_a_note_without_a_runner() -> None:
    body, runs = run_inline_commands(BODY, "inl", None)
    assert body == (
        f"Status: !`echo inline-$0-out` [not run: {NO_RUNNER}]\n"
        "Not one: a!`echo x` and `!`echo y`` stay.\n"
        f"```!\necho block-out\n``` [not run: {NO_RUNNER}]\n"
    )
    assert runs.summary() == f"inline commands: 0 run, 2 not run ({NO_RUNNER})"
    assert run_inline_commands("no commands", "inl", None)[1].summary() is None


def test_words_typed_or_piped_in_never_become_a_command() -> None:
    typed = "hi !`touch /tmp/x` and\n```!\nrm -rf /\n```\n"
    filler = ArgumentFiller(typed)
    body, runs = run_inline_commands("Asked: $ARGUMENTS\n!`echo $0`\n", "inl", None, filler)
    assert body == f"Asked: {typed}\n!`echo hi` [not run: {NO_RUNNER}]\n"
    assert runs.not_run == 1  # the skill's own command only


def ask(server: ScriptedServer, skills: Path, *args: str) -> str:
    """The body the model got from `ask /inl 7`."""
    server.script(reply("done"))
    report = ask_json(server, skills, *args, "/inl 7")
    return str(json.loads(report["tool_calls"][0]["result"])["documentation"])


def test_ask_runs_them_only_with_allow_run(server: ScriptedServer, skills: Path) -> None:
    require_sandbox()
    body = ask(server, skills, "--allow-run")
    assert body.startswith("Status: inline-7-out\n")  # the argument filled in first
    assert "block-out\n" in body and "not run" not in body
    body = ask(server, skills)
    assert body.startswith("Status: !`echo inline-7-out` [not run: not allowed: ")
    assert "--allow-run" in body.splitlines()[0]
    assert "inline-7-out\n" not in body.replace("`echo inline-7-out`", "")


def test_running_switched_off_keeps_them_noted(
    server: ScriptedServer, skills: Path, tmp_path: Path
) -> None:
    config = tmp_path / "off.toml"
    config.write_text("[run]\nenabled = false\n")
    body = ask(server, skills, "--allow-run", "--config", str(config))
    assert body.startswith(f"Status: !`echo inline-7-out` [not run: {NO_RUNNER}]")


def test_tools_off_keeps_them_and_says_so(server: ScriptedServer, skills: Path) -> None:
    server.script(reply("done"))
    done = skillchat(
        "ask", *session_options(server, skills), "--no-tools", "/inl 7",
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "/inl: inline commands: 0 run, 2 not run" in done.stderr
    system = server.completions[-1].body["messages"][0]["content"]
    assert f"!`echo inline-7-out` [not run: {NO_RUNNER}]" in system


def test_the_repl_asks_for_each_and_yes_or_no_decides(
    server: ScriptedServer, skills: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    require_sandbox()
    server.script(reply("first"), reply("second"))
    session = pty_sessions(*session_options(server, skills))
    session.prompt()
    session.line("/inl 1")
    assert "$ echo inline-1-out" in session.expect(QUESTION)
    session.send("y")
    assert "$ echo block-out" in session.expect(QUESTION)
    session.send("n")
    shown = session.prompt()
    assert "first" in shown and "inline commands: 1 run, 1 not run" in shown
    body = json.loads(server.completions[-1].body["messages"][-1]["content"])["documentation"]
    assert body.startswith("Status: inline-1-out\n")
    assert "```!\necho block-out\n``` [not run: not allowed: " in body
    session.line("/inl 2")
    session.expect(QUESTION)
    session.send("n")
    session.expect(QUESTION)
    session.send("n")
    assert "second" in session.prompt()
    body = json.loads(server.completions[-1].body["messages"][-1]["content"])["documentation"]
    assert body.startswith("Status: !`echo inline-2-out` [not run: not allowed: ")
    assert session.quit() == 0


def test_a_skill_re_attached_after_compaction_runs_them_with_the_chats_runner(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    root = tmp_path / "skills"
    skill_folder(root, "st", "name: st\ndescription: Shows status.\n", "Now: !`echo fresh-out`\n")
    settings = settings_for(server, skill_dirs=(str(root),), skills_bundled=False)
    session = Session(settings, listeners=[RecordingView()], consent=lambda: approve)
    server.script(
        reply("", calls=[call("get_skill", {"skill_name": "st"})]),
        reply("one"),
        reply("two"),
        reply("three"),
    )
    for text in ("first", "second", "third"):
        session.send(text)
    server.script(reply("The user asked three things."))
    outcome = session.chat.compact()
    assert outcome is not None and outcome.skills == ["st"]
    body = json.loads(session.chat.messages[2]["content"])["documentation"]
    assert body == "Now: fresh-out\n"  # run again in the sandbox, not noted "cannot run here"
