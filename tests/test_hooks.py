"""Hooks (skillchat/hooks, engine/steps/hooks.py), with real hook scripts and the real
`skillchat` command against the scripted model server: a `pre_tool_use` hook's
denial reaches the model, a project's hook runs only once trusted and stops when its
file changes, a skill's hook runs in the sandbox, `hooks list`/`trust`, `--bare`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import require_sandbox


def script(path: Path, body: str) -> Path:
    """An executable shell script at `path`."""
    write_files(path.parent, {path.name: "#!/bin/sh\n" + body})
    path.chmod(0o755)
    return path


def answering(path: Path, answer: dict[str, Any], before: str = "") -> Path:
    """A hook script at `path` that prints `answer` as its JSON."""
    (path.parent / f"{path.name}.json").write_text(json.dumps(answer))
    return script(path, f"{before}cat {path}.json\n")


def demo_skills(tmp: Path, frontmatter: str = "") -> Path:
    skills = tmp / "skills"
    skill_folder(skills, "demo", f"name: demo\ndescription: A demo skill.\n{frontmatter}")
    return skills


def ask(
    server: ScriptedServer, tmp: Path, *args: str, config: str = "", cwd: Path | None = None
) -> Any:
    (tmp / "config.toml").write_text(config)
    argv = ["ask", "--json", "--model", "openai/test-model", "--api-base", server.base_url]
    argv += ["--config", str(tmp / "config.toml"), *args]
    return skillchat(*argv, "go", cwd=cwd or tmp)


def tool_messages(server: ScriptedServer) -> list[str]:
    """What the model was sent as tool results, in its last request."""
    last = server.completions[-1].body["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def test_pre_tool_use_denies_a_command_with_a_reason_the_model_reads(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    seen = tmp_path / "seen.json"
    deny = {"permissionDecision": "deny", "permissionDecisionReason": "no rm in this repo"}
    hook = answering(tmp_path / "deny.sh", {"hookSpecificOutput": deny}, f"cat > {seen}\n")
    config = f'[[hooks.pre_tool_use]]\nmatcher = "run_command"\ncommand = "{hook}"\n'
    server.script(
        reply(calls=[call("run_command", {"command": "echo ran", "skill_name": "demo"})]),
        reply("ok"),
    )
    done = ask(
        server, tmp_path, "--skills-dir", str(demo_skills(tmp_path)), "--allow-run", config=config
    )
    assert done.returncode == 0, done.stderr
    [result] = tool_messages(server)
    assert json.loads(result) == {
        "error": "a hook refused this call: no rm in this repo",
        "error_code": "HOOK_DENIED",
    }
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PreToolUse"
    assert event["tool_name"] == "run_command"
    assert event["tool_input"] == {"command": "echo ran", "skill_name": "demo"}
    assert event["cwd"] == str(tmp_path)


def test_a_hook_naming_a_missing_file_is_one_line_and_the_rest_runs(
    server: ScriptedServer, tmp_path: Path
) -> None:
    ran = tmp_path / "ran.log"
    good = script(tmp_path / "good.sh", f"echo ok >> {ran}\n")
    config = (
        '[[hooks.user_prompt_submit]]\ncommand = "./nowhere/missing.sh"\n'
        f'[[hooks.user_prompt_submit]]\ncommand = "{good}"\n'
    )
    server.script(reply("answer"))
    done = ask(server, tmp_path, "--skills-dir", str(demo_skills(tmp_path)), config=config)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "answer"
    assert ran.read_text() == "ok\n"
    missing = [line for line in done.stderr.splitlines() if "missing" in line]
    assert missing == [
        f"warning: {tmp_path / 'config.toml'}: user_prompt_submit hook: names a missing file: "
        "./nowhere/missing.sh (command: ./nowhere/missing.sh)"
    ]


def test_user_prompt_submit_adds_context_or_blocks_with_a_reason(
    server: ScriptedServer, tmp_path: Path
) -> None:
    hook = script(
        tmp_path / "prompt.sh",
        'if grep -q secret; then echo "no secrets here" >&2; exit 2; fi\n'
        "echo 'the build is green'\n",
    )
    config = f'[[hooks.UserPromptSubmit]]\ncommand = "{hook}"\n'
    server.script(reply("fine"))
    done = ask(server, tmp_path, "--skills-dir", str(demo_skills(tmp_path)), config=config)
    assert done.returncode == 0, done.stderr
    sent = server.completions[-1].body["messages"][-1]["content"]
    assert sent == "go\n\n<hook-context>\nthe build is green\n</hook-context>"

    (tmp_path / "config.toml").write_text(config)
    argv = ["ask", "--model", "openai/test-model", "--api-base", server.base_url]
    before = len(server.completions)
    blocked = skillchat(*argv, "--config", str(tmp_path / "config.toml"), "my secret", cwd=tmp_path)
    assert blocked.returncode == 1
    assert (
        blocked.stderr.strip()
        .splitlines()[-1]
        .endswith("a hook blocked this message: no secrets here")
    )
    assert len(server.completions) == before  # nothing was sent


def test_bare_runs_no_hooks_and_no_project_skills(server: ScriptedServer, tmp_path: Path) -> None:
    ran = tmp_path / "ran.log"
    hook = script(tmp_path / "log.sh", f"echo run >> {ran}\n")
    skill_folder(tmp_path / "skills", "local-one", "name: local-one\ndescription: Project.\n")
    config = f'[[hooks.session_start]]\ncommand = "{hook}"\n'
    server.script(reply("a"), reply("b"))
    done = ask(server, tmp_path, config=config)
    assert done.returncode == 0, done.stderr
    assert ran.read_text() == "run\n"
    assert "local-one" in json.dumps(server.completions[-1].body)
    done = ask(server, tmp_path, "--bare", config=config)
    assert done.returncode == 0, done.stderr
    assert ran.read_text() == "run\n"
    assert "local-one" not in json.dumps(server.completions[-1].body)


@pytest.mark.parametrize("bad", ["matcher = '('", "timeout = -1", "type = 'prompt'"])
def test_bad_hook_entries_are_one_line_each(tmp_path: Path, bad: str) -> None:
    (tmp_path / "config.toml").write_text(
        f"[[hooks.pre_tool_use]]\ncommand = 'true'\n{bad}\n[[hooks.stop]]\ncommand = 'echo fine'\n"
    )
    done = skillchat("hooks", "list", "--config", str(tmp_path / "config.toml"), cwd=tmp_path)
    assert done.returncode == 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pre_tool_use hook:" in lines[0], done.stderr
    [listed] = done.stdout.splitlines()  # the good one is there
    assert listed.endswith(
        "stop  yours  user (" + str(tmp_path / "config.toml") + ")  (host)  echo fine"
    )
