"""`skillchat skills add` of a plugin, as a user runs it: a real Agent Plugins v1
package and a real Claude Code plugin, each with skills and a real stdio MCP server,
from real git repositories; its server off until enabled; removed without a trace.
The refusals of hostile plugins: tests/hostile/test_hostile_plugins.py."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from git_repos import commit, make_repo, url
from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer, call, reply
from plugin_helpers import (
    agent_plugin,
    agents,
    claude_plugin,
    data_dir,
    executable,
    lock,
    plugin_folder,
    servers_file,
)

if TYPE_CHECKING:
    from pty_session import PtySession


def plugin_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository holding the plugin, its server executable."""
    make_repo(root, files)
    executable(root)
    return commit(root, {})


def tools(name: str) -> list[str]:
    done = skillchat("mcp", "tools", name, "--json")
    assert done.returncode == 0, done.stderr
    return [row["name"] for row in json.loads(done.stdout)["tools"]]


def test_an_agent_plugin_installs_stays_off_until_enabled_and_removes_cleanly(
    tmp_path: Path,
) -> None:
    repo = plugin_repo(tmp_path / "acme", agent_plugin())
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    root = agents() / "plugins" / "acme"
    assert "plugin acme 1.0.0 (agent-plugins)" in done.stdout
    # the summary shows the command the server would run, resolved
    assert f"MCP server notes (off until `skillchat mcp enable notes`): {root}/bin/notes" in (
        done.stdout.replace("\n", "")
    )
    for skill in ("jot", "recall"):
        assert (agents() / "skills" / skill / "SKILL.md").is_file()
    record = lock()["plugins"]["acme"]
    assert (record["kind"], record["skills"], record["servers"]) == (
        "agent-plugins",
        ["jot", "recall"],
        ["notes"],
    )
    assert set(lock()["skills"]) == {"jot", "recall"}
    for path in (root, root / "bin", root / "bin" / "notes"):  # ${PLUGIN_ROOT}: read-only
        assert path.stat().st_mode & 0o222 == 0
    assert data_dir("acme").is_dir()
    listed = skillchat("skills", "list")
    assert "jot\tJot a note.\tuser-level" in listed.stdout.splitlines()

    # off: no session starts it, `mcp tools` says how to turn it on
    off = one_line_error(skillchat("mcp", "tools", "notes"), code=2)
    assert "is off until you enable it: skillchat mcp enable notes" in off
    asked = one_line_error(skillchat("ask", "--mcp", "notes", "hi"), code=2)
    assert "--mcp notes: MCP server 'notes' of plugin acme is off until you enable" in asked
    table = skillchat("mcp", "list", env={**os.environ, "COLUMNS": "300"})
    assert "off (plugin acme): skillchat mcp enable notes" in table.stdout
    assert "--mcp" not in table.stdout  # `--mcp notes` would not start it either
    listed = skillchat("mcp", "list", "--json")  # shown, not started, not a failure
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)["servers"]
    assert (row["name"], row["state"], row["target"]) == (
        "notes",
        "off",
        f"{root}/bin/notes {data_dir('acme')}/x",
    )
    refused = skillchat("mcp", "enable", "notes")  # not a terminal: --yes or nothing
    assert refused.returncode == 1 and f"{root}/bin/notes" in refused.stdout
    enabled = skillchat("mcp", "enable", "notes", "--yes")
    assert enabled.returncode == 0, enabled.stderr
    assert f"PLUGIN_DATA={data_dir('acme')}" in enabled.stdout
    assert tools("notes") == ["where"]

    assert skillchat("skills", "verify").returncode == 0
    os.chmod(root / "bin", 0o755)  # the server's script rewritten behind skillchat's back
    os.chmod(root / "bin" / "notes", 0o755)
    (root / "bin" / "notes").write_text("#!/bin/sh\n")
    verify = skillchat("skills", "verify")
    assert verify.returncode == 1
    assert "acme (plugin)\tchanged since installed: its folder changed" in verify.stdout
    removed = skillchat("skills", "remove", "acme")
    assert removed.returncode == 0, removed.stderr
    assert "its data folder" in removed.stdout and "deleted" in removed.stdout
    assert not os.path.lexists(root) and not data_dir("acme").exists()
    assert not servers_file().exists()
    assert lock() == {"version": 1, "skills": {}}
    assert sorted(os.listdir(agents() / "skills")) == []
    assert sorted(os.listdir(agents() / "plugins")) == []
    gone = one_line_error(skillchat("mcp", "tools", "notes"), code=2)
    assert "no [mcp.notes]" in gone


