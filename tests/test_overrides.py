"""Per-skill overrides that last (skillchat/skills/overrides.py): `skillchat skills
pin|name-only|manual|off|reset NAME`, read by the catalog of the next request as the
scripted model server receives it, by the tools, `skills list`, `eval` and the REPL.

The real corpus (shared/real-skills, 234 usable skills) is the case the feature is
for: its catalog is shortened to fit, and the user's pins decide what stays whole.
Each `ask` that checks a change runs in a process of its own (`subprocess=True`),
after the process that wrote the change ended: the overrides outlive it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from chat_helpers import system_text, tool_messages
from helpers import REAL_SKILLS, one_line_error, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply
from pty_session import plain
from test_mcp import ask, http, shared_server, tag  # noqa: F401  (the fixture: no server outlives a test)

from skillchat.skills.registry import discover

if TYPE_CHECKING:
    from pty_session import PtySession

PINNED = ["claude-api", "mentoring-juniors"]  # the two longest descriptions
NAME_ONLY = "doc-and-modernize"
MANUAL = "setup-my-iq"
OFF = "data-breach-blast-radius"


@pytest.fixture(scope="module")
def skills_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from shared_server("skills", tmp_path_factory)


def user_overrides() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "skillchat" / "overrides.toml"


def real_dirs() -> list[str]:
    """`--skills-dir` for every skills folder of the real corpus."""
    folders = sorted({p.parent.parent for p in REAL_SKILLS.rglob("SKILL.md")})
    return [arg for folder in folders for arg in ("--skills-dir", str(folder))]


def catalog(server: ScriptedServer, n: int = 0) -> list[dict[str, str]]:
    """The `available_skills` entries of the n-th request's system message, in order."""
    text = system_text(server, n) or ""
    start = text.index('{"available_skills": [')
    block, _ = json.JSONDecoder().raw_decode(text, start)
    entries: list[dict[str, str]] = block["available_skills"]
    return entries


def results(server: ScriptedServer, n: int = -1) -> list[Any]:
    return [json.loads(m["content"]) for m in tool_messages(server, n)]


def override(*args: str, code: int = 0, **options: Any) -> str:
    done = skillchat("skills", *args, **options)
    assert done.returncode == code and "Traceback" not in done.stderr, done.stderr
    return done.stdout


@pytest.mark.usefixtures("shared")
def test_overrides_shape_the_real_corpus_catalog_in_a_later_process(
    server: ScriptedServer,
) -> None:
    dirs = real_dirs()
    whole = {n: s.model_description for n, s in discover(dirs[1::2]).skills.items()}
    assert len(whole) == 234
    for name in PINNED:
        override("pin", name, *dirs)
    override("name-only", NAME_ONLY, *dirs)
    override("manual", MANUAL, *dirs)
    override("off", OFF, *dirs)
    server.script(
        reply(calls=[call("get_skill", {"skill_name": MANUAL}, id="m"),
                     call("get_skill", {"skill_name": OFF}, id="o")]),
        reply("done"),
    )  # fmt: skip
    model = ["--model", "openai/test-model", "--api-base", server.base_url]
    done = skillchat("ask", *model, *dirs, "hello", subprocess=True)  # a new process
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    shown = catalog(server)
    names = [e["name"] for e in shown]
    # Pinned first, whole; then the rest, shortened as before, in name order.
    assert names[:2] == PINNED
    assert [e["description"] for e in shown[:2]] == [whole[n] for n in PINNED]
    assert names[2:] == sorted(set(whole) - {*PINNED, MANUAL, OFF})
    rest = {e["name"]: e.get("description") for e in shown[2:]}
    assert rest[NAME_ONLY] is None  # listed by name alone
    assert any(d is not None and d.endswith("…") for d in rest.values())  # still fitted
    text = system_text(server, 0) or ""
    start = text.index('{"available_skills"')
    assert json.JSONDecoder().raw_decode(text, start)[1] - start <= 30_000
    assert "skill descriptions shortened to" in done.stderr
    manual, off = results(server)
    assert manual["error_code"] == "USER_ONLY" and "the user made it manual" in manual["error"]
    assert off["error_code"] == "NOT_FOUND"
    # Reset: the next process's catalog is the plain one again.
    for name in [*PINNED, NAME_ONLY, MANUAL, OFF]:
        override("reset", name, *dirs)
    server.script(reply("plain"))
    again = skillchat("ask", *model, *dirs, "hello", subprocess=True)
    assert again.returncode == 0, again.stderr
    assert [e["name"] for e in catalog(server, -1)] == sorted(whole)


