"""The protocol's own reference servers from PyPI, used as a user uses them: configured
as `[mcp.NAME]` stdio servers, their tools called by the scripted model through
`skillchat ask --allow-mcp`. `mcp-server-time` and `mcp-server-git` (on a scratch
repository) need no network once installed.

They run from a venv of their own (their releases pin an `mcp` of their own, not
necessarily skillchat's), installed once with uv into a cache folder (helpers.py
`installing`): the first run needs the package index, later ones nothing beyond
127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chat_helpers import tool_messages
from helpers import installing, session_options, skillchat, unavailable
from openai_server import ScriptedServer, call, reply

# The releases seen installing into a clean venv (with mcp 2.3.0) and serving here.
PACKAGES = ("mcp-server-time==2026.10.19", "mcp-server-git==2026.10.19")


@pytest.fixture(scope="module")
def servers(pytestconfig: pytest.Config) -> Path:
    """The venv's bin folder, with `mcp-server-time` and `mcp-server-git`."""
    uv = Path(sys.executable).parent / "uv"
    with installing(pytestconfig, "mcp-reference-servers") as folder:
        venv = folder / "venv"
        if not (venv / "bin" / "mcp-server-git").is_file():
            env = {**os.environ, "UV_CACHE_DIR": str(folder / "uv-cache")}
            for step in (
                [str(uv), "venv", "--quiet", "--clear", "--python", sys.executable, str(venv)],
                [str(uv), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                 *PACKAGES],
            ):  # fmt: skip
                done = subprocess.run(step, capture_output=True, text=True, timeout=600, env=env)
                if done.returncode:
                    unavailable(f"could not install {', '.join(PACKAGES)}: {done.stderr[-500:]}")
    return venv / "bin"


def ask(server: ScriptedServer, tmp_path: Path, table: str) -> list[dict[str, object]]:
    """`ask --allow-mcp` with `table` as the config; the results of the model's calls."""
    (tmp_path / "config.toml").write_text(table)
    (tmp_path / "skills").mkdir()
    done = skillchat(
        "ask", *session_options(server, tmp_path / "skills"), "--config",
        str(tmp_path / "config.toml"), "--allow-mcp", "go", subprocess=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr[-2000:]
    return [json.loads(m["content"]) for m in tool_messages(server)]


def test_the_time_servers_tools_are_called(
    servers: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    server.script(
        reply(calls=[call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
                     call("mcp__time__convert_time", {"source_timezone": "Europe/Paris",
                          "time": "16:30", "target_timezone": "America/New_York"})]),
        reply("done"),
    )  # fmt: skip
    table = (
        f'[mcp.time]\ncommand = "{servers / "mcp-server-time"}"\n'
        'args = ["--local-timezone", "UTC"]\nstartup_timeout_s = 300\n'
    )
    now, converted = ask(server, tmp_path, table)
    assert json.loads(str(now["content"]))["timezone"] == "Asia/Tokyo", now
    answer = json.loads(str(converted["content"]))
    assert "T16:30:00+0" in answer["source"]["datetime"], answer  # Paris: +01:00 or +02:00
    assert answer["target"]["timezone"] == "America/New_York", answer


def test_the_git_servers_tools_are_called_on_a_scratch_repository(
    servers: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "notes.txt").write_text("first\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the first commit"], check=True)
    (repo / "notes.txt").write_text("first\nsecond\n")
    server.script(
        reply(calls=[call("mcp__git__git_status", {"repo_path": str(repo)}),
                     call("mcp__git__git_log", {"repo_path": str(repo), "max_count": 5}),
                     call("mcp__git__git_diff_unstaged", {"repo_path": str(repo)})]),
        reply("done"),
    )  # fmt: skip
    table = (
        f'[mcp.git]\ncommand = "{servers / "mcp-server-git"}"\n'
        f'args = ["--repository", "{repo}"]\nstartup_timeout_s = 300\n'
    )
    status, log, diff = ask(server, tmp_path, table)
    assert "On branch main" in str(status["content"]) and "notes.txt" in str(status["content"])
    assert "the first commit" in str(log["content"]), log
    assert "+second" in str(diff["content"]), diff
