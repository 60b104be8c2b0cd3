"""`skillchat skills list | show | validate` as a user runs them (subprocesses, piped)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import one_line_error, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / "skillchat" / "bundled_skills"


@pytest.fixture()
def two_dirs(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    skill_folder(first, "alpha", "name: alpha\ndescription: The first alpha.\n")
    skill_folder(first, "broken", "name: Broken_Name\ndescription: x\n")
    skill_folder(second, "alpha", "name: alpha\ndescription: A shadowed alpha.\n")
    skill_folder(second, "beta", "name: beta\ndescription: Beta skill.\nargument-hint: x\n")
    return first, second


def test_list_piped_is_plain_lines_with_a_left_out_count(two_dirs: tuple[Path, Path]) -> None:
    first, second = two_dirs
    done = skillchat("skills", "list", "--skills-dir", str(first), "--skills-dir", str(second))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "alpha\tThe first alpha.\tuntrusted",
        "beta\tBeta skill.\tuntrusted",
    ]
    assert "2 skills left out" in done.stderr
    assert "1 invalid" in done.stderr and "1 shadowed" in done.stderr


def test_list_json_records_every_excluded_skill_with_reason(two_dirs: tuple[Path, Path]) -> None:
    first, second = two_dirs
    done = skillchat(
        "skills", "list", "--json", "--skills-dir", str(first), "--skills-dir", str(second)
    )
    doc = json.loads(done.stdout)
    assert [s["name"] for s in doc["skills"]] == ["alpha", "beta"]
    assert doc["skills"][0]["description"] == "The first alpha."
    reasons = {(Path(e["path"]).parent.name, e["reason"]) for e in doc["excluded"]}
    assert reasons == {("first", "invalid"), ("second", "shadowed")}
    shadowed = next(e for e in doc["excluded"] if e["reason"] == "shadowed")
    assert shadowed["shadowed_by"] == str((first / "alpha").resolve())
    beta = doc["skills"][1]
    assert any("argument-hint" in w["message"] for w in beta["warnings"])


def test_list_uses_default_directories_relative_to_cwd(tmp_path: Path) -> None:
    skill_folder(tmp_path / ".claude" / "skills", "gamma", "name: gamma\ndescription: G.\n")
    skill_folder(tmp_path / "skills", "delta", "name: delta\ndescription: D.\n")
    done = skillchat("skills", "list", cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert "delta\tD.\tuntrusted" in lines and "gamma\tG.\tuntrusted" in lines
    names = [line.split("\t")[0] for line in lines]  # sorted, the bundled ones included
    assert names == sorted(["delta", "gamma", "calculator", "commit-message"])  # no fixture


def test_bundled_skills_come_last_and_can_be_turned_off(tmp_path: Path) -> None:
    skill_folder(tmp_path / "skills", "calculator", "name: calculator\ndescription: Mine.\n")
    done = skillchat("skills", "list", "--json", cwd=tmp_path)
    doc = json.loads(done.stdout)
    calc = next(s for s in doc["skills"] if s["name"] == "calculator")
    assert calc["description"] == "Mine." and calc["bundled"] is False  # the user's wins
    [shadowed] = [e for e in doc["excluded"] if e["reason"] == "shadowed"]
    assert Path(shadowed["path"]).resolve() == (BUNDLED / "calculator").resolve()
    assert {s["name"] for s in doc["skills"] if s["bundled"]} == {"commit-message"}
    cfg = tmp_path / "c.toml"
    cfg.write_text("[skills]\nbundled = false\n")
    done = skillchat("skills", "list", "--config", str(cfg), cwd=tmp_path)
    assert done.stdout.splitlines() == ["calculator\tMine.\tuntrusted"]


def test_list_with_skills_disabled_in_config(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[skills]\nenabled = false\n")
    done = skillchat("skills", "list", "--config", str(cfg), "--skills-dir", str(BUNDLED))
    assert done.returncode == 0 and done.stdout == "" and "disabled" in done.stderr


@pytest.mark.parametrize("extra", [[], ["--file", "SKILL.md"], ["--json"]])
def test_show_with_skills_disabled_in_config(tmp_path: Path, extra: list[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[skills]\nenabled = false\n")
    name, where = "skills-system-validation", ["--skills-dir", str(BUNDLED)]
    done = skillchat("skills", "show", name, "--config", str(cfg), *where, *extra)
    assert done.returncode == 1 and done.stdout == ""
    assert "skills are disabled in the config" in done.stderr
    assert f"no skill named '{name}'" in done.stderr


def test_show_of_the_hidden_fixture_says_how_to_show_it(tmp_path: Path) -> None:
    line = one_line_error(skillchat("skills", "show", "skills-system-validation", cwd=tmp_path))
    assert "bundled test fixture, hidden unless `[skills] fixtures = true`" in line


def test_show_piped_prints_frontmatter_files_and_body() -> None:
    done = skillchat("skills", "show", "skills-system-validation", "--skills-dir", str(BUNDLED))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "name: skills-system-validation" in out
    assert "references/REFERENCE.md" in out and "assets/fixture.json" in out
    assert "# Skills system validation" in out
    assert "description: Conformance fixture" in out


def test_show_json() -> None:
    done = skillchat("skills", "show", "calculator", "--json", "--skills-dir", str(BUNDLED))
    doc = json.loads(done.stdout)
    assert doc["frontmatter"]["metadata"] == {"author": "skillchat", "version": "1.0"}
    assert doc["body"].startswith("# Calculator")
    assert doc["files"] == ["SKILL.md"] and doc["truncated"] is False


def test_show_file_is_raw_text() -> None:
    done = skillchat(
        "skills",
        "show",
        "skills-system-validation",
        "--file",
        "references/REFERENCE.md",
        "--skills-dir",
        str(BUNDLED),
    )
    expected = (BUNDLED / "skills-system-validation/references/REFERENCE.md").read_text()
    assert done.returncode == 0 and done.stdout == expected


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("../../../etc/passwd", "Path traversal detected"),
        ("/etc/passwd", "Path traversal detected"),
        ("nope.md", "File 'nope.md' not found in skill 'calculator'"),
    ],
)
def test_show_file_refusals_are_one_line_exit_1(path: str, fragment: str) -> None:
    done = skillchat("skills", "show", "calculator", "--file", path, "--skills-dir", str(BUNDLED))
    assert done.returncode == 1 and done.stdout == ""
    assert fragment in done.stderr and done.stderr.count("\n") == 1


def test_show_unknown_and_invalid_skills(two_dirs: tuple[Path, Path]) -> None:
    first, _ = two_dirs
    done = skillchat("skills", "show", "nosuch", "--skills-dir", str(first))
    assert done.returncode == 1 and "no skill named 'nosuch'" in done.stderr
    done = skillchat("skills", "show", "broken", "--skills-dir", str(first))
    assert done.returncode == 1 and "is not usable" in done.stderr
    assert "Traceback" not in done.stderr


def test_show_file_symlink_escape_is_refused(tmp_path: Path) -> None:
    skill = skill_folder(tmp_path / "s", "leaky", "name: leaky\ndescription: L.\n")
    os.symlink("/etc/passwd", skill / "passwd")
    done = skillchat(
        "skills", "show", "leaky", "--file", "passwd", "--skills-dir", str(skill.parent)
    )
    assert done.returncode == 1 and "Path traversal detected" in done.stderr
    assert "root:" not in done.stdout


def test_validate_reports_every_problem_with_file_and_line(tmp_path: Path) -> None:
    skill_folder(tmp_path, "good", "name: good\ndescription: Fine.\n")
    skill_folder(tmp_path, "bad", "name: Bad--Name\ndescription: ''\n")
    skill_folder(tmp_path, "odd", "name: odd\ndescription: Odd.\nx-custom: x\n")
    done = skillchat("skills", "validate", str(tmp_path))
    assert done.returncode == 1
    bad_md = tmp_path / "bad" / "SKILL.md"
    assert f"{bad_md}:2: error: name 'Bad--Name'" in done.stdout
    assert f"{bad_md}:3: error: description" in done.stdout
    assert "odd/SKILL.md:4: warning: unknown key 'x-custom'" in done.stdout
    assert "3 checked (load mode): 2 ok, 1 with errors" in done.stderr


def test_validate_finds_skills_one_or_two_levels_below(tmp_path: Path) -> None:
    """A collection of collections (`real-skills/SOURCE/SKILL`, `SOURCE/skills/SKILL`)."""
    one = skill_folder(tmp_path / "anthropic", "pdf", "name: pdf\ndescription: PDF.\n")
    two = skill_folder(tmp_path / "vercel" / "skills", "web", "name: web\ndescription: W.\n")
    skill_folder(tmp_path / "deep" / "a" / "b", "far", "name: far\ndescription: F.\n")
    done = skillchat("skills", "validate", str(tmp_path))
    assert done.returncode == 0, done.stdout
    assert "2 checked (load mode): 2 ok" in done.stderr
    reports = json.loads(skillchat("skills", "validate", "--json", str(tmp_path)).stdout)
    # three levels below is not a collection's skill
    assert [r["path"] for r in reports["reports"]] == [str(one), str(two)]


def test_validate_strict_makes_unknown_keys_errors(tmp_path: Path) -> None:
    skill = skill_folder(tmp_path, "odd", "name: odd\ndescription: Odd.\nx-custom: x\n")
    assert skillchat("skills", "validate", str(skill)).returncode == 0
    strict = skillchat("skills", "validate", "--strict", str(skill / "SKILL.md"))
    assert strict.returncode == 1 and "error: unknown key 'x-custom'" in strict.stdout


def test_validate_dot_and_json(tmp_path: Path) -> None:
    skill_folder(tmp_path, "good", "name: good\ndescription: Fine.\n")
    done = skillchat("skills", "validate", ".", "--json", cwd=tmp_path)
    doc = json.loads(done.stdout)
    assert done.returncode == 0 and doc["ok"] is True
    assert [(r["name"], r["ok"]) for r in doc["reports"]] == [("good", True)]


def test_validate_bundled_skills_are_strictly_valid() -> None:
    done = skillchat("skills", "validate", "--strict", str(BUNDLED))
    assert done.returncode == 0, done.stdout
    assert "3 checked (strict mode): 3 ok" in done.stderr


def test_validate_missing_path_is_an_error(tmp_path: Path) -> None:
    done = skillchat("skills", "validate", str(tmp_path / "nope"))
    assert done.returncode == 1 and "path does not exist" in done.stdout


def test_a_skills_dir_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "skills.txt"
    not_a_dir.write_text("oops")
    done = skillchat("skills", "list", "--skills-dir", str(not_a_dir))
    assert done.returncode == 0 and done.stdout == ""
    line = f"warning: {not_a_dir}: cannot list skills directory: Not a directory\n"
    assert line in done.stderr
    doc = json.loads(skillchat("skills", "list", "--json", "--skills-dir", str(not_a_dir)).stdout)
    assert [p["path"] for p in doc["directory_problems"]] == [str(not_a_dir)]


def test_a_skill_md_in_another_case_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "odd").mkdir(parents=True)
    (root / "odd" / "Skill.md").write_text("---\nname: odd\ndescription: Odd.\n---\nBody\n")
    done = skillchat("skills", "list", "--skills-dir", str(root))
    assert done.returncode == 0
    expected = f"{root / 'odd' / 'Skill.md'}: not loaded: the file must be named SKILL.md"
    assert expected in done.stderr


def test_a_skills_dir_one_level_too_high_says_where_the_skills_are(
    tmp_path: Path, server: ScriptedServer, pty_sessions: Callable[..., PtySession]
) -> None:
    """In `skills list`, `ask` and the REPL's banner: one line, said once."""
    skill_folder(tmp_path / "proj" / "skills", "notes", "name: notes\ndescription: Notes.\n")
    high = tmp_path / "proj"
    said = f"{high}: no skill folders here, but skills were found one level below, in "
    said += f"{high / 'skills'}: pass that folder to --skills-dir"
    done = skillchat("skills", "list", "--skills-dir", str(high))
    assert done.returncode == 0 and done.stderr.count(said) == 1, done.stderr
    server.script(reply("answered"))
    done = skillchat("ask", *session_options(server, high), "hi")
    assert done.returncode == 0 and done.stdout.strip() == "answered", done.stderr
    assert done.stderr.count(said) == 1, done.stderr
    session = pty_sessions(*session_options(server, high))
    banner = " ".join(session.prompt().split())  # joined: the line wraps at 120 columns
    assert banner.count(" ".join(said.split())) == 1, banner
    assert session.quit() == 0


