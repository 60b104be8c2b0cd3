"""`run_command` through `skillchat ask` and the real sandbox: consent by flag,
bad arguments, and real skills' scripts asked for by a scripted model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import REAL_SKILLS_SCRIPTS, skillchat
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import processes_with, require_sandbox, unique_number

from skillchat.config import Settings
from skillchat.sandbox.command_tool import SandboxCommands
from skillchat.sandbox.layout import SandboxSpec
from skillchat.sandbox.run_request import Verdict
from skillchat.skills.registry import Registry
from skillchat.tools.base import ToolContext, ToolResult
from skillchat.tools.run_command import RunCommand

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"
REAL = REAL_SKILLS_SCRIPTS
ANTHROPIC = REAL / "anthropics-skills" / "skills"
COPILOT = REAL / "github-awesome-copilot" / "skills"
OPENAI_SYSTEM = REAL / "openai-skills" / "skills" / ".system"
SUPERPOWERS = REAL / "obra-superpowers" / "skills"


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


def ask_run(
    server: ScriptedServer, command: str, *flags: str, skill: str | None = None, **kw: Any
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`ask --json` where the model runs `command` once, then answers "done"."""
    args: dict[str, Any] = {"command": command}
    if skill:
        args["skill_name"] = skill
    server.script(reply("", calls=[call("run_command", args)]), reply("done"))
    dirs = kw.pop("skills_dirs", [SKILLS])
    argv = ["ask", "--json", "--model", "openai/test-model", "--api-base", server.base_url]
    for d in dirs:
        argv += ["--skills-dir", str(d)]
    done = skillchat(*argv, *flags, "go", stdin=subprocess.DEVNULL, timeout=120, **kw)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    runs = [c for c in report["tool_calls"] if c["name"] == "run_command"]
    assert len(runs) == 1
    return done, json.loads(runs[0]["result"])


def test_the_conformance_skill_runs_its_script_and_the_marker_comes_back(
    server: ScriptedServer,
) -> None:
    command = (
        "cd /skills/skills-system-validation && "
        "sh scripts/echo.sh \"$(grep -o 'SSV-SCRIPT-[0-9a-f]*' scripts/echo.sh)\""
    )
    done, result = ask_run(server, command, "--allow-run", skill="skills-system-validation")
    assert result["exit_code"] == 0
    assert result["stdout"] == "skills-system-validation: SSV-SCRIPT-91b2f4d0\n"
    body = server.completions[0].body
    assert "run_command" in [t["function"]["name"] for t in body["tools"]]
    system = body["messages"][0]["content"]
    assert "/skills/<skill-name>" in system and "cannot be run here" not in system
    assert "run_command" in done.stderr  # the card


def test_ask_without_allow_run_refuses_and_runs_nothing(server: ScriptedServer) -> None:
    _, result = ask_run(server, "echo ran > /scratch/ran.txt")
    assert result["error_code"] == "NOT_ALLOWED"
    assert "--allow-run" in result["error"]
    assert not list(Path.cwd().rglob("ran.txt"))


def test_config_allow_and_scratch_is_kept_per_chat(
    server: ScriptedServer, tmp_path: Path, isolated_env: Path
) -> None:
    (tmp_path / "c.toml").write_text("[run]\nallow = true\n")
    _, result = ask_run(server, "echo kept > out.txt", "--config", str(tmp_path / "c.toml"))
    assert result["exit_code"] == 0 and result["files_written"] == ["/scratch/out.txt"]
    kept = list((isolated_env / ".local/share/skillchat/scratch").glob("*/out.txt"))
    assert [p.read_text() for p in kept] == ["kept\n"]


class Tool:
    """run_command through the Tool contract, over a runner whose consent is fixed."""

    def __init__(self, tmp_path: Path, consent: str = "approved") -> None:
        spec = SandboxSpec(
            scratch=tmp_path / "scratch", skills={"calculator": SKILLS / "calculator"}
        )
        self.runner = SandboxCommands(
            require_sandbox(),
            lambda: spec,
            lambda request: Verdict(consent, "the user said no"),  # type: ignore[arg-type]
        )
        self.context = ToolContext(Settings(), Registry(skills={}))

    def run(self, raw: str) -> ToolResult:
        return RunCommand(self.runner).run(raw, self.context)


