"""Hostile overrides files and names against `skills pin|name-only|manual|off|reset`,
`skills list` and `ask` (skillchat/skills/overrides.py): a cloned project's
`.skillchat/overrides.toml`, links, corrupt and huge files, names that are not
names. The real command, the scripted model server; docs/security.md "Skill
overrides" holds the promises, each beside its test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import system_text, tool_messages
from helpers import one_line_error, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "skillchat" / "overrides.toml"


def library(root: Path) -> Path:
    for name in ("alpha", "beta", "gamma", "delta"):
        skill_folder(root, name, f"name: {name}\ndescription: The {name} skill.\n")
    skill_folder(
        root, "hidden", "name: hidden\ndescription: Its author hid it.\n"
        "disable-model-invocation: true\n",
    )  # fmt: skip
    return root


def project_with(tmp_path: Path, overrides: str | bytes) -> Path:
    """A cloned project (a git work tree) whose `.skillchat/overrides.toml` says `overrides`."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".skillchat").mkdir()
    data = overrides.encode() if isinstance(overrides, str) else overrides
    (project / ".skillchat" / "overrides.toml").write_bytes(data)
    return project


def names_sent(server: ScriptedServer, n: int = -1) -> list[str]:
    text = system_text(server, n) or ""
    if (start := text.find('{"available_skills": [')) < 0:
        return []
    block, _ = json.JSONDecoder().raw_decode(text, start)
    return [e["name"] for e in block["available_skills"]]


def run(*args: str, **options: Any) -> Any:
    done = skillchat(*args, **options)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done


