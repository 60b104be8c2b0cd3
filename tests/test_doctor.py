"""`skillchat doctor` finds each thing a new user can get wrong, one line each, and
exits 1 only when one of them blocks a chat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import closed_port, skill_folder, skillchat, write_files
from openai_server import ScriptedServer

from skillchat.sections import user_data_dir


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "notes", "name: notes\ndescription: Keeps notes.\n")
    return root


def doctor(*args: str, **options: object):  # type: ignore[no-untyped-def]
    return skillchat("doctor", *args, **options)  # type: ignore[arg-type]


def lines_with(done, start: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in done.stdout.splitlines() if line.startswith(start)]


def test_all_well_with_a_server(server: ScriptedServer, skills: Path) -> None:
    done = doctor("--api-base", server.base_url, "--skills-dir", str(skills))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("sandbox: available")
    assert lines_with(done, "config:") == ["config: no file (the defaults)"]
    assert lines_with(done, "key:") == [f"key: none needed for {server.base_url}"]
    assert lines_with(done, "model server:") == [
        f"model server: {server.base_url} answers (HTTP 200)"
    ]
    assert lines_with(done, "skills:") == ["skills: 1 loaded from 1 folder(s), 0 left out"]
    assert lines_with(done, "chats:")[0].endswith("chats.db opens")
    assert [r.path for r in server.requests] == ["/v1/models"]  # one request


def test_no_key_blocks_and_names_the_keyless_way(skills: Path) -> None:
    done = doctor("--skills-dir", str(skills))
    assert done.returncode == 1
    (key,) = lines_with(done, "key:")
    assert "OPENAI_API_KEY is not set" in key and "--local" in key
    assert done.stdout.splitlines()[-1] == "1 problem(s) above block skillchat"


def test_a_server_that_does_not_answer_blocks(skills: Path) -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    done = doctor("--api-base", base, "--skills-dir", str(skills))
    assert done.returncode == 1
    (line,) = lines_with(done, "model server:")
    assert line == f"model server: cannot reach {base}: connection refused (is the server running?)"


def test_any_http_answer_shows_a_server_listens(server: ScriptedServer, skills: Path) -> None:
    done = doctor("--api-base", server.base_url + "/nothing-here", "--skills-dir", str(skills))
    # Any HTTP answer shows a server listens; only 401/403 say the key is refused.
    assert done.returncode == 0, done.stdout
    assert "answers (HTTP 404)" in lines_with(done, "model server:")[0]


def test_a_broken_config_file_blocks(tmp_path: Path, skills: Path) -> None:
    config = write_files(tmp_path, {"bad.toml": "model = [unclosed\n"}) / "bad.toml"
    done = doctor("--config", str(config), "--skills-dir", str(skills))
    assert done.returncode == 1
    (line,) = lines_with(done, "config:")
    assert str(config) in line and "Traceback" not in done.stderr


def test_a_config_warning_is_shown_but_does_not_block(server, tmp_path: Path, skills) -> None:
    config = write_files(tmp_path, {"c.toml": "modle = 'x'\n"}) / "c.toml"
    done = doctor(
        "--config", str(config), "--api-base", server.base_url, "--skills-dir", str(skills)
    )
    assert done.returncode == 0, done.stdout
    assert lines_with(done, "config:")[0] == f"config: {config}"
    assert any("modle" in line for line in lines_with(done, "config:")[1:])


def test_a_hard_linked_skill_is_left_out_with_its_reason(server, skills: Path, tmp_path) -> None:
    linked = skill_folder(skills, "linked", "name: linked\ndescription: Linked.\n")
    os.link(linked / "SKILL.md", tmp_path / "elsewhere.md")
    done = doctor("--api-base", server.base_url, "--skills-dir", str(skills))
    assert done.returncode == 0, done.stdout
    assert "skills: 1 loaded from 1 folder(s), 1 left out" in done.stdout
    (left,) = lines_with(done, "skills: left out")
    assert str(linked) in left and "hard link" in left


def test_an_unreadable_chats_database_blocks(server: ScriptedServer, skills: Path) -> None:
    db = user_data_dir() / "chats.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"not a database at all" * 20)
    done = doctor("--api-base", server.base_url, "--skills-dir", str(skills))
    assert done.returncode == 1
    (line,) = lines_with(done, "chats:")
    assert "unreadable" in line


def test_a_missing_gguf_file_blocks(tmp_path: Path, skills: Path) -> None:
    done = doctor("--gguf", str(tmp_path / "none.gguf"), "--skills-dir", str(skills))
    assert done.returncode == 1
    assert f"local model: {tmp_path / 'none.gguf'}: no such file" in done.stdout
    assert not lines_with(done, "key:")  # a local model needs no key


def test_local_says_what_the_first_run_downloads(skills: Path) -> None:
    pytest.importorskip("xllamacpp")
    done = doctor("--local", "--skills-dir", str(skills))
    assert done.returncode == 0, done.stdout
    (line,) = lines_with(done, "local model:")
    assert "not downloaded yet" in line and "https://huggingface.co" in line
    assert "HF_ENDPOINT" in line


def test_no_sandbox_blocks_and_says_what_to_install(
    server: ScriptedServer, skills: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}  # no bwrap on it
    done = doctor("--api-base", server.base_url, "--skills-dir", str(skills), env=env)
    assert done.returncode == 1, done.stdout
    (line,) = lines_with(done, "sandbox:")
    assert line.startswith("sandbox: not available: bubblewrap (bwrap) is not installed")


def test_a_skill_with_a_bad_name_or_a_folder_too_high_is_said(
    server: ScriptedServer, skills: Path, tmp_path: Path
) -> None:
    skill_folder(skills, "bad", "name: Bad_Name\ndescription: Bad.\n")
    done = doctor("--api-base", server.base_url, "--skills-dir", str(skills))
    assert done.returncode == 0, done.stdout
    (left,) = lines_with(done, "skills: left out")
    assert str(skills / "bad") in left and "name" in left
    done = doctor("--api-base", server.base_url, "--skills-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout
    high = f"skills: {tmp_path}: no skill folders here, but skills were found one level below"
    assert f"{high}, in {skills}" in done.stdout
