"""What a hook's JSON answer does, each as docs/hooks.md's table of events and its
paragraph on Claude Code's fields promise, with real hook scripts and the real
`skillchat ask` against the scripted model: `session_start`'s context, `systemMessage`
shown to the user, `continue: false` with its `stopReason`, a `post_tool_use` block
and `additionalContext` told to the model, `user_prompt_submit`'s JSON block, a
`pre_tool_use` "ask" where nobody can be asked, and a `stop` hook's block shown
without the turn going on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai_server import ScriptedServer, call, reply
from test_hooks import answering, ask, demo_skills, tool_messages

LOAD = call("get_skill", {"skill_name": "demo"})


def hooked(tmp: Path, event: str, answer: dict[str, Any], matcher: str = "") -> str:
    """The config of one `event` hook answering `answer`."""
    hook = answering(tmp / f"{event}.sh", answer)
    match = f'matcher = "{matcher}"\n' if matcher else ""
    return f'[[hooks.{event}]]\n{match}command = "{hook}"\n'


def run(server: ScriptedServer, tmp: Path, config: str, *moves: Any) -> Any:
    server.script(*moves)
    return ask(server, tmp, "--skills-dir", str(demo_skills(tmp)), config=config)


def test_session_start_adds_context_and_a_system_message_is_shown(
    server: ScriptedServer, tmp_path: Path
) -> None:
    context = {"hookEventName": "SessionStart", "additionalContext": "on branch main"}
    answer = {"hookSpecificOutput": context, "systemMessage": "welcome back"}
    done = run(server, tmp_path, hooked(tmp_path, "session_start", answer), reply("hi"))
    assert done.returncode == 0, done.stderr
    assert "on branch main" in json.dumps(server.completions[0].body["messages"])
    assert "welcome back" in done.stderr and "welcome back" not in done.stdout


def test_continue_false_refuses_the_call_with_its_stop_reason(
    server: ScriptedServer, tmp_path: Path
) -> None:
    answer = {"continue": False, "stopReason": "frozen for the release"}
    config = hooked(tmp_path, "pre_tool_use", answer, "get_skill")
    done = run(server, tmp_path, config, reply(calls=[LOAD]), reply("ok"))
    assert done.returncode == 0, done.stderr
    [result] = tool_messages(server)
    assert "frozen for the release" in json.loads(result)["error"]
    assert "# Body" not in result


def test_post_tool_use_block_and_context_are_told_to_the_model(
    server: ScriptedServer, tmp_path: Path
) -> None:
    block = {"decision": "block", "reason": "that skill is deprecated"}
    context = {"hookEventName": "PostToolUse", "additionalContext": "use v2 instead"}
    config = hooked(tmp_path, "post_tool_use", block, "get_skill")
    hook = answering(tmp_path / "more.sh", {"hookSpecificOutput": context})
    config += f'[[hooks.post_tool_use]]\nmatcher = "get_skill"\ncommand = "{hook}"\n'
    done = run(server, tmp_path, config, reply(calls=[LOAD]), reply("ok"))
    assert done.returncode == 0, done.stderr
    assert "that skill is deprecated" not in json.dumps(server.completions[0].body)
    told = json.dumps(server.completions[-1].body["messages"])
    assert "that skill is deprecated" in told and "use v2 instead" in told


def test_a_json_block_of_a_prompt_sends_nothing(server: ScriptedServer, tmp_path: Path) -> None:
    answer = {"decision": "block", "reason": "not on a Friday"}
    done = run(server, tmp_path, hooked(tmp_path, "user_prompt_submit", answer), reply("no"))
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("a hook blocked this message: not on a Friday")
    )
    assert server.completions == []


def test_ask_refuses_a_call_a_hook_wants_the_user_to_decide(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Nobody is there to ask in `ask`: the call is refused, the model reads why."""
    answer = {"hookSpecificOutput": {"permissionDecision": "ask"}}
    config = hooked(tmp_path, "pre_tool_use", answer, "get_skill")
    done = run(server, tmp_path, config, reply(calls=[LOAD]), reply("ok"))
    assert done.returncode == 0, done.stderr
    [result] = tool_messages(server)
    assert json.loads(result)["error_code"] == "HOOK_DENIED" and "# Body" not in result


def test_a_stop_hooks_block_is_shown_and_the_turn_not_continued(
    server: ScriptedServer, tmp_path: Path
) -> None:
    answer = {"decision": "block", "reason": "tests are red"}
    done = run(server, tmp_path, hooked(tmp_path, "stop", answer), reply("done"), reply("more"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "done"
    assert "tests are red" in done.stderr
    assert len(server.completions) == 1  # not continued
