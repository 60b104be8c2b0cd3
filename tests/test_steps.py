"""The steps of a turn (engine/turn.py): a step sees every reply and every tool call
as it is added (the model's, and those a step makes as if the model had: `/name`,
attached files), in order, through the real loop against the scripted server. That
each chat has steps of its own: tests/test_paths_gate.py (what a chat read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import RecordingView, make_chat, registry, settings_for, write_skill
from helpers import skill_folder, skillchat
from openai_server import ScriptedServer, call, reply

from skillchat.engine.emit import ToolRecord
from skillchat.engine.events import Reply
from skillchat.engine.loop import Chat
from skillchat.engine.turn import Step, StepContext, Turn
from skillchat.session import Session
from skillchat.skills.registry import Registry, discover


@pytest.fixture
def skills(tmp_path: Path) -> Registry:
    root = tmp_path / "skills"
    return registry(
        write_skill(root, "calculator", "# Calculator\n", {"units.md": "1 km = 1000 m\n"}),
        directories=(root,),
    )


class Watch(Step):
    """Writes down each moment it is called at, with what the transcript ends with."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def after_reply(self, chat: StepContext, turn: Turn, reply: Reply) -> None:
        self.seen.append(("reply", reply.text, [c.name for c in reply.tool_calls]))

    def after_tool(self, chat: StepContext, record: ToolRecord) -> None:
        last = chat.messages[-1]
        self.seen.append(("tool", record.name, record.synthetic, last.get("tool_call_id")))


def chat_with(server: ScriptedServer, skills: Registry, *steps: Step) -> Chat:
    backend = Session(settings_for(server), registry=skills).backend
    return Chat(settings_for(server), skills, backend, RecordingView(), steps=steps)


def test_a_step_sees_every_reply_and_every_call_once_it_is_kept(
    server: ScriptedServer, skills: Registry
) -> None:
    read = call("read_file_in_skill", {"skill_name": "calculator", "file_path": "units.md"})
    server.script(reply("Reading.", calls=[read]), reply("1000 m."))
    watch = Watch()
    chat = chat_with(server, skills, watch)
    assert chat.send("/calculator how many m in a km?").answer == "1000 m."
    ids = [m["tool_call_id"] for m in chat.messages if m["role"] == "tool"]
    assert watch.seen == [
        ("tool", "get_skill", True, ids[0]),  # the `/name` call, before any request
        ("reply", "Reading.", ["read_file_in_skill"]),
        ("tool", "read_file_in_skill", False, ids[1]),  # its result kept when it is seen
        ("reply", "1000 m.", []),
    ]


def test_a_step_after_the_reply_decides_which_calls_run(
    server: ScriptedServer, skills: Registry
) -> None:
    class NoReads(Step):
        def after_reply(self, chat: StepContext, turn: Turn, reply: Reply) -> None:
            reply.tool_calls = [c for c in reply.tool_calls if c.name != "read_file_in_skill"]

    read = call("read_file_in_skill", {"skill_name": "calculator", "file_path": "units.md"})
    server.script(reply(calls=[read, call("list_skills")]), reply("done"))
    chat = chat_with(server, skills, NoReads())
    assert chat.send("go").answer == "done"
    kept = [m for m in chat.messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert [c["function"]["name"] for c in kept[0]["tool_calls"]] == ["list_skills"]


def test_a_skill_invoked_by_name_takes_the_chat_to_its_model(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`/digest` loads an inline skill whose `model:` names a `[models.NAME]`: the
    request of that very message goes to its model's server (the skill-model step
    acts after the `/name` call, before the first request)."""
    root = tmp_path / "skills"
    skill_folder(root, "digest", "name: digest\ndescription: Digests.\nmodel: fast\n", "# D\n")
    assert skillchat("skills", "trust", "digest", "--skills-dir", str(root)).returncode == 0
    with ScriptedServer() as other:
        other.script(reply("from the fast model"))
        view = RecordingView()
        fast = {"fast": {"model": "openai/fast-model", "api_base": other.base_url}}
        chat = make_chat(server, discover([root]), view, named_models=fast)
        assert chat.send("/digest this").answer == "from the fast model"
        assert server.completions == [] and len(other.completions) == 1
        loaded = json.loads(other.completions[0].body["messages"][-1]["content"])
        assert loaded["skill_name"] == "digest"
    assert any("its model openai/fast-model" in n for n in view.of("notice"))
