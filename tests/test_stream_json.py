"""`ask --output-format stream-json`, read as a script reads it (docs/stream-json.md):
a real process whose stdout is read line by line as the lines come, each line
checked against docs/stream-json.schema.json; the turn uses a skill, a command in
the real bubblewrap sandbox, a forked skill and a tool of a real stdio MCP server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

from fork_helpers import FORK, digest_skills
from helpers import REPO, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, error, reply
from request_probe import REQUEST_PROBE
from sandbox_helpers import require_sandbox
from stream_json_helpers import SCHEMA, VALIDATOR, Stream, checked, rebuilt

from skillchat.engine.emit import TextEnd
from skillchat.skills.model import ExclusionReason

ANSWER = "Final: 5, sandboxed-42 and the digest — “done” ✓\nwith a second line."


def everything(server: ScriptedServer, tmp_path: Path) -> list[str]:
    """The scripted turn and the command line that asks for it (but its format): a
    `/notes` skill, then a command and an MCP call in one reply, then a fork; the
    answer held until the test releases "final"."""
    skills = digest_skills(tmp_path / "skills", "three notes")
    skill_folder(skills, "notes", "name: notes\ndescription: Takes notes.\n")
    config = tmp_path / "config.toml"
    servers = REPO / "tests" / "mcp_servers.py"
    config.write_text(
        f"[mcp.basic]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(servers), 'basic'])}\n"
    )
    server.when("", reply("digest: three notes"), system=FORK)
    server.when(
        "do everything",
        reply("never played: /notes's get_skill is the first assistant message"),
        reply(
            "Checking. ",
            calls=[
                call(
                    "run_command",
                    {"command": "echo sandboxed-$((6*7))", "skill_name": "notes"},
                    id="call_cmd",
                ),
                call("mcp__basic__add", {"a": 2, "b": 3}, id="call_mcp"),
            ],
        ),
        reply(
            calls=[
                call(
                    "get_skill",
                    {"skill_name": "digest", "task": "digest the notes"},
                    id="call_fork",
                )
            ]
        ),
        reply(ANSWER, chunks=9, hold="final"),
    )
    return [
        "ask", *session_options(server, skills), "--config", str(config), "--no-workspace",
        "--allow-run", "--allow-mcp", "/notes do everything",
    ]  # fmt: skip


def test_a_turn_with_a_skill_a_command_a_fork_and_an_mcp_call_streams_as_it_happens(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    argv = everything(server, tmp_path)
    stream = Stream(*argv[:1], "--output-format", "stream-json", *argv[1:])
    # The fork's result is out while the answer's request is still held: the lines
    # come as the turn goes, not at its end.
    stream.until(lambda e: e["type"] == "tool_result" and e["name"] == "get_skill"
                 and not e["synthetic"])  # fmt: skip
    assert stream.process.poll() is None
    assert not [e for e in stream.events if e["type"] == "result"]
    server.release("final")
    assert stream.finish() == 0, stream.stderr()
    events = stream.events
    result = checked(events)

    init = events[0]
    assert init["chat_id"] and init["model"] == "openai/test-model"
    assert init["skills"] == ["digest", "notes"] and init["skills_left_out"] == []
    assert init["mcp_servers"] == [{"name": "basic", "status": "ready", "error": None, "tools": 8}]
    assert "mcp__basic__add" in init["tools"] and "run_command" in init["tools"]

    # Every tool use has its one result, by id; the fork's own events carry its number.
    uses = {e["tool_use_id"]: e for e in events if e["type"] == "tool_use" and "fork" not in e}
    results = {e["tool_use_id"]: e for e in events
               if e["type"] == "tool_result" and "fork" not in e}  # fmt: skip
    assert uses.keys() == results.keys() and len(uses) == 4
    assert sorted(u["name"] for u in uses.values()) == sorted(
        ["get_skill", "run_command", "mcp__basic__add", "get_skill"]
    )
    by_name = {r["name"]: r for r in results.values() if not r["synthetic"]}
    ran = json.loads(by_name["run_command"]["content"])
    assert ran["exit_code"] == 0 and ran["stdout"] == "sandboxed-42\n"  # the real sandbox
    assert "5" in by_name["mcp__basic__add"]["content"]
    answered = [(e["tool"], e["decision"]) for e in events if e["type"] == "consent_response"]
    assert answered == [("run_command", "approved"), ("mcp__basic__add", "approved")]
    asked = [e["tool"] for e in events if e["type"] == "consent_request"]
    assert asked == ["run_command", "mcp__basic__add"]
    started = [e for e in events if e["type"] == "fork_start"]
    ended = [e for e in events if e["type"] == "fork_end"]
    assert [(e["skill"], e["task"]) for e in started] == [("digest", "digest the notes")]
    assert ended[0]["outcome"] == "answered" and ended[0]["fork"] == started[0]["fork"]
    own = [e for e in events if e.get("fork") == started[0]["fork"]]
    assert "".join(e["text"] for e in own if e["type"] == "text_delta") == "digest: three notes"

    # The answer, rebuilt from the deltas exactly; the usage, the `json` object's.
    assert rebuilt(events) == ANSWER == result["answer"]
    assert len([e for e in events if e["type"] == "text_delta" and "fork" not in e]) > 2
    assert result["subtype"] == "success" and result["exit_code"] == 0 and result["forks"] == 1
    mine = [e for e in events if e["type"] == "usage" and "fork" not in e]
    assert result["usage"]["total_tokens"] == sum(e["total_tokens"] for e in mine)
    every = [e for e in events if e["type"] == "usage"]
    assert sum(m["total_tokens"] for m in result["usage_by_model"].values()) == sum(
        e["total_tokens"] for e in every
    )
    done = skillchat(*argv[:1], "--output-format", "json", *argv[1:], subprocess=True)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["answer"] == result["answer"]
    assert report["usage"] == result["usage"]
    assert report["usage_by_model"] == result["usage_by_model"]


def test_json_is_the_one_object_of_json_and_both_spellings_agree(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`--output-format json` is today's `--json`; asking for both formats at once is
    a usage error, not a guess."""
    skills = tmp_path / "skills"
    skills.mkdir()
    server.when("hi", reply("hello"))
    base = ["ask", *session_options(server, skills), "--no-workspace", "hi"]
    spelled = [json.loads(skillchat(*base, flag).stdout) for flag in ("--json",)]
    spelled += [json.loads(skillchat(*base, "--output-format", "json").stdout)]
    assert [s["answer"] for s in spelled] == ["hello", "hello"]
    assert spelled[0].keys() == spelled[1].keys()
    both = skillchat(*base, "--json", "--output-format", "stream-json")
    assert both.returncode == 2 and "exclude each other" in both.stderr
    assert json.loads(both.stdout)["exit_code"] == 2  # --json's error object, as ever
    server.when("fail", error(500))
    failed = skillchat(*base[:-1], "--output-format", "json", "fail")
    assert failed.returncode == 1 and json.loads(failed.stdout)["exit_code"] == 1  # as --json's


