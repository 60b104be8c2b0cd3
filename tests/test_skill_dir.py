"""`${CLAUDE_SKILL_DIR}` and `${SKILL_DIR}` in a body: the folder as the model must
name it, `/skills/<name>` where commands run (here through the real CLI and real
bubblewrap), the skill-relative form where they do not; never the host's path."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ask_json, skill_folder, write_files
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import require_sandbox

from skillchat.prompt import SCRIPTS_CANNOT_RUN, SKILL_FOLDER_IN_SANDBOX

BODY = "Run `python3 ${CLAUDE_SKILL_DIR}/scripts/x.py`, then read ${SKILL_DIR}/notes.md.\n"


def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    folder = skill_folder(root, "runner", "name: runner\ndescription: Runs x.\n", BODY)
    write_files(folder, {"scripts/x.py": "print('RAN FROM THE SKILL')\n", "notes.md": "NOTES\n"})
    return root


def test_the_sandbox_path_is_what_a_command_runs(server: ScriptedServer, tmp_path: Path) -> None:
    require_sandbox()
    root = skills(tmp_path)
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "runner"})]),
        reply(
            calls=[
                call(
                    "run_command",
                    {"command": "python3 /skills/runner/scripts/x.py", "skill_name": "runner"},
                ),
                # What the body says, as the model may pass it on: the skill's own folder.
                call(
                    "read_file_in_skill",
                    {"skill_name": "runner", "file_path": "/skills/runner/notes.md"},
                ),
            ]
        ),
        reply("done"),
    )
    report = ask_json(server, root, "--allow-run", "go")
    get, run, read = (c["result"] for c in report["tool_calls"])
    body = json.loads(get)["documentation"]
    assert body == (
        "Run `python3 /skills/runner/scripts/x.py`, then read /skills/runner/notes.md.\n"
    )
    assert str(tmp_path) not in get
    assert json.loads(run)["stdout"] == "RAN FROM THE SKILL\n"
    assert read == "NOTES\n"
    assert SKILL_FOLDER_IN_SANDBOX in server.completions[0].body["messages"][0]["content"]


def test_without_commands_the_folder_is_skill_relative(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path)
    config = tmp_path / "off.toml"
    config.write_text("[run]\nenabled = false\n")
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "runner"})]),
        reply(
            calls=[call("read_file_in_skill", {"skill_name": "runner", "file_path": "notes.md"})]
        ),
        reply("done"),
    )
    report = ask_json(server, root, "--config", str(config), "go")
    get, read = (c["result"] for c in report["tool_calls"])
    assert json.loads(get)["documentation"] == ("Run `python3 scripts/x.py`, then read notes.md.\n")
    assert read == "NOTES\n"
    system = server.completions[0].body["messages"][0]["content"]
    assert SCRIPTS_CANNOT_RUN in system and SKILL_FOLDER_IN_SANDBOX not in system
