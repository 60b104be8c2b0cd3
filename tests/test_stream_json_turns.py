"""What docs/stream-json.md promises of a stream beyond one clean turn, read as a
script reads it (a real process, every line checked against the schema; Ctrl-C
is beside SIGTERM in tests/hostile/test_hostile_stream_json.py): something wrong
that does not end the command is an `error` event with `fatal: false` and the turn goes on; and a
scripted multi-turn session is `ask --chat ID` with the `chat_id` of the last
`result`, each turn's stream carrying that id."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import session_options
from openai_server import ScriptedServer, reply
from stream_json_helpers import Stream, checked, rebuilt


def streamed(server: ScriptedServer, tmp_path: Path, *args: str) -> Stream:
    """`ask --output-format stream-json` over an empty skills folder."""
    skills = tmp_path / "skills"
    skills.mkdir(exist_ok=True)
    return Stream("ask", "--output-format", "stream-json", *session_options(server, skills),
                  "--no-workspace", *args)  # fmt: skip


def test_a_problem_that_does_not_end_the_command_is_a_non_fatal_error_event(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """An overrides file that cannot be read is ignored with one line: here an
    `error` event with `fatal: false` and its path, and the answer still comes."""
    overrides = Path(os.environ["XDG_CONFIG_HOME"]) / "skillchat" / "overrides.toml"
    overrides.parent.mkdir(parents=True, exist_ok=True)
    overrides.write_text("this is [not toml")
    server.script(reply("still here"))
    stream = streamed(server, tmp_path, "hi")
    assert stream.finish() == 0, stream.stderr()
    result = checked(stream.events)
    [problem] = [e for e in stream.events if e["type"] == "error"]
    assert problem["fatal"] is False and problem["path"] == str(overrides)
    assert "overrides file ignored" in problem["message"]
    assert result["subtype"] == "success" and result["answer"] == "still here"


def test_a_second_turn_goes_on_with_the_first_results_chat_id(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script(reply("first answer"), reply("second answer"))
    first = streamed(server, tmp_path, "one")
    assert first.finish() == 0, first.stderr()
    chat_id = checked(first.events)["chat_id"]
    assert chat_id
    second = streamed(server, tmp_path, "--chat", chat_id, "two")
    assert second.finish() == 0, second.stderr()
    assert checked(second.events)["chat_id"] == chat_id
    assert rebuilt(second.events) == "second answer"
    sent = [m.get("content") for m in server.completions[-1].body["messages"]]
    assert "one" in sent and "first answer" in sent and "two" in sent
