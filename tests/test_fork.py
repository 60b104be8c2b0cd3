"""`context: fork`: a skill's work in a conversation of its own on the scripted server,
only its answer coming back to the parent; the parent and the fork are told apart by
the fork's system prompt (its SKILL.md body)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from chat_helpers import RecordingView, make_chat, registry, sent, write_skill
from helpers import skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply

from skillchat.engine.emit import Event, ForkEnded, ForkStarted, ForkStep, ToolFinished
from skillchat.engine.fork import FORK_ANSWER_CHARS
from skillchat.skills.model import Skill

FORK_SYSTEM = '<skill name="digest">'
BIG = "reference line of the digest skill\n" * 2000  # ~70 KB


def forked_skill(root: Path, **frontmatter: Any) -> Skill:
    skill = write_skill(
        root,
        "digest",
        "# Digest\nRead references/big.md and answer in one line. MARK-BODY\n",
        {"references/big.md": BIG},
    )
    return replace(skill, frontmatter={**skill.frontmatter, "context": "fork", **frontmatter})


class Events(RecordingView):
    """The view, plus every fork event as it came."""

    def __init__(self) -> None:
        super().__init__()
        self.forks: list[Event] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, ForkStarted | ForkStep | ForkEnded):
            self.forks.append(event)
        super().__call__(event)


def fork_requests(server: ScriptedServer) -> list[list[dict[str, Any]]]:
    return [
        r.body["messages"]
        for r in server.completions
        if FORK_SYSTEM in str(r.body["messages"][0].get("content"))
    ]


def test_the_models_get_skill_runs_a_fork_and_only_its_answer_returns(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skill = forked_skill(tmp_path)
    server.when(
        "",
        reply(
            calls=[
                call(
                    "read_file_in_skill", {"skill_name": "digest", "file_path": "references/big.md"}
                )
            ]
        ),
        reply("DIGEST: 2000 lines"),
        system=FORK_SYSTEM,
    )
    task = {"skill_name": "digest", "task": "summarise the reference"}
    server.script(reply(calls=[call("get_skill", task)]), reply("the skill says 2000 lines"))
    view = Events()
    chat = make_chat(server, registry(skill), view)
    result = chat.send("how long is the digest reference?")

    assert result.answer == "the skill says 2000 lines"
    forked = fork_requests(server)
    assert len(forked) == 2 and len(server.completions) == 4
    assert "MARK-BODY" in forked[0][0]["content"]  # the body is the fork's system prompt
    assert forked[0][1] == {"role": "user", "content": "summarise the reference"}
    # The parent's last request has the answer, and nothing the fork read.
    parent = sent(server, -1)
    assert "reference line" not in json.dumps(parent)
    returned = json.loads(parent[-1]["content"])
    assert returned["answer"] == "DIGEST: 2000 lines" and returned["forked"] is True
    assert returned["tool_calls"] == 1 and returned["model"] == "openai/test-model"
    # Its events: started, the nested read, ended answered.
    assert isinstance(view.forks[0], ForkStarted)
    nested = [
        e.event.record.name
        for e in view.forks
        if isinstance(e, ForkStep) and isinstance(e.event, ToolFinished)
    ]
    assert nested == ["read_file_in_skill"]
    end = view.forks[-1]
    assert isinstance(end, ForkEnded) and end.summary["outcome"] == "answered"
    assert end.summary["requests"] == 2
    # The fork's messages never joined the parent's transcript.
    assert "reference line" not in json.dumps(chat.messages)


def test_slash_name_text_is_the_forks_task(server: ScriptedServer, tmp_path: Path) -> None:
    skill = forked_skill(tmp_path)
    server.when("", reply("fork done"), system=FORK_SYSTEM)
    server.script(reply("parent relays: fork done"))
    chat = make_chat(server, registry(skill))
    assert chat.send("/digest count the lines").answer == "parent relays: fork done"
    assert fork_requests(server)[0][1]["content"] == "count the lines"
    assert json.loads(sent(server, -1)[-1]["content"])["answer"] == "fork done"


def test_a_fork_that_never_stops_ends_at_the_round_cap(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skill = forked_skill(tmp_path)
    again = call("list_skills", {})
    server.when("", reply(calls=[again]), system=FORK_SYSTEM)  # the last move repeats
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "digest", "task": "x"})]),
        reply("it never finished"),
    )
    chat = make_chat(server, registry(skill), max_tool_rounds=3)
    assert chat.send("go").answer == "it never finished"
    assert len(fork_requests(server)) == 4  # 3 rounds, then the capped request
    result = json.loads(sent(server, -1)[-1]["content"])
    assert result["error_code"] == "ROUND_LIMIT" and "3 tool rounds" in result["error"]


def test_a_huge_fork_answer_is_capped_with_a_notice(server: ScriptedServer, tmp_path: Path) -> None:
    skill = forked_skill(tmp_path)
    server.when("", reply("y" * (FORK_ANSWER_CHARS * 3)), system=FORK_SYSTEM)
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "digest", "task": "x"})]), reply("ok")
    )
    make_chat(server, registry(skill)).send("go")
    result = json.loads(sent(server, -1)[-1]["content"])
    assert result["truncated"] is True
    assert result["answer"].startswith("y" * FORK_ANSWER_CHARS)
    assert f"answer cut at {FORK_ANSWER_CHARS:,} of {FORK_ANSWER_CHARS * 3:,}" in result["answer"]
    assert len(result["answer"]) < FORK_ANSWER_CHARS + 200


def test_eval_reports_a_forked_skill_as_started(server: ScriptedServer, tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    folder = skill_folder(skills, "pdf", "name: pdf\ndescription: Fill PDF forms.\ncontext: fork\n")
    write_files(folder, {"references/forms.md": "# Forms\n"})
    read = call("read_file_in_skill", {"skill_name": "pdf", "file_path": "references/forms.md"})
    server.when("", reply(calls=[read]), reply("filled in"), system='<skill name="pdf">')
    started = call("get_skill", {"skill_name": "pdf", "task": "fill it"})
    server.when("fill", reply(calls=[started]), reply("filled"))
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps([{"query": "fill my form", "should_trigger": True}]))
    done = skillchat("eval", str(queries), "--model", "openai/test-model", "--api-base",
                     server.base_url, "--skill", "pdf", "--skills-dir", str(skills),
                     "--runs", "1", "--json", stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["queries"][0]["runs"]
    assert run["activated"] == ["pdf"] and run["files_read"] == ["pdf/references/forms.md"]