def test_a_directory_of_skills_is_not_searched_below(tmp_path: Path) -> None:
    skill_folder(tmp_path / "skills", "notes", "name: notes\ndescription: Notes.\n")
    skill_folder(tmp_path / "skills" / "extra", "more", "name: more\ndescription: More.\n")
    done = skillchat("skills", "list", "--skills-dir", str(tmp_path / "skills"))
    assert done.returncode == 0 and "one level below" not in done.stderr, done.stderr


def test_on_a_terminal_a_long_name_leaves_room_for_the_descriptions(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    long_name = "a-skill-whose-name-is-about-as-long-as-the-spec-allows-it-to-be"
    skill_folder(root, long_name, f"name: {long_name}\ndescription: Long.\n")
    skill_folder(root, "pdf", "name: pdf\ndescription: Fill in PDF forms and merge them.\n")
    session = PtySession("skills", "list", "--skills-dir", str(root), env={"COLUMNS": "60"})
    try:
        assert session.wait() == 0
        lines = [line for line in session.screen().splitlines() if line]
    finally:
        session.close()
    assert all(len(line) <= 60 for line in lines), "\n".join(lines)
    [pdf] = [line for line in lines if line.startswith("pdf ")]
    assert "Fill in PDF" in pdf
    [cut] = [line for line in lines if line.startswith("a-skill-whose-name")]
    assert "…" in cut
