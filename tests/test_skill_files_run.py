"""A trusted skill's `allowed-tools: Bash(python3 scripts/fill.py:*)`, through the real
CLI and the real sandbox, with a workspace (a cloned repository) that has its own
`scripts/fill.py`: the rule lets the skill's file run, never the workspace's, and
never another skill's under a claimed `skill_name`. Each script prints whose it is."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from consent_helpers import QUESTION
from helpers import session_options, skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

RULE = "Bash(python3 scripts/fill.py:*)"


@pytest.fixture
def folders(isolated_env: Path, tmp_path: Path) -> tuple[Path, Path]:
    """User-level (so trusted) skills `filler` and `other`, both allowing RULE, and a
    workspace with its own `scripts/fill.py`, also in a folder named `$SKILL_DIR`."""
    require_sandbox()
    root = isolated_env / ".agents" / "skills"
    for name in ("filler", "other"):
        folder = skill_folder(root, name, f"name: {name}\ndescription: d\nallowed-tools: {RULE}\n")
        write_files(folder, {"scripts/fill.py": f"print('SKILL {name}')\n"})
    workspace = write_files(
        tmp_path / "repo",
        {
            "scripts/fill.py": "print('WORKSPACE')\n",
            "$SKILL_DIR/scripts/fill.py": "print('WORKSPACE')\n",
        },
    )
    return root, workspace


def ask_runs(
    server: ScriptedServer, root: Path, workspace: Path, calls: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """One `ask --allow-run` under `[run] allowed_tools = "restrict"` (a command its
    skill's rules do not allow is refused, even with --allow-run), the model asking
    for each (skill, command) of `calls`; the results, in order."""
    config = root.parent / "restrict.toml"
    config.write_text('[run]\nallowed_tools = "restrict"\n')
    tool_calls = [call("run_command", {"command": c, "skill_name": s}) for s, c in calls]
    server.script(reply("", calls=tool_calls), reply("done"))
    argv = [*session_options(server, root), "--config", str(config)]
    done = skillchat(
        "ask", "--json", *argv, "--allow-run", "--workspace", str(workspace), "go",
        stdin=subprocess.DEVNULL, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return [json.loads(c["result"]) for c in report["tool_calls"] if c["name"] == "run_command"]


def test_the_rule_runs_the_skills_file_and_refuses_the_workspaces(
    server: ScriptedServer, folders: tuple[Path, Path]
) -> None:
    root, workspace = folders
    results = ask_runs(
        server,
        root,
        workspace,
        [
            ("filler", "python3 /skills/filler/scripts/fill.py"),
            ("filler", "cd /skills/filler && python3 scripts/fill.py"),
            ("filler", 'cd "$SKILL_DIR" && python3 scripts/fill.py'),
            ("filler", "python3 scripts/fill.py"),  # from /workspace: the repository's file
            ("filler", "cd '$SKILL_DIR' && python3 scripts/fill.py"),  # a folder of that name
            ("other", "python3 /skills/filler/scripts/fill.py"),  # other's rule, filler's file
            ("other", "cd $SKILL_DIR && python3 scripts/fill.py"),
        ],
    )
    ran = [r.get("stdout") for r in results]
    assert ran == ["SKILL filler\n"] * 3 + [None] * 3 + ["SKILL other\n"]
    for refused in results[3:6]:
        assert refused["error_code"] == "NOT_ALLOWED" and "restrict" in refused["error"]
        assert RULE in refused["error"]


def test_in_the_repl_the_skills_file_runs_unasked_and_the_workspaces_is_asked(
    server: ScriptedServer,
    folders: tuple[Path, Path],
    pty_sessions: Callable[..., PtySession],
) -> None:
    root, workspace = folders
    mine = call(
        "run_command",
        {"command": "cd /skills/filler && python3 scripts/fill.py", "skill_name": "filler"},
    )
    theirs = call("run_command", {"command": "python3 scripts/fill.py", "skill_name": "filler"})
    server.script(reply("", calls=[mine]), reply("ran"), reply("", calls=[theirs]), reply("no"))
    session = pty_sessions(*session_options(server, root), "--workspace", str(workspace))
    session.prompt()
    screen = session.run("one")
    assert QUESTION not in screen and f"pre-approved: allowed by {RULE}" in screen
    assert "SKILL filler" in screen
    session.line("two")
    screen = session.expect(QUESTION)
    assert "asking because: not in skill 'filler' allowed-tools" in screen
    session.send("n")  # one key, no Enter
    session.prompt()
    assert session.quit() == 0
    assert "WORKSPACE" not in "".join(session.output)