@pytest.mark.usefixtures("shared")
def test_pinned_skills_that_alone_pass_the_budget_are_said_and_fitted_with_the_rest(
    server: ScriptedServer, tmp_path: Path
) -> None:
    dirs = real_dirs()
    for name in PINNED:
        override("pin", name, *dirs)
    config = tmp_path / "config.toml"
    config.write_text("[skills]\ncatalog_max_chars = 1500\n")
    server.script(reply("ok"))
    done = skillchat(
        "ask", "--model", "openai/test-model", "--api-base", server.base_url,
        "--config", str(config), *dirs, "hello",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "pinned skills alone need" in line]
    assert len(said) == 1 and "catalog_max_chars = 1500" in said[0], done.stderr
    text = system_text(server, 0) or ""
    start = text.index('{"available_skills"')
    block, end = json.JSONDecoder().raw_decode(text, start)
    assert end - start <= 1500 and block["available_skills"]


def small_library(root: Path) -> Path:
    for name in ("alpha", "beta", "gamma", "delta"):
        body = f"# {name}\nThe {name} instructions.\n"
        skill_folder(root, name, f"name: {name}\ndescription: The {name} skill.\n", body)
    return root


def test_unknown_skill_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    skills = small_library(tmp_path / "skills")
    for action in ("pin", "name-only", "manual", "off"):
        done = skillchat("skills", action, "alpah", "--skills-dir", str(skills))
        assert "no skill named 'alpah'" in one_line_error(done)
    done = skillchat("skills", "reset", "alpha", "--skills-dir", str(skills))
    assert "has no override" in one_line_error(done)
    done = skillchat("skills", "pin", "alpha", "--project", "--skills-dir", str(skills))
    assert "not in a project" in one_line_error(done, 2)
    assert not user_overrides().exists()


def test_skills_list_shows_the_override_column(tmp_path: Path) -> None:
    skills = small_library(tmp_path / "skills")
    options = ["--skills-dir", str(skills)]
    plain = override("list", *options).splitlines()
    assert plain[0].split("\t") == ["alpha", "The alpha skill.", "untrusted"]  # as before
    override("pin", "beta", *options)
    override("manual", "gamma", *options)
    override("off", "delta", *options)
    rows = [line.split("\t") for line in override("list", *options).splitlines()]
    assert [(r[0], r[3]) for r in rows] == [("alpha", "-"), ("beta", "pin"), ("gamma", "manual")]
    listed = json.loads(override("list", "--json", *options))
    by_name = {s["name"]: s for s in listed["skills"]}
    assert (by_name["beta"]["override"], by_name["beta"]["override_from"]) == ("pin", "user")
    assert by_name["gamma"]["model_invocable"] is False
    assert [(e["name"], e["reason"]) for e in listed["excluded"]] == [("delta", "off")]
    doc = user_overrides().read_text()
    assert 'beta = "pin"' in doc and 'delta = "off"' in doc