def test_a_claude_code_plugin_from_a_folder_installs_and_removes_the_same(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "hook-ran"
    hook = {"type": "command", "command": f"touch {marker}"}
    hooks = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    files = {**claude_plugin(), "hooks/hooks.json": json.dumps(hooks)}
    folder = plugin_folder(tmp_path / "tidy", files)
    done = skillchat("skills", "add", str(folder), "--yes")
    assert done.returncode == 0, done.stderr
    root = agents() / "plugins" / "tidy"
    assert "plugin tidy 0.2.0 (claude-code)" in done.stdout
    # its hooks are recorded, bound to their content, and never run
    assert "hooks ./hooks/hooks.json: untrusted, not run" in done.stdout
    digest = hashlib.sha256((folder / "hooks" / "hooks.json").read_bytes()).hexdigest()
    recorded = lock()["plugins"]["tidy"]["hooks"]
    assert recorded == [{"path": "./hooks/hooks.json", "sha256": digest}]
    assert lock()["plugins"]["tidy"]["servers"] == ["tidy-notes"]
    record = json.loads(servers_file().read_text())["servers"]["tidy-notes"]
    assert record["command"] == f"{root}/bin/notes"
    assert record["env"]["WHERE"] == str(data_dir("tidy"))  # ${CLAUDE_PLUGIN_DATA}
    assert record["enabled"] is None
    assert "is off" in one_line_error(skillchat("mcp", "tools", "tidy-notes"), code=2)
    assert skillchat("mcp", "enable", "tidy-notes", "--yes").returncode == 0
    assert tools("tidy-notes") == ["where"]
    assert not marker.exists()
    assert skillchat("mcp", "disable", "tidy-notes").returncode == 0
    assert "is off" in one_line_error(skillchat("mcp", "tools", "tidy-notes"), code=2)

    # a skill of the plugin goes only with it
    alone = one_line_error(skillchat("skills", "remove", "sweep"))
    assert "came with plugin tidy: skills remove tidy" in alone
    assert skillchat("skills", "remove", "tidy").returncode == 0
    assert not os.path.lexists(root) and not servers_file().exists()
    assert lock() == {"version": 1, "skills": {}}
    assert os.listdir(agents() / "skills") == []


def test_a_plugin_skill_sees_its_plugin_read_only_and_its_data_writable(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """In the sandbox, a plugin's skill gets ${PLUGIN_ROOT} (the installed plugin,
    read-only) and ${PLUGIN_DATA} (its data folder, writable); another skill neither."""
    from sandbox_helpers import require_sandbox

    require_sandbox()
    files = {**agent_plugin(), "notes.txt": "from the plugin\n"}
    repo = plugin_repo(tmp_path / "acme", files)
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    command = (
        'cat "$PLUGIN_ROOT/notes.txt"; echo kept > "$PLUGIN_DATA/out"; '
        'echo x > "$PLUGIN_ROOT/new" 2>/dev/null || echo read-only'
    )
    server.script(
        reply("", calls=[call("run_command", {"command": command, "skill_name": "jot"})]),
        reply("done"),
    )
    done = skillchat(
        "ask", "--json", *session_options(server, agents() / "skills"), "--allow-run", "go",
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)["tool_calls"]
    result = json.loads(calls[0]["result"])
    assert result["stdout"] == "from the plugin\nread-only\n", result
    assert (data_dir("acme") / "out").read_text() == "kept\n"
    assert not (agents() / "plugins" / "acme" / "new").exists()


def test_a_codex_plugin_installs_its_named_skills_and_servers(tmp_path: Path) -> None:
    manifest = {"name": "sweeper", "skills": "./skills/", "mcpServers": "./.mcp.json"}
    servers = {"mcpServers": {"sweeper-notes": {"command": "./bin/notes", "cwd": "./bin"}}}
    files = {
        **claude_plugin(),
        ".codex-plugin/plugin.json": json.dumps(manifest),
        ".mcp.json": json.dumps(servers),
    }
    del files[".claude-plugin/plugin.json"]
    repo = plugin_repo(tmp_path / "sweeper", files)
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    assert "plugin sweeper (codex)" in done.stdout
    record = json.loads(servers_file().read_text())["servers"]["sweeper-notes"]
    assert record["cwd"] == str(agents() / "plugins" / "sweeper" / "bin")
    assert skillchat("mcp", "enable", "sweeper-notes", "--yes").returncode == 0
    assert tools("sweeper-notes") == ["where"]
    assert skillchat("skills", "remove", "sweeper").returncode == 0
    assert lock() == {"version": 1, "skills": {}} and not servers_file().exists()


def test_sync_puts_a_missing_plugin_back_as_locked_its_servers_off(tmp_path: Path) -> None:
    repo = plugin_repo(tmp_path / "acme", agent_plugin())
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    assert skillchat("mcp", "enable", "notes", "--yes").returncode == 0
    locked = lock()
    root = agents() / "plugins" / "acme"
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)
    shutil.rmtree(root)
    shutil.rmtree(agents() / "skills" / "jot")
    servers_file().unlink()  # a new machine: the lock alone
    done = skillchat("skills", "sync")
    assert done.returncode == 0, done.stderr
    assert "jot: installed" in done.stdout
    assert "plugin acme: installed (its servers off until enabled)" in done.stdout
    assert lock() == locked
    assert root.stat().st_mode & 0o222 == 0
    assert "is off" in one_line_error(skillchat("mcp", "tools", "notes"), code=2)
    again = skillchat("skills", "sync")
    assert "plugin acme: in place" in again.stdout


def test_an_enabled_plugin_server_runs_in_its_root_with_its_data(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """The server the model calls starts in ${PLUGIN_ROOT} and gets PLUGIN_ROOT and
    PLUGIN_DATA (its tool writes the one and answers the other)."""
    repo = plugin_repo(tmp_path / "acme", agent_plugin())
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    assert skillchat("mcp", "enable", "notes", "--yes").returncode == 0
    server.script(reply("", calls=[call("mcp__notes__where", {})]), reply("done"))
    done = skillchat(
        "ask", "--json", *session_options(server, agents() / "skills"), "--allow-mcp", "go",
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    root = agents() / "plugins" / "acme"
    (called,) = json.loads(done.stdout)["tool_calls"]
    assert str(root) in called["result"]
    assert (data_dir("acme") / "seen").read_text() == str(root)  # its folder: the root


def deny_hook(secret: Path, word: str = "denied") -> str:
    """A plugin's `pre_tool_use` hook script: it marks ${PLUGIN_DATA}, and denies the
    call with a reason saying whether it could read the host file `secret` and where
    it ran."""
    return (
        "#!/bin/sh\n"
        f"if cat {secret} >/dev/null 2>&1; then seen=yes; else seen=no; fi\n"
        'touch "$PLUGIN_DATA/hook-ran" && data=writable || data="$(touch "$PLUGIN_DATA/x" 2>&1)"\n'
        'printf \'{"hookSpecificOutput": {"permissionDecision": "deny", '
        f'"permissionDecisionReason": "{word}: host file seen %s, in %s, data %s"}}}}\' '
        '"$seen" "$(pwd)" "$data"\n'
    )


def hooked_plugin(root: Path, secret: Path) -> Path:
    """The Claude Code plugin with `hooks/hooks.json` naming its deny hook through
    `${CLAUDE_PLUGIN_ROOT}`, as a git repository."""
    entry = {
        "matcher": "get_skill",
        "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh"}],
    }
    files = {
        **claude_plugin(),
        "hooks/hooks.json": json.dumps({"hooks": {"PreToolUse": [entry]}}),
        "hooks/deny.sh": deny_hook(secret),
    }
    make_repo(root, files)
    executable(root)
    executable(root, "hooks/deny.sh")
    return commit(root, {})


def hook_rows() -> list[dict[str, str]]:
    done = skillchat("hooks", "list", "--json")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_a_plugins_hooks_run_in_the_sandbox_once_trusted_and_not_after_they_change(
    server: ScriptedServer, tmp_path: Path
) -> None:
    from sandbox_helpers import require_sandbox

    require_sandbox()
    secret = tmp_path / "host-secret.txt"
    secret.write_text("top secret")
    repo = hooked_plugin(tmp_path / "tidy", secret)
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    assert "hooks ./hooks/hooks.json: untrusted, not run until `skillchat hooks trust`" in (
        done.stdout
    )
    [row] = hook_rows()
    assert (row["source"], row["where"], row["runs"], row["trust"]) == (
        "plugin",
        "plugin tidy",
        "sandbox",
        "not trusted",
    )

    def turn() -> tuple[str, str]:
        server.script(reply(calls=[call("get_skill", {"skill_name": "sweep"})]), reply("ok"))
        done = skillchat(
            "ask", "--json", *session_options(server, agents() / "skills"), "go", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        last = server.completions[-1].body["messages"]
        [result] = [m["content"] for m in last if m["role"] == "tool"]
        return result, done.stderr

    # untrusted: `ask` does not run it, and says so once
    result, stderr = turn()
    assert "HOOK_DENIED" not in result
    assert not (data_dir("tidy") / "hook-ran").exists()
    assert [line for line in stderr.splitlines() if "not trusted" in line] == [
        "warning: 1 hook(s) of this project, its skills or plugins are not trusted and do "
        "not run: `skillchat hooks list`, then `skillchat hooks trust ID`"
    ]
    # trusted: it runs in the sandbox (no host file, its data writable) and its
    # denial reaches the model
    trusted = skillchat("hooks", "trust", row["id"])
    assert trusted.returncode == 0, trusted.stderr
    assert hook_rows()[0]["trust"] == "trusted"
    result, _ = turn()
    assert json.loads(result) == {
        "error": "a hook refused this call: denied: host file seen no, in /plugin, data writable",
        "error_code": "HOOK_DENIED",
    }
    assert (data_dir("tidy") / "hook-ran").exists()
    # an update that changed the hook's script: untrusted again, not run
    commit(repo, {"hooks/deny.sh": deny_hook(secret, "changed")})
    updated = skillchat("skills", "update", "tidy", "--yes")
    assert updated.returncode == 0, updated.stderr
    assert hook_rows()[0]["trust"] == "not trusted"
    result, _ = turn()
    assert "HOOK_DENIED" not in result
    # removed with its plugin
    assert skillchat("skills", "remove", "tidy").returncode == 0
    assert hook_rows() == []


def test_the_repl_card_trusts_a_plugins_hook_and_it_runs_in_the_sandbox(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """The REPL asks before a plugin's hook first runs: its card names the plugin, the
    command as written and the sandbox; `y` trusts it (`hooks list` says so) and it
    runs, its denial the model's tool result."""
    from sandbox_helpers import require_sandbox

    require_sandbox()
    secret = tmp_path / "host-secret.txt"
    secret.write_text("top secret")
    repo = hooked_plugin(tmp_path / "tidy", secret)
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    server.script(reply(calls=[call("get_skill", {"skill_name": "sweep"})]), reply("noted"))
    repl = pty_sessions(*session_options(server, agents() / "skills"), cwd=tmp_path)
    repl.prompt()
    repl.line("go")
    card = " ".join(repl.expect("Trust and run it? [y]es / [n]o:").split())
    assert "from: plugin tidy" in card and "runs: in the sandbox" in card, card
    assert "command: ${CLAUDE_PLUGIN_ROOT}/hooks/deny.sh" in card, card
    repl.send("y")
    assert "noted" in repl.prompt()
    assert repl.quit() == 0
    last = server.completions[-1].body["messages"]
    [result] = [m["content"] for m in last if m["role"] == "tool"]
    assert json.loads(result)["error"].startswith(
        "a hook refused this call: denied: host file seen no"
    )
    assert hook_rows()[0]["trust"] == "trusted"
