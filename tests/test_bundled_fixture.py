"""The bundled conformance fixture is not a user's skill: out of the default catalog,
there when asked for (`[skills] fixtures = true`, or the bundled folder named with
--skills-dir). Bundled skills come with skillchat and are trusted as it is."""

from __future__ import annotations

import json
from pathlib import Path

from chat_helpers import sent
from helpers import skillchat
from openai_server import ScriptedServer, reply

from skillchat.sections import BUNDLED_SKILLS

FIXTURE = "skills-system-validation"


def listed(*args: str, cwd: Path) -> dict[str, str]:
    done = skillchat("skills", "list", "--json", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return {s["name"]: s["trust"] for s in json.loads(done.stdout)["skills"]}


def test_the_fixture_is_out_of_the_default_catalog(server: ScriptedServer, tmp_path: Path) -> None:
    assert listed(cwd=tmp_path) == {"calculator": "bundled", "commit-message": "bundled"}
    server.script(reply("hi"))
    done = skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "hello", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    system = str(sent(server)[0])
    assert "calculator" in system and FIXTURE not in system


def test_the_fixture_when_asked_for(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[skills]\nfixtures = true\n", encoding="utf-8")
    assert listed("--config", str(config), cwd=tmp_path)[FIXTURE] == "bundled"
    assert FIXTURE in listed("--skills-dir", str(BUNDLED_SKILLS), cwd=tmp_path)


def test_bundled_skills_are_trusted_and_need_no_trust(tmp_path: Path) -> None:
    done = skillchat("skills", "trust", "calculator", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "calculator: bundled with skillchat, always trusted" in done.stdout + done.stderr


def test_in_skillchats_own_repository_the_skills_folder_is_the_bundled_one_once() -> None:
    """The repository's top-level skills/ holds the bundled skills' sources and is also
    the first project folder (`./skills`) there: listed once, as bundled (trusted),
    nothing shadowed, the fixture still hidden unless the folder is named."""
    repo = Path(__file__).resolve().parents[1]
    assert (repo / "skills").resolve() == BUNDLED_SKILLS
    done = skillchat("skills", "list", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    skills = json.loads(done.stdout)["skills"]
    assert [(s["name"], s["trust"]) for s in skills] == [
        ("calculator", "bundled"),
        ("commit-message", "bundled"),
    ]
    assert all(Path(s["path"]).parent == repo / "skills" for s in skills)
    assert "shadow" not in done.stderr
    assert FIXTURE in listed("--skills-dir", "skills", cwd=repo)