def tool(tmp_path: Path, consent: str = "approved") -> Tool:
    return Tool(tmp_path, consent)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"command": "echo a\\u0000b"}', "NUL byte"),
        ('{"command": ""}', "non-empty string"),
        ('{"command": "   "}', "non-empty string"),
        ('{"command": 42}', "non-empty string"),
        ('{"command": "true", "skill_name": "no-such-skill"}', "unknown skill_name"),
        ('{"command": "true", "timeout_s": -1}', "positive number"),
        ('{"command": "true", "timeout_s": "soon"}', "number of seconds"),
        ("not json", "not valid JSON"),
        ("[1]", "JSON object"),
    ],
)
def test_bad_arguments_are_invalid(tmp_path: Path, arguments: str, expected: str) -> None:
    result = tool(tmp_path).run(arguments)
    payload = json.loads(result.content)
    assert payload["error_code"] == "INVALID_ARGUMENT" and expected in payload["error"]
    assert not (tmp_path / "scratch").exists()  # nothing ran


def test_a_timeout_of_a_year_is_capped(tmp_path: Path) -> None:
    t = tool(tmp_path)
    t.runner.max_timeout_s = 1.0
    n = unique_number()
    call = json.dumps({"command": f"sleep {n}", "timeout_s": 31536000})
    result = json.loads(t.run(call).content)
    assert result["error_code"] == "TIMEOUT" and "after 1 s" in result["error"]
    assert processes_with(f"sleep {n}") == []


def test_a_refusal_runs_nothing(tmp_path: Path) -> None:
    result = json.loads(tool(tmp_path, "refused").run('{"command": "touch /scratch/x"}').content)
    assert result == {"error": "not allowed: the user said no", "error_code": "NOT_ALLOWED"}
    assert not (tmp_path / "scratch" / "x").exists()


# ---------------------------------------------------------------- real skills


@pytest.mark.usefixtures("shared")
def test_webapp_testing_with_server_and_its_leaked_server_dies(server: ScriptedServer) -> None:
    # A port of this test's own (the sandbox has a network of its own, so any port is
    # free there): the process-table check must not see the other job's server.
    port = 20000 + unique_number() % 40000
    command = (
        "cd /scratch && python3 /skills/webapp-testing/scripts/with_server.py "
        f'--server "python3 -m http.server {port} --bind 127.0.0.1" --port {port} -- '
        'python3 -c "import urllib.request; '
        f"print(urllib.request.urlopen('http://127.0.0.1:{port}/').status)\""
    )
    _, result = ask_run(
        server, command, "--allow-run", skill="webapp-testing", skills_dirs=[ANTHROPIC]
    )
    assert result.get("exit_code") == 0, result
    assert "200" in result["stdout"]
    assert processes_with(f"http.server {port}") == []  # orphaned by with_server, killed by us


