"""One owner for a chat's state: each operation the REPL's commands run (`/reload`,
`/skills disable|enable`, `/model`, `/new`, `/resume`) changes one thing in the
`Session`, and what depends on it sees the change: the skills the real sandbox
mounts at /skills and judges a command by, the settings the tools are handed, the
scratch folder, and the consent ("always" is said for one chat only).

The model is the scripted server, asking for `run_command` as a model would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import RecordingView, settings_for, write_skill
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import require_sandbox

from skillchat.chats.store import ChatStore
from skillchat.sandbox.command_tool import Consent
from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.session import Session


class Answers:
    """The consents of one session's chats, as the REPL's behave: the first time a
    command comes up in a chat the user is asked and says "always" (for that chat);
    `asked` lists every question, across chats."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self) -> Consent:
        always: set[str] = set()

        def consent(request: RunRequest) -> Verdict:
            if request.command not in always:
                self.asked.append(request.command)
                always.add(request.command)
            return Verdict("approved")

        return consent


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "alpha")
    write_skill(root, "beta")
    return root


@pytest.fixture
def answers() -> Answers:
    return Answers()


@pytest.fixture
def session(
    server: ScriptedServer, skills_dir: Path, store: ChatStore, db: Path, answers: Answers
) -> Session:
    require_sandbox()
    settings = settings_for(
        server,
        skill_dirs=(str(skills_dir),),
        skills_bundled=False,
        storage_path=str(db),
        # A table says where its model runs (no api_base: the provider's own server).
        named_models={
            "other": {"model": "openai/other-model", "api_base": server.base_url, "max_tokens": 77}
        },
    )
    return Session(settings, store=store, listeners=[RecordingView()], consent=answers)


def run(server: ScriptedServer, session: Session, command: str, **more: Any) -> dict[str, Any]:
    """What the sandbox answered when the model asked to run `command`."""
    server.script(reply("", calls=[call("run_command", {"command": command, **more})]), reply("ok"))
    result = session.send("go")
    return json.loads(result.tool_calls[-1].result.content)


def mounted(server: ScriptedServer, session: Session) -> list[str]:
    return run(server, session, "ls /skills")["stdout"].split()


def test_reload_mounts_a_skill_added_since(
    server: ScriptedServer, session: Session, skills_dir: Path
) -> None:
    assert mounted(server, session) == ["alpha", "beta"]
    write_skill(skills_dir, "gamma")
    session.reload_skills()
    assert mounted(server, session) == ["alpha", "beta", "gamma"]
    assert "gamma" in json.dumps(server.completions[-1].body["messages"][0])  # the catalog


def test_a_disabled_skill_is_neither_mounted_nor_judged_and_enabling_brings_it_back(
    server: ScriptedServer, session: Session
) -> None:
    session.disable_skills(("alpha",))
    assert mounted(server, session) == ["beta"]
    refused = run(server, session, "true", skill_name="alpha")
    assert refused["error_code"] == "INVALID_ARGUMENT"
    assert "unknown skill_name 'alpha'" in refused["error"]
    session.disable_skills(())
    assert mounted(server, session) == ["alpha", "beta"]
    assert run(server, session, "true", skill_name="alpha")["exit_code"] == 0


def test_model_switch_reaches_the_tools_and_the_requests(
    server: ScriptedServer, session: Session
) -> None:
    session.switch_model("other")
    tools = session.chat.toolbox.context
    assert tools.settings is session.settings
    assert (tools.settings.model.name, tools.settings.model.max_tokens) == (
        "openai/other-model",
        77,
    )
    run(server, session, "true")
    assert server.completions[-1].body["model"] == "other-model"


def test_new_chat_has_its_own_scratch_and_asks_again(
    server: ScriptedServer, session: Session, answers: Answers
) -> None:
    run(server, session, "touch /scratch/from-first")
    run(server, session, "touch /scratch/from-first")  # "always" in this chat
    assert answers.asked == ["touch /scratch/from-first"]
    session.new_chat()
    assert run(server, session, "ls -A /scratch")["stdout"] == ""
    run(server, session, "touch /scratch/from-first")
    assert answers.asked == [
        "touch /scratch/from-first",
        "ls -A /scratch",
        "touch /scratch/from-first",
    ]


def test_resume_gets_the_chats_scratch_back_and_asks_again(
    server: ScriptedServer, session: Session, store: ChatStore, answers: Answers
) -> None:
    run(server, session, "touch /scratch/from-first")
    first = session.chat_id
    assert first is not None
    session.new_chat()
    run(server, session, "touch /scratch/from-second")
    session.resume(store.load_transcript(first))
    assert session.chat_id == first
    assert run(server, session, "ls /scratch")["stdout"].split() == ["from-first"]
    run(server, session, "touch /scratch/from-first")
    assert answers.asked.count("touch /scratch/from-first") == 2  # once per chat
