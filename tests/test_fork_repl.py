"""A forked skill in the interactive session, in a real pseudo-terminal: its lines
and card, `/show N` with its transcript, and Ctrl-C stopping only the fork."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import tool_messages
from consent_helpers import QUESTION, run_call
from fork_helpers import FORK, digest_skills
from helpers import session_options, skill_folder, wait_for
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox


@pytest.fixture
def repl(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> PtySession:
    root = digest_skills(tmp_path / "skills", "note one\nnote two\n")
    session = pty_sessions(*session_options(server, root))
    session.prompt()
    return session


def test_the_toolbar_of_a_resumed_chat_counts_its_forks(
    server: ScriptedServer,
    repl: PtySession,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    server.when("", reply("TWO NOTES"), system=FORK)
    server.script(reply("Done."))
    repl.run("/digest count the notes")
    assert repl.quit() == 0
    resumed = pty_sessions(*session_options(server, tmp_path / "skills"), "-c")
    resumed.expect("· 15 tokens · forks: 15 tokens on openai/test-model")
    assert resumed.quit() == 0


def test_a_fork_is_one_live_card_that_collapses_to_one_line_and_show_prints_its_transcript(
    server: ScriptedServer, repl: PtySession
) -> None:
    read = call("read_file_in_skill", {"skill_name": "digest", "file_path": "notes.md"})
    server.when("", reply(calls=[read]), reply("TWO NOTES", hold="answer"), system=FORK)
    server.script(reply("The skill found two notes."))
    repl.line("/digest count the notes")

    def text(rows: list[str]) -> str:
        return "\n".join(rows)

    running = text(
        repl.until_screen(lambda rows: "waiting for the model · 1 request" in text(rows))
    )
    assert "│ read_file_in_skill" in running and "runs on its own on" in running
    server.release("answer")
    repl.prompt()  # the turn is over: the next prompt is drawn
    ended = repl.screen()
    assert "The skill found two notes." in ended and "#1 get_skill · /digest" in ended
    assert "read_file_in_skill" not in ended.split("#1 get_skill")[0]  # the card is gone
    assert "runs on its own" not in ended and "waiting for the model" not in ended
    summary = [row for row in ended.splitlines() if row.startswith("⑂ digest #")]
    assert len(summary) == 1 and " answered · 2 requests · 1 tool call · " in summary[0]
    assert summary[0].rstrip().endswith(" tokens on openai/test-model")
    # The toolbar: the chat's one request, and the fork's two on its model.
    repl.expect("· 15 tokens · forks: 30 tokens on openai/test-model")
    shown = repl.run("/show 1")
    assert "task: count the notes" in shown  # the whole transcript still
    assert "note two" in shown and "TWO NOTES" in shown
    assert repl.quit() == 0


def test_ctrl_c_stops_only_the_fork_and_the_chat_goes_on(
    server: ScriptedServer, repl: PtySession
) -> None:
    server.when("", reply("never sent", hold="fork"), system=FORK)
    server.script(reply("The skill was stopped."), reply("still here"))
    repl.line("/digest count the notes")
    repl.expect("runs on its own")
    assert wait_for(
        lambda: any(FORK in str(r.body["messages"][0]["content"]) for r in server.completions)
    )
    repl.interrupt()
    repl.expect(" interrupted · ")
    repl.expect("The skill was stopped.")
    repl.prompt()
    result = json.loads(server.completions[-1].body["messages"][-1]["content"])
    assert result["error_code"] == "INTERRUPTED" and result["forked"] is True
    assert "still here" in repl.run("and now?")
    assert repl.quit() == 0


def test_two_forks_run_at_once_and_ask_their_consent_one_at_a_time(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    require_sandbox()
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        skill_folder(root, name, f"name: {name}\ndescription: The {name} skill.\ncontext: fork\n")
    # alpha's first reply waits until beta's fork has asked: one after the other, it never would.
    server.when("", reply(calls=[run_call("echo from-alpha", "alpha")], hold="alpha"),
                reply("alpha done"), system='<skill name="alpha">')  # fmt: skip
    server.when("", reply(calls=[run_call("echo from-beta", "beta")]), reply("beta done"),
                system='<skill name="beta">')  # fmt: skip
    both = [call("get_skill", {"skill_name": n, "task": f"run {n}"}) for n in ("alpha", "beta")]
    server.script(reply(calls=both), reply("both done"))
    repl = pty_sessions(*session_options(server, root))
    repl.prompt()
    repl.line("run both")

    def asked(skill: str) -> bool:
        return any(f'<skill name="{skill}">' in str(r.body["messages"][0]["content"])
                   for r in server.completions)  # fmt: skip

    assert wait_for(lambda: asked("alpha") and asked("beta"))
    before = repl.expect(", running on its own, asks:")  # the fork that asks, named
    assert before.rstrip().endswith(("beta #1", "beta #2")), before
    repl.expect(QUESTION)
    server.release("alpha")
    repl.send("y")
    before = repl.expect(", running on its own, asks:")  # only after the first was answered
    assert before.rstrip().endswith(("alpha #1", "alpha #2")), before
    repl.expect(QUESTION)
    repl.send("y")
    repl.expect("both done")
    repl.prompt()
    answers = {json.loads(m["content"])["answer"] for m in tool_messages(server)}
    assert answers == {"alpha done", "beta done"}
    assert repl.quit() == 0


def test_a_real_skill_forks_onto_its_own_model_in_the_repl(
    server: ScriptedServer, shared: Path, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """A copy of a real skill marked `context: fork`, its model chosen in
    `[skill_models]`: typed as `/name task` in the REPL, its requests go to that
    model's server, only its answer to the chat's."""
    name = "what-context-needed"
    copy = tmp_path / "skills" / name
    shutil.copytree(shared / "real-skills" / "github-awesome-copilot" / name, copy)
    text = (copy / "SKILL.md").read_text()
    (copy / "SKILL.md").chmod(0o644)  # the test data is read-only
    (copy / "SKILL.md").write_text(
        text.replace(f"name: {name}\n", f"name: {name}\ncontext: fork\n")
    )
    with ScriptedServer() as other:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[models.fast]\nmodel = "openai/fast-model"\napi_base = "{other.base_url}"\n\n'
            f'[skill_models]\n{name} = "fast"\n'
        )
        other.when("", reply("Files I need: src/login.py"), system=f'<skill name="{name}">')
        server.script(reply("The fork says: src/login.py"))
        session = pty_sessions("--config", str(config), *session_options(server, copy.parent))
        session.prompt()
        shown = " ".join(session.run(f"/{name} where is the login handled?").split())
        assert "The fork says: src/login.py" in shown and "openai/fast-model" in shown
        assert session.quit() == 0
    [fork] = other.completions
    assert fork.body["model"] == "fast-model"
    assert "where is the login handled?" in json.dumps(fork.body["messages"])
    [parent] = server.completions
    assert parent.body["model"] == "test-model"
    result = json.loads(parent.body["messages"][-1]["content"])
    assert result["forked"] is True and result["answer"] == "Files I need: src/login.py"
