"""Skills other clients load although the spec says they must not: a description
over 1,024 characters, a `name` unlike its folder. They load by default, under the
folder's name, with one warning line each; `[skills] strict = true` and
`skills validate` refuse them as before. A `/name` of a skill left out for any
reason, by its folder's name too, is a one-line usage error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import REAL_SKILLS, one_line_error, skill_folder, skillchat
from openai_server import ScriptedServer, reply

FIVE = {  # folder -> why the spec refuses it
    "anthropics-skills/claude-api": "description is 1",
    "vercel-labs-agent-skills/composition-patterns": "does not match directory",
    "vercel-labs-agent-skills/react-best-practices": "does not match directory",
    "vercel-labs-agent-skills/react-native-skills": "does not match directory",
    "vercel-labs-agent-skills/react-view-transitions": "does not match directory",
}


@pytest.fixture
def five(shared: Path, tmp_path: Path) -> Path:
    """The five real skills in one skills folder (symlinks, as an install may make)."""
    root = tmp_path / "skills"
    root.mkdir()
    for rel in FIVE:
        os.symlink(REAL_SKILLS / rel, root / Path(rel).name)
    return root


def strict_config(tmp_path: Path) -> Path:
    config = tmp_path / "strict.toml"
    config.write_text("[skills]\nstrict = true\n", encoding="utf-8")
    return config


def test_the_five_real_skills_load_with_one_warning_each(five: Path) -> None:
    done = skillchat("skills", "list", "--skills-dir", str(five))
    assert done.returncode == 0, done.stderr
    names = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert names == sorted(Path(rel).name for rel in FIVE)  # the folder names win
    warnings = done.stderr.splitlines()
    assert len(warnings) == 5, done.stderr
    for rel, why in FIVE.items():
        [line] = [w for w in warnings if w.startswith(f"warning: {Path(rel).name}: ")]
        assert why in line and "[skills] strict = true leaves it out" in line
    said = next(w for w in warnings if "react-best-practices: name" in w)
    assert "loaded as 'react-best-practices'" in said


def test_strict_config_and_validate_refuse_them(five: Path, tmp_path: Path) -> None:
    config = strict_config(tmp_path)
    done = skillchat("skills", "list", "--config", str(config), "--skills-dir", str(five))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert "5 skills left out (5 invalid)" in done.stderr
    done = skillchat("skills", "validate", str(five))
    assert done.returncode == 1
    assert done.stdout.count("error") >= 5, done.stdout


def first_request(server: ScriptedServer, skills: Path, message: str) -> str:
    """The first request `skillchat ask MESSAGE` sends, as text, after checking it ran."""
    server.script(reply("done"))
    args = ["--model", "openai/test-model", "--api-base", server.base_url]
    done = skillchat("ask", *args, "--skills-dir", str(skills), message)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    return str(server.completions[0])


def test_a_lenient_skill_is_called_by_its_folder_name(server: ScriptedServer, five: Path) -> None:
    assert "React" in first_request(server, five, "/react-best-practices tips")


def test_name_mismatch_in_a_made_up_skill(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill_folder(root, "folder-name", "name: other-name\ndescription: D.\n")
    skill_folder(root, "Bad_Folder", "name: good\ndescription: D.\n")  # no name to fall back on
    done = skillchat("skills", "list", "--skills-dir", str(root))
    assert done.stdout.startswith("folder-name\tD.\t"), done.stdout
    assert "1 skill left out (1 invalid)" in done.stderr


@pytest.mark.parametrize(
    ("folder", "text", "said"),
    [
        ("yaml", "---\nname: yaml\ndescription: [unclosed\n---\n", "/yaml: the skill 'yaml' is"),
        ("named", "---\nname: other\n---\n", "/named: the skill 'named' is left out"),
    ],
)
def test_a_left_out_skill_by_its_folder_name_is_an_error(
    server: ScriptedServer, tmp_path: Path, folder: str, text: str, said: str
) -> None:
    root = tmp_path / "skills"
    (root / folder).mkdir(parents=True)
    (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    done = skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "--skills-dir", str(root), f"/{folder} go")  # fmt: skip
    line = one_line_error(done, code=2)
    assert said in line, line
    assert server.completions == []


def test_strict_leaves_out_and_names_the_folder(
    server: ScriptedServer, five: Path, tmp_path: Path
) -> None:
    config = strict_config(tmp_path)
    done = skillchat("ask", "--config", str(config), "--model", "openai/test-model",
                     "--api-base", server.base_url, "--skills-dir", str(five),
                     "/react-best-practices tips")  # fmt: skip
    line = one_line_error(done, code=2)
    assert "/react-best-practices: the skill 'react-best-practices' is left out" in line
    assert server.completions == []


def test_a_hard_linked_skill_by_its_folder_name_is_an_error(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = tmp_path / "skills"
    skill_folder(root, "linked", "name: linked\ndescription: D.\n")
    os.link(root / "linked" / "SKILL.md", tmp_path / "elsewhere.md")
    done = skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "--skills-dir", str(root), "/linked go")  # fmt: skip
    line = one_line_error(done, code=2)
    assert "/linked: the skill 'linked' is left out" in line and "hard link" in line, line
    assert server.completions == []


COLON = "name: when-skill\ndescription: Use when: the user asks for a 'when' check.\n"


def test_an_unquoted_colon_in_a_value_loads_with_a_warning(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`description: Use when: ...` is not valid YAML; Codex, Claude Code and Gemini CLI
    read the value as text, and so does skillchat, saying so once."""
    root = tmp_path / "skills"
    skill_folder(root, "when-skill", COLON, body="# When\nWHEN-BODY-7\n")
    done = skillchat("skills", "list", "--skills-dir", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("when-skill\tUse when: the user asks for a 'when' check.\t")
    [warning] = done.stderr.splitlines()
    assert warning.startswith("warning: when-skill: ") and "description" in warning
    assert "[skills] strict = true leaves it out" in warning
    assert "WHEN-BODY-7" in first_request(server, root, "/when-skill check")


def test_an_unquoted_colon_stays_an_error_when_strict(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill_folder(root, "when-skill", COLON)
    config = strict_config(tmp_path)
    done = skillchat("skills", "list", "--config", str(config), "--skills-dir", str(root))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert "1 skill left out (1 invalid)" in done.stderr
    done = skillchat("skills", "validate", str(root / "when-skill"))
    assert done.returncode == 1 and "YAML syntax error at line 3" in done.stdout, done.stdout


def test_lenient_warnings_are_said_once_per_state_of_the_folders(tmp_path: Path) -> None:
    """A real collection warns about the same twenty names at every `skills list`
    otherwise: said in full once, then counted, and in full again when they change."""
    root = tmp_path / "skills"
    skill_folder(root, "one", "name: other\ndescription: D.\n")
    first = skillchat("skills", "list", "--skills-dir", str(root))
    assert "warning: one: name 'other'" in first.stderr, first.stderr
    again = skillchat("skills", "list", "--skills-dir", str(root))
    assert again.returncode == 0 and again.stdout == first.stdout
    [line] = again.stderr.splitlines()
    assert "warning: one:" not in line and "1 skill loaded despite the spec" in line
    skill_folder(root, "two", "name: else\ndescription: D.\n")
    third = skillchat("skills", "list", "--skills-dir", str(root)).stderr
    assert "warning: one: name 'other'" in third and "warning: two: name 'else'" in third