def test_manual_is_the_users_to_start_and_off_is_not_loadable(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = small_library(tmp_path / "skills")
    override("manual", "gamma", "--skills-dir", str(skills))
    override("off", "delta", "--skills-dir", str(skills))
    server.script(reply("used"))
    done = skillchat("ask", *session_options(server, skills), "/gamma go")
    assert done.returncode == 0, done.stderr
    assert "The gamma instructions." in json.dumps(server.completions[0].body["messages"])
    assert "gamma" not in [e["name"] for e in catalog(server)]
    refused = skillchat("ask", *session_options(server, skills), "/delta go")
    assert "the skill 'delta' is left out: turned off" in one_line_error(refused, 2)
    assert len(server.completions) == 1  # nothing was sent for it


def test_the_projects_overrides_win_over_the_users(server: ScriptedServer, tmp_path: Path) -> None:
    skills = small_library(tmp_path / "skills")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    options = ["--skills-dir", str(skills)]
    override("pin", "alpha", *options, cwd=project)
    override("name-only", "beta", *options, cwd=project)
    said = override("name-only", "alpha", "--project", *options, cwd=project)
    assert ".skillchat/overrides.toml" in said
    said = override("pin", "beta", "--project", *options, cwd=project)
    assert (project / ".skillchat" / "overrides.toml").is_file()
    server.script(reply("ok"), reply("ok"))
    done = skillchat("ask", *session_options(server, skills), "hi", cwd=project)
    assert done.returncode == 0, done.stderr
    shown = catalog(server)
    assert shown[0] == {"name": "beta", "description": "The beta skill."}
    assert {"name": "alpha"} in shown
    rows = json.loads(override("list", "--json", *options, cwd=project))["skills"]
    assert {r["name"]: r["override_from"] for r in rows}["alpha"] == "project"
    # Outside the project only the user's apply.
    done = skillchat("ask", *session_options(server, skills), "hi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert catalog(server, -1)[0] == {"name": "alpha", "description": "The alpha skill."}


def test_eval_reports_the_overrides_that_applied(server: ScriptedServer, tmp_path: Path) -> None:
    skills = small_library(tmp_path / "skills")
    override("name-only", "alpha", "--skills-dir", str(skills))
    override("pin", "beta", "--skills-dir", str(skills))
    queries = tmp_path / "evals.json"
    entry = {"skill": "alpha", "query": "do alpha", "should_trigger": True}
    queries.write_text(json.dumps([entry]))
    server.script(reply(calls=[call("get_skill", {"skill_name": "alpha"})]), reply("done"))
    done = skillchat("eval", str(queries), "--json", *session_options(server, skills))
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["overrides"] == {"alpha": "name-only", "beta": "pin"}
    assert report["skills"][0]["catalog"] == "shortened"
    table = skillchat("eval", str(queries), *session_options(server, skills))
    assert "overrides applied" in table.stdout and "alpha name-only" in table.stdout
    override("off", "alpha", "--skills-dir", str(skills))
    refused = skillchat("eval", str(queries), *session_options(server, skills))
    assert "the skill turned off (`skillchat skills reset alpha`" in one_line_error(refused, 2)


def test_an_override_of_a_skill_left_out_another_way_says_why(tmp_path: Path) -> None:
    skills = small_library(tmp_path / "skills")
    config = tmp_path / "config.toml"
    config.write_text('[skills]\ndisabled = ["beta"]\n')
    done = skillchat("skills", "pin", "beta", "--config", str(config), "--skills-dir", str(skills))
    assert "'beta' is left out: disabled" in one_line_error(done)


def test_the_repl_sets_overrides_for_the_next_message_and_for_good(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    skills = small_library(tmp_path / "skills")
    server.script(reply("one"), reply("two"))
    session = pty_sessions(*session_options(server, skills))
    session.prompt()
    assert "'gamma': pin in" in session.run("/skills pin gamma")
    assert "one" in session.run("hi")
    assert catalog(server, 0)[0] == {"name": "gamma", "description": "The gamma skill."}
    assert "'delta': off in" in session.run("/skills off delta")
    assert "'beta': manual in" in session.run("/skills manual beta")
    listing = session.run("/skills")
    assert "(pin)" in listing and "delta  off" in listing
    assert "left out: turned off" in session.run("/delta go")
    session.send("/bet")
    session.expect("The beta skill.")  # manual: still the user's to complete and use
    session.send("\t")
    session.expect("/beta")
    assert "two" in session.run(" go")
    names = [e["name"] for e in catalog(server, 1)]
    assert names == ["gamma", "alpha"]  # beta manual, delta off
    assert "The beta instructions." in json.dumps(server.completions[1].body["messages"])
    assert "usage: /skills" in session.run("/skills pin")
    assert session.quit() == 0
    assert 'gamma = "pin"' in user_overrides().read_text()  # kept for the next session


def test_served_skills_take_overrides_too(
    server: ScriptedServer,
    tag: Path,  # noqa: F811
    skills_url: str,
) -> None:
    config = tag / "config.toml"
    config.write_text(http("pub", skills_url))
    (tag / "skills").mkdir()
    options = ["--config", str(config), "--skills-dir", str(tag / "skills")]
    said = override("pin", "demo", *options)  # no local skill: the servers are asked
    assert "'demo': pin" in said
    override("off", "lying", *options)
    server.script(reply("ok"))
    done = ask(server, tag, http("pub", skills_url), "hello")
    assert done.returncode == 0, done.stderr
    shown = catalog(server)
    assert shown[0] == {"name": "demo", "description": "[mcp:pub] A skill served over MCP."}
    assert "lying" not in [e["name"] for e in shown]


@pytest.mark.usefixtures("shared")
@pytest.mark.parametrize("budget", [60, 300, 2_000, 2_500, 5_000, 12_000, 30_000, 400_000])
def test_the_catalog_with_overrides_never_passes_its_budget(budget: int) -> None:
    from skillchat.prompt import build_catalog
    from skillchat.skills.overrides import Chosen, apply

    chosen = {n: Chosen("pin", "user") for n in PINNED}
    chosen[NAME_ONLY] = Chosen("name-only", "project")
    registry = apply(discover(real_dirs()[1::2]), chosen)
    built = build_catalog(registry, budget)
    assert built is not None and len(built.block) <= budget
    names = [e["name"] for e in json.loads(built.block)["available_skills"]]
    pinned_size = sum(len(registry.skills[n].model_description) for n in PINNED)
    if built.pinned_chars is None:  # the pins fit: they lead, whole
        assert names[:2] == PINNED and pinned_size < budget
        assert "alone need" not in (built.warning() or "")
    else:
        assert "pinned skills alone need" in (built.warning() or "")


def test_skills_list_on_a_terminal_shows_the_column(
    pty_sessions: Callable[..., PtySession], tmp_path: Path
) -> None:
    skills = small_library(tmp_path / "skills")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    override("pin", "alpha", "--skills-dir", str(skills))
    override("name-only", "beta", "--project", "--skills-dir", str(skills), cwd=project)
    for extra in ([], ["--long"]):
        session = pty_sessions("skills", "list", *extra, "--skills-dir", str(skills), cwd=project)
        assert session.wait() == 0
        lines = plain("".join(session.output)).replace("│", " ").splitlines()
        row = {line.split()[0]: line for line in lines if line.split()[:1] in (["alpha"], ["beta"])}
        assert "pin" in row["alpha"].split() and "name-only (project)" in row["beta"], lines
