"""Other clients' frontmatter and settings: who may start a skill (the model, the
user), `when_to_use`, Codex's agents/openai.yaml, `[skills] disabled` and
`/skills disable|enable`, and the line that says when skills were left out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import sent, system_text
from helpers import session_options, skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession

from skillchat.skills.registry import discover


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(
        root, "hidden", "name: hidden\ndescription: Deploys.\ndisable-model-invocation: true\n",
        "# Hidden body\n",
    )  # fmt: skip
    codex = skill_folder(root, "codexonly", "name: codexonly\ndescription: Releases.\n")
    write_files(codex, {"agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n"})
    skill_folder(root, "nouser", "name: nouser\ndescription: Background.\nuser-invocable: false\n")
    skill_folder(
        root, "charts", "name: charts\ndescription: Makes charts.\nwhen_to_use: |\n  When the\n"
        "  user asks for a plot.\n",
    )  # fmt: skip
    return root


def ask(server: ScriptedServer, skills: Path, *args: str, config: Path | None = None):
    argv = ["ask", "--model", "openai/test-model", "--api-base", server.base_url]
    argv += ["--config", str(config)] if config else []
    return skillchat(*argv, "--skills-dir", str(skills), *args)


def catalog_of(server: ScriptedServer, n: int = 0) -> dict[str, str]:
    text = system_text(server, n) or ""
    line = next(ln for ln in text.splitlines() if ln.startswith('{"available_skills"'))
    return {e["name"]: e.get("description") for e in json.loads(line)["available_skills"]}


def test_the_model_sees_only_what_it_may_start(server: ScriptedServer, library: Path) -> None:
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "hidden"}, id="g1")]),
        reply(calls=[call("list_skills", id="l1")]),
        reply("done"),
    )
    done = ask(server, library, "deploy it")
    assert done.returncode == 0, done.stderr
    catalog = catalog_of(server)
    assert set(catalog) == {"nouser", "charts"}  # hidden and codexonly are the user's
    assert catalog["charts"] == "Makes charts. When to use: When the user asks for a plot."
    refused = json.loads(sent(server, 1)[-1]["content"])
    assert refused["error_code"] == "USER_ONLY" and "/hidden" in refused["error"]
    assert json.loads(sent(server, 2)[-1]["content"]) == {"skills": ["charts", "nouser"]}


def test_the_user_starts_a_hidden_skill_and_cannot_start_a_model_only_one(
    server: ScriptedServer, library: Path
) -> None:
    server.script(reply(calls=[call("read_file_in_skill", {"skill_name": "hidden",
                                                          "file_path": "SKILL.md"})]),
                  reply("deployed"), reply("plain"))  # fmt: skip
    done = ask(server, library, "/hidden ship it")
    assert done.returncode == 0 and done.stdout.strip() == "deployed", done.stderr
    activated = json.loads(sent(server, 0)[-1]["content"])
    assert activated["documentation"] == "# Hidden body\n\n\nARGUMENTS: ship it"
    read = sent(server, 1)[-1]["content"]  # activated: the model may read its files
    assert "can only be started by the user" not in read and "already in context" in read
    done = ask(server, library, "/nouser run")
    assert done.returncode == 0, done.stderr
    assert "/nouser is not for direct use (user-invocable: false" in done.stderr
    assert sent(server)[-1] == {"role": "user", "content": "/nouser run"}


def test_a_bad_openai_yaml_is_a_warning_and_the_skill_stays(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for name, text in {
        "broken": "policy: [",
        "odd": "policy:\n  allow_implicit_invocation: 3\n",
    }.items():
        folder = skill_folder(root, name, f"name: {name}\ndescription: D.\n")
        write_files(folder, {"agents/openai.yaml": text})
    deep = skill_folder(root, "deep", "name: deep\ndescription: D.\n")
    write_files(deep, {"agents/openai.yaml": "[" * 5000})
    linked = skill_folder(root, "linked", "name: linked\ndescription: D.\n")
    (linked / "agents").mkdir()
    outside = write_files(
        tmp_path / "outside", {"openai.yaml": "policy:\n  allow_implicit_invocation: false\n"}
    )
    (linked / "agents" / "openai.yaml").symlink_to(outside / "openai.yaml")
    registry = discover([root])
    assert set(registry.skills) == {"broken", "odd", "deep", "linked"}
    assert all(s.model_invocable for s in registry.skills.values())  # a link is not followed
    for name in ("broken", "odd", "deep"):
        [warning] = registry.skills[name].warnings
        assert warning.severity == "warning" and "agents/openai.yaml" in warning.message


def test_disabled_in_the_config_and_the_left_out_line(
    server: ScriptedServer, library: Path, tmp_path: Path
) -> None:
    skill_folder(library, "broken", "name: broken\n")  # no description
    config = tmp_path / "config.toml"
    config.write_text('[skills]\ndisabled = ["charts"]\n')
    server.script(reply("ok"))
    done = ask(server, library, "hi", config=config)
    assert done.returncode == 0, done.stderr
    assert "charts" not in catalog_of(server)
    assert "1 skill left out: `skillchat skills list` says why" in done.stderr
    done = ask(server, library, "/charts plot", config=config)  # said, not sent
    assert done.returncode == 2 and "left out: disabled" in done.stderr
    assert len(server.completions) == 1
    listing = skillchat(
        "skills", "list", "--json", "--skills-dir", str(library), "--config", str(config)
    )
    doc = json.loads(listing.stdout)
    assert {(e["name"], e["reason"]) for e in doc["excluded"]} == {
        ("charts", "disabled"),
        ("broken", "invalid"),
    }
    hidden = next(s for s in doc["skills"] if s["name"] == "hidden")
    assert hidden["model_invocable"] is False and hidden["user_invocable"] is True
    bad = tmp_path / "bad.toml"
    bad.write_text("[skills]\ndisabled = [1]\n")
    done = skillchat("skills", "list", "--config", str(bad))
    assert done.returncode != 0 and "'skills.disabled' must be a list of strings" in done.stderr


def test_validate_notes_keys_only_some_clients_honour(library: Path) -> None:
    done = skillchat("skills", "validate", str(library / "nouser"))
    assert done.returncode == 0, done.stdout
    assert "note: user-invocable: honoured by Claude Code and skillchat" in done.stdout
    assert "0 errors, 0 warnings" in done.stderr


def test_skills_disable_and_enable_in_the_repl(
    server: ScriptedServer, library: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    server.script(reply("one"), reply("two"))
    session = pty_sessions(*session_options(server, library))
    session.prompt()
    out = session.run("/skills disable charts")
    assert "charts disabled for this session" in out and "[skills] disabled" in out
    assert "disabled" in session.run("/skills")
    assert "one" in session.run("hello")
    assert "charts" not in catalog_of(server, -1)
    assert "charts enabled" in session.run("/skills enable charts")
    assert "two" in session.run("again")
    assert "charts" in catalog_of(server, -1)
    assert "no usable skill named 'nope'" in session.run("/skills disable nope")
    assert session.quit() == 0
