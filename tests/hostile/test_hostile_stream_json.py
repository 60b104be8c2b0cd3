"""`ask --output-format stream-json` facing a hostile model, tool and skill: each test
runs the real `skillchat` command, reads its stdout line by line as a script does
(tests/stream_json_helpers.py checks every line: one JSON object, valid against
docs/stream-json.schema.json, no character a terminal obeys), and holds one promise
of docs/security.md's "Streamed JSON"."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from helpers import REPO, session_options, skill_folder, wait_for
from openai_server import ScriptedServer, call, error, reply
from sandbox_helpers import require_sandbox
from stream_json_helpers import Stream, checked, rebuilt

from skillchat.ui.stream_json import MAX_RESULT_CHARS

CANARY = "sk-stream-canary-8f14e45fceea167a"
# What a model may stream to take over the terminal of whoever watches the output:
# a title and the clipboard (OSC), a screen wipe, bell, carriage return, backspace,
# a C1 CSI, a bidi override, DEL, NUL.
HOSTILE = "a\x1b]0;owned\x07b\x1b]52;c;aGk=\x07c\x1b[2J\r\x08d\x9b31me\u202ef\x7fg\x00h"


def streamed(server: ScriptedServer, skills: Path, *args: str, env: dict[str, str] | None = None
             ) -> Stream:  # fmt: skip
    return Stream("ask", "--output-format", "stream-json", *session_options(server, skills),
                  "--no-workspace", *args, env=env)  # fmt: skip


def empty(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    skills.mkdir(exist_ok=True)
    return skills


def test_control_characters_and_a_lone_surrogate_from_the_model_are_escaped_and_rebuilt(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Every character of the model's text a terminal would obey is a JSON escape on
    the line (`\\u001b`, `\\u009b`, `\\u202e`...), never the character; the answer
    the deltas rebuild is the result's, character for character. A lone surrogate
    (`\\ud800`, valid JSON that no UTF-8 encoder takes) is U+FFFD in both."""
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in HOSTILE]
    raw = '{"choices": [{"index": 0, "delta": {"content": " lone \\ud800 end"}}]}'
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    server.when("hi", {"events": [*chunks, raw, done]})
    stream = streamed(server, empty(tmp_path), "hi")
    assert stream.finish() == 0, stream.stderr()
    result = checked(stream.events)
    assert rebuilt(stream.events) == result["answer"] == HOSTILE + " lone \ufffd end"
    lines = b"".join(stream.raw)
    assert b"\\u001b]0;owned\\u0007" in lines and b"\\u009b" in lines and b"\\u202e" in lines
    assert b"\x1b" not in lines and b"\xc2\x9b" not in lines