@pytest.mark.usefixtures("shared")
def test_code_tour_generates_and_validates_a_tour(server: ScriptedServer, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# Demo\n\nSee `src/app.py`.\n")
    (repo / "src" / "app.py").write_text("print('hi')\n")
    command = (
        "cp -r /workspace /scratch/repo && cd /scratch/repo && "
        "python3 /skills/code-tour/scripts/generate_from_docs.py --persona new-joiner "
        "--output .tours/skeleton.tour && "
        "python3 /skills/code-tour/scripts/validate_tour.py .tours/skeleton.tour --repo-root ."
    )
    _, result = ask_run(
        server,
        command,
        "--allow-run",
        "--workspace",
        str(repo),
        skill="code-tour",
        skills_dirs=[COPILOT],
    )
    assert result["exit_code"] == 0, result["stdout"] + result["stderr"]
    assert "/scratch/repo/.tours/skeleton.tour" in result["files_written"]


@pytest.mark.usefixtures("shared")
def test_openai_init_skill_mode_644_runs_with_python3(server: ScriptedServer) -> None:
    assert not (OPENAI_SYSTEM / "skill-creator/scripts/init_skill.py").stat().st_mode & 0o111
    command = "python3 /skills/skill-creator/scripts/init_skill.py my-new-skill --path /scratch"
    _, result = ask_run(
        server, command, "--allow-run", skill="skill-creator", skills_dirs=[OPENAI_SYSTEM]
    )
    assert result["exit_code"] == 0, result["stderr"]
    assert "/scratch/my-new-skill/SKILL.md" in result["files_written"]


@pytest.mark.usefixtures("shared")
def test_anthropic_skill_creator_runs_as_a_module_from_its_root(server: ScriptedServer) -> None:
    make = (
        "mkdir -p /scratch/ws/iteration-1/eval-1/with_skill/run-1 && "
        'echo \'{"summary": {"pass_rate": 1.0, "passed": 1, "failed": 0, "total": 1}}\' '
        "> /scratch/ws/iteration-1/eval-1/with_skill/run-1/grading.json && "
    )
    command = make + (
        "cd /skills/skill-creator && "
        "python3 -m scripts.aggregate_benchmark /scratch/ws/iteration-1 --skill-name demo"
    )
    _, result = ask_run(
        server, command, "--allow-run", skill="skill-creator", skills_dirs=[ANTHROPIC]
    )
    assert result["exit_code"] == 0, result["stderr"]
    assert "/scratch/ws/iteration-1/benchmark.json" in result["files_written"]


@pytest.mark.usefixtures("shared")
def test_an_extensionless_bash_script_runs(server: ScriptedServer) -> None:
    command = "/skills/subagent-driven-development/scripts/sdd-workspace"
    _, result = ask_run(
        server,
        command,
        "--allow-run",
        skill="subagent-driven-development",
        skills_dirs=[SUPERPOWERS],
    )
    assert result["exit_code"] == 2
    assert "usage: sdd-workspace PLAN_FILE" in result["stdout"] + result["stderr"]


def test_doctor_says_whether_the_sandbox_works_and_how_to_install_it(
    tmp_path: Path, server: ScriptedServer
) -> None:
    import os

    works = skillchat("doctor", "--api-base", server.base_url)
    assert works.returncode == 0 and works.stdout.startswith("sandbox: available: bubblewrap")
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on this PATH
    missing = skillchat("doctor", env=env)
    assert missing.returncode == 1
    assert "bubblewrap (bwrap) is not installed" in missing.stdout
    assert "apt install bubblewrap" in missing.stdout and "dnf install bubblewrap" in missing.stdout
    shown = skillchat("config", "show", env=env)
    assert "sandbox: not available" in shown.stdout


def test_the_chat_keeps_the_run_and_chats_show_and_export_list_it(
    server: ScriptedServer,
) -> None:
    done, _ = ask_run(server, "echo kept-output-7731; echo x > f.txt", "--allow-run")
    chat_id = json.loads(done.stdout)["chat_id"]
    shown = skillchat("chats", "show", chat_id)
    assert shown.returncode == 0, shown.stderr
    assert 'run_command(command="echo kept-output-7731; echo x > f.txt")' in shown.stdout
    assert "← run_command: exit 0 · " in shown.stdout
    assert "wrote /scratch/f.txt · kept-output-7731" in shown.stdout
    exported = skillchat("chats", "export", chat_id, "--format", "json")
    assert exported.returncode == 0, exported.stderr
    tool_results = [m for m in json.loads(exported.stdout)["messages"] if m["role"] == "tool"]
    assert json.loads(tool_results[-1]["content"])["stdout"] == "kept-output-7731\n"


def test_escape_sequences_in_output_are_shown_not_obeyed(server: ScriptedServer) -> None:
    done, result = ask_run(server, r"printf 'a\033[2Jb\033]0;pwned\007c\n'", "--allow-run")
    assert result["stdout"] == "a\x1b[2Jb\x1b]0;pwned\x07c\n"  # the model gets the bytes
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr  # the screen does not
    assert "a␛[2Jb␛]0;pwned␇c" in done.stderr  # made visible by ui/safe.py


def _user_skill(home: Path, allowed: str) -> Path:
    """A skill in the user-level folder ~/.agents/skills (trusted), declaring `allowed`."""
    root = home / ".agents" / "skills"
    folder = root / "echoer"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: echoer\ndescription: Echoes.\nallowed-tools: {allowed}\n---\nRun echo.\n"
    )
    return root