def test_a_project_cannot_bring_back_what_the_user_turned_off_or_hid(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = library(tmp_path / "skills")
    options = ["--skills-dir", str(skills)]
    run("skills", "off", "alpha", *options)
    run("skills", "manual", "beta", *options)
    config = tmp_path / "config.toml"
    config.write_text('[skills]\ndisabled = ["gamma"]\n')
    project = project_with(
        tmp_path,
        '[overrides]\nalpha = "pin"\nbeta = "pin"\ngamma = "pin"\nhidden = "pin"\ndelta = "off"\n',
    )
    gets = [call("get_skill", {"skill_name": n}, id=n) for n in ("alpha", "beta", "gamma")]
    server.script(reply(calls=gets), reply("done"))
    done = run("ask", *session_options(server, skills), "--config", str(config), "hi", cwd=project)
    assert done.returncode == 0, done.stderr
    listed = names_sent(server, 0)
    assert not {"alpha", "beta", "gamma", "hidden", "delta"} & set(listed)
    codes = [json.loads(m["content"])["error_code"] for m in tool_messages(server, -1)]
    assert codes == ["NOT_FOUND", "USER_ONLY", "NOT_FOUND"]
    # The project may hide more: its `off` over the user's `manual` holds.
    (project / ".skillchat" / "overrides.toml").write_text('[overrides]\nbeta = "off"\n')
    rows = json.loads(run("skills", "list", "--json", *options, cwd=project).stdout)
    assert ("beta", "off") in [(e["name"], e["reason"]) for e in rows["excluded"]]


def test_a_project_pinning_everything_keeps_the_catalog_in_its_budget(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    pins = []
    for i in range(40):
        name = f"loud-{i:02d}"
        skill_folder(skills, name, f"name: {name}\ndescription: {'Pick me first. ' * 60}\n")
        pins.append(f'{name} = "pin"')
    project = project_with(tmp_path, "[overrides]\n" + "\n".join(pins) + "\n")
    config = tmp_path / "config.toml"
    config.write_text("[skills]\ncatalog_max_chars = 4000\n")
    server.script(reply("ok"))
    done = run("ask", *session_options(server, skills), "--config", str(config), "hi", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("pinned skills alone need") == 1, done.stderr
    text = system_text(server, 0) or ""
    start = text.index('{"available_skills"')
    assert json.JSONDecoder().raw_decode(text, start)[1] - start <= 4000


@pytest.mark.parametrize(
    "name", ["evil\x1b[31mred", "../../etc/passwd", "/etc/passwd", "alpha/..", "al\npha", ""]
)
def test_a_name_that_is_no_skill_name_is_one_line_and_writes_nothing(
    tmp_path: Path, name: str
) -> None:
    skills = library(tmp_path / "skills")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for scope in ([], ["--project"]):
        done = run("skills", "pin", name, *scope, "--skills-dir", str(skills), cwd=project)
        line = one_line_error(done)
        assert "no skill named" in line and "\x1b" not in done.stderr + done.stdout
    assert not user_file().exists() and not (project / ".skillchat").exists()


BAD_FILES = {
    "binary": b"\xff\xfe\x00\x01garbage",
    "bad toml": b"[overrides\nalpha = pin\n",
    "not a table": b"overrides = 3\n",
    "huge": b'[overrides]\nalpha = "pin"\n' + b"# padding\n" * 1_000_000,
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_a_corrupt_or_huge_overrides_file_is_one_line_ignored_and_not_rewritten(
    server: ScriptedServer, tmp_path: Path, kind: str
) -> None:
    skills = library(tmp_path / "skills")
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_bytes(BAD_FILES[kind])
    server.script(reply("ok"))
    done = run("ask", *session_options(server, skills), "hi")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "overrides file ignored" in line]
    assert len(said) == 1 and str(user_file()) in said[0], done.stderr
    assert names_sent(server, 0) == ["alpha", "beta", "delta", "gamma"]  # plain
    listed = run("skills", "list", "--skills-dir", str(skills))
    assert listed.returncode == 0 and listed.stderr.count("overrides file ignored") == 1
    refused = run("skills", "off", "beta", "--skills-dir", str(skills))
    assert "cannot change it" in one_line_error(refused)
    assert user_file().read_bytes() == BAD_FILES[kind]  # the user's entries are not lost


def test_entries_that_are_no_override_are_one_line_and_the_rest_apply(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = library(tmp_path / "skills")
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_text(
        '[overrides]\n"a\\u001b[2Jb" = "pin"\nbeta = "pin-forever"\ngamma = 7\ndelta = "pin"\n'
    )
    server.script(reply("ok"))
    done = run("ask", *session_options(server, skills), "hi")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "override(s) ignored" in line]
    assert len(said) == 1 and "3 override(s)" in said[0] and "\x1b" not in done.stderr
    assert names_sent(server, 0)[0] == "delta"


def test_a_linked_project_file_or_folder_is_not_followed_nor_written_through(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = library(tmp_path / "skills")
    options = ["--skills-dir", str(skills)]
    run("skills", "manual", "alpha", *options)
    mine = user_file().read_bytes()
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text('[overrides]\nbeta = "pin"\n')
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".skillchat").mkdir()
    link = project / ".skillchat" / "overrides.toml"
    for target in (elsewhere, Path("/dev/zero")):
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        server.script(reply("ok"))
        done = run("ask", *session_options(server, skills), "hi", cwd=project)
        assert done.returncode == 0, done.stderr
        assert "overrides file ignored: it is a link" in done.stderr
        assert names_sent(server, -1)[0] == "beta"  # not pinned through the link
        refused = run("skills", "off", "gamma", "--project", *options, cwd=project)
        assert "cannot change it" in one_line_error(refused)
    assert elsewhere.read_text() == '[overrides]\nbeta = "pin"\n' and link.is_symlink()
    # `.skillchat` itself a link to the user's own folder: neither read nor written.
    link.unlink()
    (project / ".skillchat").rmdir()
    (project / ".skillchat").symlink_to(user_file().parent)
    listed = run("skills", "list", *options, cwd=project)
    assert listed.stderr.count("overrides file ignored") == 1, listed.stderr
    refused = run("skills", "pin", "alpha", "--project", *options, cwd=project)
    assert ".skillchat: cannot write the overrides: it is a link" in one_line_error(refused)
    assert user_file().read_bytes() == mine


def test_the_users_own_file_may_be_a_link_and_stays_one(tmp_path: Path) -> None:
    skills = library(tmp_path / "skills")
    dotfiles = tmp_path / "dotfiles" / "overrides.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text('[overrides]\nalpha = "pin"\n')
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().symlink_to(dotfiles)
    run("skills", "off", "beta", "--skills-dir", str(skills))
    assert user_file().is_symlink() and 'beta = "off"' in dotfiles.read_text()
    listed = run("skills", "list", "--skills-dir", str(skills))
    assert (
        "ignored" not in listed.stderr
        and "alpha\tThe alpha skill.\tuntrusted\tpin" in listed.stdout
    )


def test_a_fifo_as_the_overrides_file_does_not_hang(server: ScriptedServer, tmp_path: Path) -> None:
    skills = library(tmp_path / "skills")
    user_file().parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(user_file())
    server.script(reply("ok"))
    done = run("ask", *session_options(server, skills), "hi", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("overrides file ignored") == 1, done.stderr


def test_commands_at_once_lose_no_entry(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    names = [f"skill-{i:02d}" for i in range(12)]
    for name in names:
        skill_folder(skills, name, f"name: {name}\ndescription: The {name} skill.\n")
    command = [sys.executable, "-m", "skillchat", "skills", "pin"]
    options = ["--skills-dir", str(skills)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    started = [subprocess.Popen([*command, name, *options], **pipes) for name in names]
    for process in started:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    doc = user_file().read_text()
    assert [name for name in names if f'{name} = "pin"' not in doc] == []