def test_invalid_utf8_mid_reply_is_an_error_event_and_exit_1(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A reply whose bytes stop being UTF-8 ends the turn as in text mode (exit 1,
    one line on stderr): an `error` event, then the `result`; what arrived before is
    in its deltas, and the text is marked failed."""
    first = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "so far "}}]}
    broken = '{"choices": [{"index": 0, "delta": {"content": "bad \udcff\udcfe bytes"}}]}'
    server.when("hi", {"events": [first, broken]})
    stream = streamed(server, empty(tmp_path), "hi")
    assert stream.finish() == 1
    result = checked(stream.events)
    kinds = [e["type"] for e in stream.events]
    assert kinds[-4:] == ["text_delta", "text_end", "error", "result"]
    assert stream.events[-3]["how"] == "failed" and stream.events[-4]["text"] == "so far "
    [fatal] = [e for e in stream.events if e["type"] == "error"]
    assert fatal["fatal"] and fatal["error_type"] == "ProviderError"
    assert result["is_error"] and result["exit_code"] == 1 and result["subtype"] == "error"
    errors = [line for line in stream.stderr().splitlines() if line.startswith("skillchat: error")]
    assert len(errors) == 1 and "Traceback" not in stream.stderr()


def test_a_tool_result_of_megabytes_is_cut_on_its_line_and_escapes_stay_escaped(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A real MCP server's 3 MB result reaches the model as the model gets it, but its
    event carries the first `MAX_RESULT_CHARS` characters and says how many there
    were; a sandboxed command printing OSC and CSI sequences is escaped on its line."""
    require_sandbox()
    config = tmp_path / "config.toml"
    servers = REPO / "tests" / "mcp_servers.py"
    config.write_text(
        f"[mcp.basic]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(servers), 'basic'])}\n"
    )
    size = 3_000_000
    command = r"printf '\033]52;c;aGk=\007\033[2J\233m done'"
    server.when(
        "go",
        reply(
            calls=[
                call("mcp__basic__big", {"size": size}, id="big"),
                call("run_command", {"command": command, "skill_name": "shell"}, id="cmd"),
            ]
        ),
        reply("ok"),
    )
    skills = skill_folder(tmp_path / "skills", "shell", "name: shell\ndescription: Runs.\n").parent
    stream = streamed(server, skills, "--config", str(config), "--allow-mcp", "--allow-run", "go")
    assert stream.finish() == 0, stream.stderr()
    checked(stream.events)
    results = {e["tool_use_id"]: e for e in stream.events if e["type"] == "tool_result"}
    big = results["big"]
    assert len(big["content"]) == MAX_RESULT_CHARS and big["truncated"]
    assert big["content_chars"] > MAX_RESULT_CHARS
    assert max(len(line) for line in stream.raw) < MAX_RESULT_CHARS * 2
    ran = json.loads(results["cmd"]["content"])
    assert ran["stdout"].startswith("\x1b]52;c;aGk=\x07\x1b[2J")  # decoded: the bytes ran
    assert b"\x1b" not in b"".join(stream.raw)


def test_a_provider_error_is_an_error_event_and_no_key_is_on_any_line(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A provider's refusal that echoes the key ends the command as in text mode (exit
    1): an `error` event and the `result`, and the key is on no line of stdout or
    stderr; `init` holds no setting beyond the model's name."""
    server.when("hi", error(401, f"Incorrect API key provided: {CANARY}."))
    env = {**os.environ, "OPENAI_API_KEY": CANARY}
    stream = streamed(server, empty(tmp_path), "hi", env=env)
    assert stream.finish() == 1
    result = checked(stream.events)
    [fatal] = [e for e in stream.events if e["type"] == "error"]
    assert fatal["fatal"] and fatal["error_type"] == "ProviderError" and "(401)" in fatal["message"]
    assert result["is_error"] and result["exit_code"] == 1
    everything = b"".join(stream.raw).decode() + stream.stderr()
    assert CANARY not in everything and CANARY[:12] not in everything


def test_a_bad_skill_named_by_the_user_is_an_error_event_and_nothing_is_sent(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`/broken` whose SKILL.md does not load stops `ask` before any request (exit
    2, as in text mode): `init` says why the skill is left out, an `error` event
    repeats it, the `result` follows."""
    skills = empty(tmp_path)
    skill_folder(skills, "broken", "name: broken\ndescription: [unclosed\n")
    stream = streamed(server, skills, "/broken do it")
    assert stream.finish() == 2
    result = checked(stream.events)
    assert stream.events[0]["skills_left_out"][0]["reason"] == "invalid"
    [fatal] = [e for e in stream.events if e["type"] == "error"]
    assert fatal["fatal"] and "broken" in fatal["message"]
    assert "nothing was sent" in fatal["message"]
    assert result["exit_code"] == 2 and server.completions == []


@pytest.mark.parametrize(
    ("signum", "code", "subtype"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
def test_sigterm_or_ctrl_c_mid_turn_still_ends_with_a_result(
    server: ScriptedServer, tmp_path: Path, signum: int, code: int, subtype: str
) -> None:
    """`timeout`, a closing CI job, Ctrl-C: the stream still ends with its `result`
    (`terminated`, exit 143; `interrupted`, exit 130), so a script never waits for a
    line that cannot come."""
    server.when("hi", reply("never sent", hold="never"))
    stream = streamed(server, empty(tmp_path), "hi")
    stream.until(lambda e: e["type"] == "init")
    assert wait_for(lambda: len(server.completions) == 1, 120)
    stream.process.send_signal(signum)
    assert stream.finish() == code
    result = checked(stream.events)
    assert result["subtype"] == subtype and result["exit_code"] == code


def test_two_forks_at_once_running_commands_keep_their_events_apart(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Two forked skills started by one reply run at once, each running a command in
    the sandbox: every event of each carries its own fork's number, each consent
    question names the fork asking it, each call pairs with its result inside its
    fork, and the chat's own answer is rebuilt from the chat's deltas alone."""
    require_sandbox()
    skills = tmp_path / "skills"
    for name in ("alpha", "beta"):
        skill_folder(skills, name, f"name: {name}\ndescription: Works.\ncontext: fork\n",
                     f"# {name}\nRun one command.\n")  # fmt: skip
        run = {"command": f"echo from-{name}", "skill_name": name}
        server.when("", reply(f"{name} says ", calls=[call("run_command", run, id=f"{name}_cmd")]),
                    reply(f"{name} done"), system=f'<skill name="{name}">')  # fmt: skip
    tasks = [call("get_skill", {"skill_name": n, "task": f"work {n}"}, id=f"{n}_fork")
             for n in ("alpha", "beta")]  # fmt: skip
    server.when("both", reply(calls=tasks), reply("both done"))
    stream = streamed(server, skills, "--allow-run", "both")
    assert stream.finish() == 0, stream.stderr()
    result = checked(stream.events)
    assert rebuilt(stream.events) == result["answer"] == "both done"
    numbers = {e["skill"]: e["fork"] for e in stream.events if e["type"] == "fork_start"}
    assert sorted(numbers) == ["alpha", "beta"] and len(set(numbers.values())) == 2
    for name, number in numbers.items():
        own = [e for e in stream.events if e.get("fork") == number]
        assert {e["skill"] for e in own} == {name}
        [use] = [e for e in own if e["type"] == "tool_use"]
        [done] = [e for e in own if e["type"] == "tool_result"]
        assert use["tool_use_id"] == done["tool_use_id"] == f"{name}_cmd"
        assert json.loads(done["content"])["stdout"] == f"from-{name}\n"
        text = "".join(e["text"] for e in own if e["type"] == "text_delta")
        assert text == f"{name} says {name} done"
    asked = sorted(e["asked_by"] for e in stream.events if e["type"] == "consent_request")
    assert asked == [f"alpha #{numbers['alpha']}", f"beta #{numbers['beta']}"]