def test_restrict_refuses_what_allowed_tools_do_not_list_even_with_allow_run(
    server: ScriptedServer, tmp_path: Path, isolated_env: Path
) -> None:
    root = _user_skill(isolated_env, "Bash(echo:*)")
    (tmp_path / "c.toml").write_text('[run]\nallowed_tools = "restrict"\n')
    config = ("--config", str(tmp_path / "c.toml"))
    _, refused = ask_run(server, "ls /", "--allow-run", *config, skill="echoer", skills_dirs=[root])
    assert refused["error_code"] == "NOT_ALLOWED"
    assert "restrict" in refused["error"] and "Bash(echo:*)" in refused["error"]
    _, ran = ask_run(
        server, "echo fine", "--allow-run", *config, skill="echoer", skills_dirs=[root]
    )
    assert ran["stdout"] == "fine\n"


def test_ask_runs_nothing_without_allow_run_even_when_pre_approved(
    server: ScriptedServer, isolated_env: Path
) -> None:
    root = _user_skill(isolated_env, "Bash(echo:*)")
    _, result = ask_run(server, "echo hi", skill="echoer", skills_dirs=[root])
    assert result["error_code"] == "NOT_ALLOWED" and "--allow-run" in result["error"]


def test_the_card_says_when_the_sandbox_was_widened(server: ScriptedServer, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    flags = ("--allow-run", "--allow-network", "--allow-write", "--workspace", str(workspace))
    done, result = ask_run(server, "true", *flags)
    assert result["exit_code"] == 0
    card = " ".join(done.stderr.replace("│", " ").split())  # the card may wrap
    assert "exit 0 · " in card
    assert "network ON (includes this machine's local services) · workspace writes ON" in card
    narrow, plain = ask_run(server, "true", "--allow-run")
    assert plain["exit_code"] == 0 and "ON" not in narrow.stderr


def test_scratch_folders_are_private_whatever_the_umask(
    server: ScriptedServer, isolated_env: Path
) -> None:
    import os

    old = os.umask(0)
    try:
        ask_run(server, "echo x > f", "--allow-run")
    finally:
        os.umask(old)
    root = isolated_env / ".local/share/skillchat/scratch"
    (chat,) = root.iterdir()
    assert root.stat().st_mode & 0o777 == 0o700 and chat.stat().st_mode & 0o777 == 0o700


def test_a_scratch_folder_in_a_shared_folder_leaves_that_folder_as_it_was(tmp_path: Path) -> None:
    """A scratch folder made in a folder skillchat did not make (a temporary folder,
    whose parent is `/tmp`) leaves that folder's mode alone: chmodding the parent to
    0700 once took `/tmp` from every other user of the machine."""
    shared = tmp_path / "shared"  # plays /tmp, inside this test's own folder
    shared.mkdir()
    shared.chmod(0o1777)
    spec = SandboxSpec(scratch=shared / "scratch", skills={})
    runner = SandboxCommands(
        require_sandbox(), lambda: spec, lambda request: Verdict("approved", "")
    )
    result = json.loads(
        RunCommand(runner)
        .run('{"command": "echo x > /scratch/f"}', ToolContext(Settings(), Registry(skills={})))
        .content
    )
    assert result["exit_code"] == 0
    assert shared.stat().st_mode & 0o7777 == 0o1777
    assert (shared / "scratch").stat().st_mode & 0o777 == 0o700
