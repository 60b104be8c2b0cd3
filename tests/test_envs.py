"""Skills whose scripts need packages, through `skillchat ask` and a scripted model:
the declared packages installed from a local wheel folder (the index off), the
environment mounted read-only for the skill's commands, which run offline; consent
by flag; notes for what is missing; the spellings of real SKILL.md files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from envs_helpers import local_index, write_wheel
from helpers import skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import require_sandbox

SHOW = 'import sys, tinypkg\nprint("value", tinypkg.VALUE, sys.prefix)\n'
PEP723 = '# /// script\n# dependencies = ["tinypkg"]\n# ///\n'


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheels"
    write_wheel(folder, "tinypkg", code="VALUE = 41 + 1\n")
    local_index(monkeypatch, folder)
    return folder


def demo_skill(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "skills"
    folder = skill_folder(root, "demo", "name: demo\ndescription: A demo.\n", "Run it.\n")
    write_files(folder, files)
    return root


def ask_run(
    server: ScriptedServer, skills: Path, command: str, *flags: str, config: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    server.script(
        reply("", calls=[call("run_command", {"command": command, "skill_name": "demo"})]),
        reply("done"),
    )
    argv = ["ask", "--json", "--model", "openai/test-model", "--api-base", server.base_url]
    argv += ["--skills-dir", str(skills), "--allow-run", *flags]
    if config is not None:
        argv += ["--config", str(config)]
    done = skillchat(*argv, "go", timeout=180)
    assert done.returncode == 0, done.stderr
    runs = [c for c in json.loads(done.stdout)["tool_calls"] if c["name"] == "run_command"]
    return done, json.loads(runs[0]["result"])


def envs_folder() -> Path:
    from skillchat.sections import user_data_dir

    return user_data_dir() / "envs"


def test_a_pep723_script_runs_with_its_packages_after_install_offline(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    check = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)"
    skills = demo_skill(tmp_path, {"scripts/show.py": PEP723 + SHOW + f"\n{check}\n"})
    done, result = ask_run(server, skills, "python /skills/demo/scripts/show.py", "--allow-install")
    assert result["stdout"] == "value 42 /opt/skillchat/env\n"
    assert "Network is unreachable" in result["stderr"]  # the run itself is offline
    assert any(n.startswith("installed tinypkg 1.0 in ") for n in result["notes"])
    assert "install: + tinypkg==1.0" in done.stderr  # progress, one line per step
    (env,) = [p for p in envs_folder().iterdir() if p.name not in ("cache", "locks")]
    record = json.loads((env / "skillchat-env.json").read_text())
    assert [p["name"] for p in record["installed"]] == ["tinypkg"]
    assert len(record["installed"][0]["record_sha256"]) == 64
    # A second run reuses it: no install, no note.
    _, again = ask_run(server, skills, "python /skills/demo/scripts/show.py")
    assert again["stdout"] == "value 42 /opt/skillchat/env\n"
    assert "notes" not in again


def test_a_changed_environment_is_made_again_before_its_first_use(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    skills = demo_skill(tmp_path, {"scripts/show.py": PEP723 + SHOW})
    ask_run(server, skills, "python /skills/demo/scripts/show.py", "--allow-install")
    (env,) = [p for p in envs_folder().iterdir() if p.name not in ("cache", "locks")]
    (planted,) = env.glob("lib/python*/site-packages/tinypkg")
    (planted / "evil.py").write_text("")
    _, result = ask_run(server, skills, "python /skills/demo/scripts/show.py")
    assert result["error_code"] == "NOT_ALLOWED"  # reinstalling asks again
    assert not env.exists()
    _, result = ask_run(server, skills, "python /skills/demo/scripts/show.py", "--allow-install")
    assert result["stdout"] == "value 42 /opt/skillchat/env\n"
    assert not list(env.glob("lib/python*/site-packages/tinypkg/evil.py"))


def test_requirements_txt_beside_the_script_and_the_skill_folder_spellings(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    skills = demo_skill(
        tmp_path, {"scripts/show.py": SHOW, "scripts/requirements.txt": "# for show\ntinypkg\n"}
    )
    for command in (
        "cd /skills/demo && python scripts/show.py",
        "python3 ~/.agents/skills/demo/scripts/show.py",
        "python ~/.claude/skills/demo/scripts/show.py",
        "python /home/user/.config/skillchat/skills/demo/scripts/show.py",
        "uv run /skills/demo/scripts/show.py",
    ):
        _, result = ask_run(server, skills, command, "--allow-install")
        assert result["stdout"] == "value 42 /opt/skillchat/env\n", (command, result)


def test_the_config_declares_what_a_skill_forgot(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    skills = demo_skill(tmp_path, {"scripts/show.py": SHOW})
    config = tmp_path / "config.toml"
    config.write_text('[run]\nallow_install = true\n\n[packages]\ndemo = ["tinypkg"]\n')
    _, result = ask_run(server, skills, "python /skills/demo/scripts/show.py", config=config)
    assert result["stdout"] == "value 42 /opt/skillchat/env\n"


def test_ask_without_allow_install_says_what_would_be_installed_and_installs_nothing(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    skills = demo_skill(tmp_path, {"scripts/show.py": PEP723 + SHOW})
    _, result = ask_run(server, skills, "python /skills/demo/scripts/show.py")
    assert result["error_code"] == "NOT_ALLOWED"
    assert "tinypkg for skill demo" in result["error"]
    assert "--allow-install" in result["error"]
    assert not envs_folder().exists()


def test_a_refused_line_is_one_clear_result_and_nothing_is_made(
    server: ScriptedServer, tmp_path: Path, wheels: Path
) -> None:
    skills = demo_skill(
        tmp_path, {"scripts/show.py": SHOW, "requirements.txt": "tinypkg\n-e ../evil\n"}
    )
    _, result = ask_run(server, skills, "python /skills/demo/scripts/show.py", "--allow-install")
    assert result["error_code"] == "NOT_ALLOWED"
    assert "/skills/demo/requirements.txt:2: `-e ../evil` is refused" in result["error"]
    assert not envs_folder().exists()


def test_missing_modules_and_programs_become_notes(server: ScriptedServer, tmp_path: Path) -> None:
    skills = demo_skill(tmp_path, {"scripts/imp.py": "import frob_nicate.sub\n"})
    _, result = ask_run(server, skills, "python /skills/demo/scripts/imp.py")
    (note,) = result["notes"]
    assert "`frob_nicate` is not installed: skill demo does not declare it" in note
    assert '`[packages] demo = ["DISTRIBUTION"]`' in note and "frob-nicate" not in note
    _, result = ask_run(server, skills, "gh --version")
    assert result["exit_code"] == 127
    assert result["notes"] == ["`gh` is not installed here"]


def test_the_note_names_the_distribution_when_it_differs_from_the_module() -> None:
    from skillchat.sandbox.envs.notes import missing_notes

    stderr = "ModuleNotFoundError: No module named 'yaml'\n"
    (note,) = missing_notes("skill-creator", 1, stderr)
    assert '[packages] skill-creator = ["pyyaml"]' in note
    assert missing_notes(None, 127, "bash: line 1: soffice: command not found\n") == [
        "`soffice` is not installed here"
    ]


def test_python_resolves_without_an_environment(server: ScriptedServer, tmp_path: Path) -> None:
    skills = demo_skill(tmp_path, {"scripts/hi.py": "import sys\nprint(sys.version_info[0])\n"})
    _, result = ask_run(server, skills, "python scripts/hi.py || python /skills/demo/scripts/hi.py")
    assert result["stdout"] == "3\n"