def test_init_names_what_is_left_out_and_why(server: ScriptedServer, tmp_path: Path) -> None:
    """A skill that cannot load is counted out with its reason in `init`, and the
    turn goes on; with no MCP server configured, none is listed."""
    skills = tmp_path / "skills"
    skill_folder(skills, "good", "name: good\ndescription: Good.\n")
    skill_folder(skills, "broken", "name: broken\ndescription: [unclosed\n")
    server.when("hi", reply("hello"))
    stream = Stream("ask", "--output-format", "stream-json", *session_options(server, skills),
                    "--no-workspace", "hi")  # fmt: skip
    assert stream.finish() == 0
    init, result = stream.events[0], checked(stream.events)
    assert init["skills"] == ["good"] and init["mcp_servers"] == []
    [left] = init["skills_left_out"]
    assert left["reason"] == "invalid" and left["path"].endswith("broken")
    assert "YAML" in left["why"]
    assert result["answer"] == "hello"


def test_nothing_heavy_is_imported_before_the_request(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`ask`'s fast path holds with stream-json: `init` and the events before the
    request are written without Rich (a shortened catalog's warning included, once
    printed through it) and the line is read without Typer."""
    server.script(reply("ok"))
    config = tmp_path / "config.toml"
    config.write_text("[skills]\ncatalog_max_chars = 400\n")
    skills = tmp_path / "skills"
    for n in range(6):
        skill_folder(skills, f"s{n}", f"name: s{n}\ndescription: {'Does things. ' * 20}\n")
    argv = ["ask", "--output-format", "stream-json", *session_options(server, skills),
            "--config", str(config), "--no-workspace", "hi"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", REQUEST_PROBE, str(server.port), *argv],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert checked(events)["answer"] == "ok"
    assert any("shortened" in e["message"] for e in events if e["type"] == "notice")
    code, seen = done.stderr.splitlines()[-1].split(" ", 1)
    assert code == "0" and json.loads(seen) and json.loads(seen) == [[]] * len(json.loads(seen))


def test_the_documented_example_is_a_valid_stream() -> None:
    """docs/stream-json.md's example: every line valid, in order, one chat, its
    answer rebuilt from its deltas and its usage the sum of its `usage` events."""
    page = (REPO / "docs" / "stream-json.md").read_text()
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    events = [json.loads(line) for line in block.splitlines()]
    for event in events:
        assert not list(VALIDATOR.iter_errors(event)), event
    result = checked(events)
    assert rebuilt(events) == result["answer"]
    usage = [e for e in events if e["type"] == "usage"]
    mine = sum(e["total_tokens"] for e in usage if "fork" not in e)
    assert result["usage"]["total_tokens"] == mine
    every = sum(e["total_tokens"] for e in usage)
    assert sum(m["total_tokens"] for m in result["usage_by_model"].values()) == every


def test_a_compaction_a_refused_command_and_a_server_that_fails_are_events(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """The fourth question of a chat continued under a small window compacts it
    first (a `compaction` event, in the continued chat); a command without
    `--allow-run` is asked and refused (`consent_response`, its reason); an MCP
    server that cannot start is in `init` with its error, and the turn goes on."""
    skills = tmp_path / "skills"
    skill_folder(skills, "pdf", "name: pdf\ndescription: Reads PDFs.\n", "# PDF\nCheck pages.\n")
    server.props = {"default_generation_settings": {"n_ctx": 2048}}
    run = {"command": "echo hi", "skill_name": "pdf"}
    server.script(reply("one"), reply("two"), reply("three"), reply("The summary."),
                  reply(calls=[call("run_command", run, id="cmd")]), reply("four"))  # fmt: skip
    padding = " x" * 350
    base = ["ask", *session_options(server, skills), "--no-workspace"]
    for n, text in enumerate(("/pdf alpha", "second", "third")):
        done = skillchat(*base, *(["-c"] if n else []), text + padding)
        assert done.returncode == 0, done.stderr
    config = tmp_path / "config.toml"
    config.write_text('[mcp.gone]\ncommand = "/nonexistent/server"\n')
    done = skillchat(*base, "--config", str(config), "--output-format", "stream-json", "-c",
                     "fourth" + padding)  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    for event in events:
        assert not list(VALIDATOR.iter_errors(event)), event
    result = checked(events)
    assert result["answer"] == "four" and done.stderr == ""
    [gone] = events[0]["mcp_servers"]
    assert gone["name"] == "gone" and gone["status"] == "failed" and gone["error"]
    [compacted] = [e for e in events if e["type"] == "compaction"]
    assert compacted["messages_before"] == 9 and compacted["skills"] == ["pdf"]
    chats = skillchat("chats", "list").stdout.splitlines()
    assert len(chats) == 1 and chats[0].startswith(result["chat_id"])
    [answer] = [e for e in events if e["type"] == "consent_response"]
    assert answer["decision"] == "refused" and "--allow-run" in answer["reason"]
    [refused] = [e for e in events if e["type"] == "tool_result" and e["tool_use_id"] == "cmd"]
    assert refused["is_error"] and refused["error_code"] == "NOT_ALLOWED"


def test_the_schemas_lists_are_the_codes() -> None:
    """What the schema lists as a field's values is what the code can write: a
    new reason a skill is left out, a new way a reply's text ends, is added to both."""
    defs = SCHEMA["$defs"]
    left_out = defs["init"]["properties"]["skills_left_out"]["items"]["properties"]
    assert set(left_out["reason"]["enum"]) == set(get_args(ExclusionReason))
    assert set(defs["text_end"]["properties"]["how"]["enum"]) == set(get_args(TextEnd))
    assert set(SCHEMA["properties"]["type"]["enum"]) == {
        ref["$ref"].rsplit("/", 1)[1] for ref in SCHEMA["oneOf"]
    }


def test_print_takes_the_format_as_claude_p_does(server: ScriptedServer, tmp_path: Path) -> None:
    """`skillchat -p --output-format stream-json "QUESTION"`, the line a `claude -p`
    script has: the format's value is not read as the question, in either order."""
    skills = tmp_path / "skills"
    skills.mkdir()
    server.when("hi there", reply("hello"))
    base = [*session_options(server, skills), "--no-workspace"]
    for argv in (["-p", "--output-format", "stream-json", "hi there", *base],
                 ["--output-format", "stream-json", *base, "-p", "hi there"]):  # fmt: skip
        done = skillchat(*argv)
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        assert checked(events)["answer"] == "hello"
