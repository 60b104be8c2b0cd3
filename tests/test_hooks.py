"""Hooks (skillchat/hooks, engine/steps/hooks.py), with real hook scripts and the real
`skillchat` command against the scripted model server: a `pre_tool_use` hook's
denial reaches the model, a missing file is one line, a prompt gets context or is
blocked, every event reaches its hooks, `--bare` runs none. The hostile cases (trust,
the sandbox, bounds) are tests/hostile/test_hostile_hooks.py."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import session_options, skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
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


def answered_call(
    server: ScriptedServer, tmp: Path, config: str, move: Any, *flags: str
) -> tuple[Any, Any]:
    """One `ask` turn whose one call a hook answered, having saved its event in
    `seen.json`: the call's result as the model read it, and that event."""
    server.script(reply(calls=[move]), reply("ok"))
    done = ask(server, tmp, "--skills-dir", str(demo_skills(tmp)), *flags, config=config)
    assert done.returncode == 0, done.stderr
    [result] = tool_messages(server)
    return json.loads(result), json.loads((tmp / "seen.json").read_text())


def test_pre_tool_use_denies_a_command_with_a_reason_the_model_reads(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    seen = tmp_path / "seen.json"
    deny = {"permissionDecision": "deny", "permissionDecisionReason": "no rm in this repo"}
    hook = answering(tmp_path / "deny.sh", {"hookSpecificOutput": deny}, f"cat > {seen}\n")
    config = f'[[hooks.pre_tool_use]]\nmatcher = "run_command"\ncommand = "{hook}"\n'
    move = call("run_command", {"command": "echo ran", "skill_name": "demo"})
    result, event = answered_call(server, tmp_path, config, move, "--allow-run")
    assert result == {
        "error": "a hook refused this call: no rm in this repo",
        "error_code": "HOOK_DENIED",
    }
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


def test_bare_leaves_out_the_projects_skill_overrides(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A project's `.skillchat/overrides.toml` is the project's, as its hooks are: a
    script's `--bare` run sees the catalog the command line and the user chose."""
    project = tmp_path / "project"
    write_files(project, {".skillchat/overrides.toml": '[overrides]\ncalculator = "off"\n'})
    (project / ".git").mkdir()  # a git work tree: the project
    server.script(reply("a"), reply("b"))
    assert ask(server, tmp_path, cwd=project).returncode == 0
    assert '"calculator"' not in json.dumps(server.completions[-1].body)
    done = ask(server, tmp_path, "--bare", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "calculator" in json.dumps(server.completions[-1].body)


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


def logger(tmp: Path) -> tuple[Path, str]:
    """A hook that logs each event's name and tool, and a config running it for all."""
    log = tmp / "events.log"
    hook = script(
        tmp / "log.sh",
        f"{sys.executable} -c 'import json,sys; e=json.load(sys.stdin); "
        f'print(e["hook_event_name"], e.get("tool_name", e.get("source", "")))\' >> {log}\n',
    )
    events = ["session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use"]
    events += ["pre_compact", "stop", "notification"]
    config = "max_tool_calls = 1\n" + "".join(
        f'[[hooks.{event}]]\ncommand = "{hook}"\n' for event in events
    )
    return log, config


def test_every_event_reaches_its_hooks_in_ask(server: ScriptedServer, tmp_path: Path) -> None:
    """One turn of `ask` with a skill read, a second call over `max_tool_calls` (a
    notice): each event, in order, with its tool."""
    log, config = logger(tmp_path)
    server.script(
        reply(
            calls=[
                call("get_skill", {"skill_name": "demo"}),
                call("list_skills"),
            ]
        ),
        reply("done"),
    )
    done = ask(server, tmp_path, "--skills-dir", str(demo_skills(tmp_path)), config=config)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [
        "SessionStart startup",
        "UserPromptSubmit ",
        "Notification ",  # the second call answered with an error, said
        "PreToolUse get_skill",
        "PostToolUse get_skill",
        "PostToolUse list_skills",
        "Stop ",
    ]


def test_pre_compact_runs_before_a_summary_in_the_repl(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    log, config = logger(tmp_path)
    (tmp_path / "config.toml").write_text(config)
    server.script(reply("one"), reply("two"), reply("a summary of it all"))
    repl = pty_sessions(
        "--config",
        str(tmp_path / "config.toml"),
        *session_options(server, demo_skills(tmp_path)),
        cwd=tmp_path,
    )
    repl.prompt()
    repl.run("first")
    repl.run("second")
    repl.run("/compact")
    assert repl.quit() == 0
    assert "PreCompact " in log.read_text().splitlines()


def test_pre_tool_use_holds_mcp_tools_too_and_bare_starts_no_server(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A hook matching `mcp__.*` asks the user about an MCP call: `ask`, where nobody
    is asked, refuses it with the hook's reason, and the server's tool never runs.
    Under `--bare` the configured server is not started (its tools not offered)."""
    from test_mcp import stdio

    seen = tmp_path / "seen.json"
    ask_user = {"permissionDecision": "ask", "permissionDecisionReason": "MCP calls need a look"}
    hook = answering(tmp_path / "ask.sh", {"hookSpecificOutput": ask_user}, f"cat > {seen}\n")
    config = stdio("srv", "basic", tmp_path) + (
        f'[[hooks.pre_tool_use]]\nmatcher = "mcp__.*"\ncommand = "{hook}"\n'
    )
    move = call("mcp__srv__add", {"a": 2, "b": 3})
    result, event = answered_call(server, tmp_path, config, move, "--allow-mcp")
    assert result == {
        "error": "a hook wants the user to decide, and nobody is asked here: MCP calls need a look",
        "error_code": "HOOK_DENIED",
    }
    assert (event["tool_name"], event["tool_input"]) == ("mcp__srv__add", {"a": 2, "b": 3})

    server.script(reply("bare"))
    done = ask(server, tmp_path, "--bare", "--allow-mcp", config=config)
    assert done.returncode == 0, done.stderr
    offered = [t["function"]["name"] for t in server.completions[-1].body.get("tools", [])]
    assert offered and not [name for name in offered if name.startswith("mcp__")]


def test_the_repl_asks_when_a_hook_says_ask(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """`permissionDecision: "ask"` shows the hook's reason on a card: `n` refuses the
    call (the model reads why), `y` lets it run."""
    ask_user = {"permissionDecision": "ask", "permissionDecisionReason": "reading skills?"}
    hook = answering(tmp_path / "ask.sh", {"hookSpecificOutput": ask_user})
    (tmp_path / "config.toml").write_text(f'[[hooks.pre_tool_use]]\ncommand = "{hook}"\n')
    load = call("get_skill", {"skill_name": "demo"})
    server.script(reply(calls=[load]), reply("one"), reply(calls=[load]), reply("two"))
    repl = pty_sessions(
        "--config", str(tmp_path / "config.toml"), *session_options(server, demo_skills(tmp_path)),
        cwd=tmp_path,
    )  # fmt: skip
    repl.prompt()
    repl.line("first")
    card = " ".join(repl.expect("Allow the call? [y]es / [n]o:").split())
    assert "event: pre_tool_use" in card and "why: reading skills?" in card, card
    repl.send("n")
    assert "one" in repl.prompt()
    [refused] = tool_messages(server)
    assert "who did not allow it: reading skills?" in json.loads(refused)["error"]
    repl.line("second")
    repl.expect("Allow the call? [y]es / [n]o:")
    repl.send("y")
    assert "two" in repl.prompt()
    assert "# Body" in tool_messages(server)[-1]
    assert repl.quit() == 0


def test_eval_runs_no_hooks(server: ScriptedServer, tmp_path: Path) -> None:
    """A user's `user_prompt_submit` hook would add its context to every query eval
    sends: eval measures the skills, so it runs none (the same hook runs in `ask`)."""
    from test_eval import activates, queries_file, run_eval

    ran = tmp_path / "ran.log"
    hook = script(tmp_path / "log.sh", f"echo run >> {ran}\necho 'extra context'\n")
    (tmp_path / "config.toml").write_text(f'[[hooks.user_prompt_submit]]\ncommand = "{hook}"\n')
    queries = queries_file(
        tmp_path, [{"skill": "calculator", "query": "17%?", "should_trigger": True}]
    )
    server.script(*activates("calculator"))
    done = run_eval(server, queries, "--runs", "1", "--config", str(tmp_path / "config.toml"))
    assert done.returncode == 0, done.stderr
    assert not ran.exists()
    assert "extra context" not in json.dumps([r.body for r in server.completions])
