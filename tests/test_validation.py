"""The Agent Skills field rules in load and strict mode, and `validate_paths`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import skill_folder
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillchat.skills.validate_paths import validate_paths
from skillchat.skills.validation import (
    Inspection,
    check_frontmatter,
    inspect_skill,
)

DESC = "Does one thing well."


def check(data: dict[Any, Any], *, dir_name: str = "demo", strict: bool = False) -> Inspection:
    return check_frontmatter(data, dir_name=dir_name, skill_md=Path("x/SKILL.md"), strict=strict)


def messages(result: Inspection, severity: str = "error") -> list[str]:
    return [p.message for p in result.problems if p.severity == severity]


def make_skill(parent: Path, dir_name: str, frontmatter: str | None = None, **fields: Any) -> Path:
    """A skill folder; `frontmatter` is raw YAML, else `fields` are dumped."""
    if frontmatter is None:
        fields.setdefault("name", dir_name)
        fields.setdefault("description", DESC)
        frontmatter = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)
    return skill_folder(parent, dir_name, frontmatter)


# --------------------------------------------------------------------------- name


def test_valid_minimal_frontmatter() -> None:
    result = check({"name": "demo", "description": DESC})
    assert result.ok and result.problems == ()
    assert (result.name, result.description) == ("demo", DESC)


@pytest.mark.parametrize(
    ("name", "dir_name", "expected"),
    [
        ("Foo", "Foo", "name 'Foo' must be lowercase letters, digits and '-'"),
        ("my_skill", "my_skill", "name 'my_skill' must be lowercase letters, digits and '-'"),
        ("a b", "a b", "name 'a b' must be lowercase letters, digits and '-'"),
        ("-demo", "-demo", "name '-demo' must not start or end with '-'"),
        ("demo-", "demo-", "name 'demo-' must not start or end with '-'"),
        ("de--mo", "de--mo", "name 'de--mo' must not contain '--'"),
        ("a" * 65, "a" * 65, "name is 65 characters (max 64)"),
        ("x", "y", "name 'x' does not match directory 'y'"),
        ("", "demo", "name is empty"),
        (None, "demo", "name is empty"),
        (12, "12", "name must be a string, got integer (quote it)"),
        (["a"], "demo", "name must be a string, got list"),
    ],
)
def test_bad_names(name: object, dir_name: str, expected: str) -> None:
    result = check({"name": name, "description": DESC}, dir_name=dir_name)
    assert messages(result) == [expected]


def test_missing_name() -> None:
    assert messages(check({"description": DESC})) == ["name is missing"]


def test_name_of_64_characters_is_fine() -> None:
    assert check({"name": "a" * 64, "description": DESC}, dir_name="a" * 64).ok


@pytest.mark.parametrize(
    ("name", "dir_name", "normalised"),
    [
        ("ｍｙ-ｓｋｉｌｌ", "my-skill", "my-skill"),  # full-width letters: NFKC folds them
        ("my-skill", "ｍｙ-ｓｋｉｌｌ", "my-skill"),
        ("café", "cafe\u0301", "café"),  # NFC name, NFD folder (as macOS stores it)
        ("数据-工具", "数据-工具", "数据-工具"),  # caseless letters are lowercase enough
        ("  demo  ", "demo", "demo"),  # surrounding spaces are stripped, as skills-ref does
    ],
)
def test_unicode_names_are_compared_after_nfkc(name: str, dir_name: str, normalised: str) -> None:
    result = check({"name": name, "description": DESC}, dir_name=dir_name)
    assert result.ok, result.problems
    assert result.name == normalised


def test_uppercase_unicode_is_not_lowercase() -> None:
    result = check({"name": "Café", "description": DESC}, dir_name="Café")
    assert messages(result) == ["name 'Café' must be lowercase letters, digits and '-'"]


def test_nfkc_length_counts() -> None:
    # U+FDFA expands to 18 characters under NFKC: 4 of them exceed 64
    name = "a" * 60 + "\ufdfa"
    assert "name is 78 characters (max 64)" in messages(check({"name": name, "description": DESC}))


VALID_NAMES = st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,6}", fullmatch=True).filter(
    lambda s: len(s) <= 64
)


@settings(max_examples=300, deadline=None)
@given(VALID_NAMES)
def test_generated_valid_names_always_pass(name: str) -> None:
    result = check({"name": name, "description": DESC}, dir_name=name, strict=True)
    assert result.problems == (), result.problems


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "name",
                "description",
                "license",
                "compatibility",
                "metadata",
                "allowed-tools",
                "other",
                1,
            ]
        ),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(),
            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
            max_leaves=6,
        ),
    ),
    st.booleans(),
)
@example({"name": "a\nb", "metadata": {"\n": None}, "x\ny": 1}, False)
@example({"name": None, "allowed-tools": ["\n"]}, False)  # found by hypothesis in CI-like runs
def test_rules_never_raise_and_always_explain(data: dict[Any, Any], strict: bool) -> None:
    result = check(data, strict=strict)
    for problem in result.problems:
        assert problem.message and "\n" not in problem.message
    assert result.ok == (not messages(result))


def test_values_in_messages_stay_on_one_line_and_short() -> None:
    data = {"name": "a\nb", "description": DESC, "metadata": {"k\n": 1}, "x\ny": 1}
    assert messages(check(data, dir_name="a"), "error") == [
        "name 'a\\nb' must be lowercase letters, digits and '-'",
        "name 'a\\nb' does not match directory 'a'",
    ]
    assert messages(check(data, dir_name="a"), "warning") == [
        "metadata['k\\n'] must be a string, got integer (quote it)",
        "unknown key 'x\\ny'",
    ]
    long_name = "X" * 500
    [first, *_] = messages(check({"name": long_name, "description": DESC}))
    assert first == "name is 500 characters (max 64)"
    assert max(len(m) for m in messages(check({"name": long_name, "description": DESC}))) < 200


# --------------------------------------------------------------------------- description


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("x" * 1100, "description is 1100 characters (max 1024)"),
        ("", "description is empty"),
        ("   \n ", "description is empty"),
        (None, "description is empty"),
        (["a", "b"], "description must be a string, got list"),
        ({"a": "b"}, "description must be a string, got mapping"),
        (True, "description must be a string, got boolean (quote it)"),
    ],
)
def test_bad_descriptions(value: object, expected: str) -> None:
    assert messages(check({"name": "demo", "description": value})) == [expected]


def test_missing_description() -> None:
    assert messages(check({"name": "demo"})) == ["description is missing"]


def test_description_length_is_measured_without_surrounding_whitespace() -> None:
    result = check({"name": "demo", "description": "x" * 1024 + "\n"})
    assert result.ok and result.description == "x" * 1024


# --------------------------------------------------------------------------- optional fields


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"x-custom": "[file]"}, "unknown key 'x-custom'"),
        ({"compatibility": "c" * 501}, "compatibility is 501 characters (max 500)"),
        ({"compatibility": ["linux"]}, "compatibility must be a string, got list"),
        ({"license": ["MIT"]}, "license must be a string, got list"),
        (
            {"metadata": "author: me"},
            "metadata must be a mapping of strings to strings, got string",
        ),
        ({"metadata": {"version": 1.0}}, "metadata.version must be a string, got float (quote it)"),
        ({"metadata": {"deps": ["uv"]}}, "metadata.deps must be a string, got list"),
        ({"metadata": {3: "x"}}, "metadata key 3 must be a string, got integer"),
        ({"allowed-tools": 5}, "allowed-tools must be a space-separated string, got integer"),
    ],
)
def test_odd_optional_fields_warn_in_load_mode_and_fail_in_strict(
    extra: dict[str, Any], expected: str
) -> None:
    data = {"name": "demo", "description": DESC, **extra}
    loose = check(data)
    assert loose.ok and messages(loose, "warning") == [expected]
    strict = check(data, strict=True)
    assert messages(strict) == [expected]


def test_problem_lines_point_at_the_key(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "demo", "name: demo\ndescription: d\nargument-hint: x\n")
    result = inspect_skill(str(folder), dir_name="demo", shown_dir=str(folder), strict=True)
    assert result is not None
    [problem] = result.problems
    assert (problem.line, problem.message, problem.path) == (
        4,
        "unknown key 'argument-hint'",
        folder / "SKILL.md",
    )


def test_allowed_tools_list_is_accepted_and_normalised() -> None:
    for strict in (False, True):
        result = check(
            {"name": "demo", "description": DESC, "allowed-tools": ["Read", "Grep"]}, strict=strict
        )
        assert result.ok
        assert result.frontmatter["allowed-tools"] == "Read Grep"
        assert messages(result, "warning") == [
            "allowed-tools is a YAML list; the spec wants a space-separated string "
            "(read as 'Read Grep')"
        ]


def test_allowed_tools_list_of_non_strings_is_odd() -> None:
    result = check({"name": "demo", "description": DESC, "allowed-tools": ["Read", 3]})
    assert messages(result, "warning") == [
        "allowed-tools must be a space-separated string, got list with non-string items"
    ]


def test_comma_separated_allowed_tools_is_only_a_warning() -> None:
    result = check({"name": "demo", "description": DESC, "allowed-tools": "a, b"}, strict=True)
    assert result.ok and len(messages(result, "warning")) == 1


def test_spec_fields_are_all_accepted_in_strict_mode() -> None:
    data = {
        "name": "demo",
        "description": DESC,
        "license": "MIT",
        "compatibility": "Needs git",
        "metadata": {"author": "me", "version": "1.0"},
        "allowed-tools": "Read Bash(git:*)",
    }
    result = check(data, strict=True)
    assert result.problems == ()
    assert result.frontmatter == data


# --------------------------------------------------------------------------- validate_paths


def test_validate_a_skill_folder_a_skill_md_and_a_folder_of_skills(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    good = make_skill(skills, "good")
    bad = make_skill(skills, "bad", "name: other\ndescription: d\nx-key: 1\n")
    make_skill(skills, ".hidden", "name: nope\n")
    (skills / "notes").mkdir()  # no SKILL.md: not a skill, not reported
    [one] = validate_paths([good])
    assert (one.path, one.name, one.ok, one.problems) == (good, "good", True, ())
    [same] = validate_paths([good / "SKILL.md"])
    assert same.path == good
    reports = validate_paths([skills], strict=True)
    assert [r.path for r in reports] == [bad, good]
    assert [p.message for p in reports[0].problems] == [
        "name 'other' does not match directory 'bad'",
        "unknown key 'x-key'",
    ]
    assert all(p.path == bad / "SKILL.md" for p in reports[0].problems)
    [loose_bad, _] = validate_paths([skills])
    assert [p.severity for p in loose_bad.problems] == ["error", "warning"]


def test_validate_dot_uses_the_real_folder_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_skill(tmp_path, "demo")
    monkeypatch.chdir(folder)
    [report] = validate_paths(["."])
    assert report.ok and report.name == "demo"
    assert report.path == Path(".")


def test_validate_reports_paths_that_hold_no_skill(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.txt").write_text("hi")
    reports = validate_paths([tmp_path / "missing", tmp_path / "empty", tmp_path / "file.txt"])
    assert [(r.name, [p.message for p in r.problems]) for r in reports] == [
        (None, ["path does not exist"]),
        (None, ["no skills found: no SKILL.md here or in a subfolder"]),
        (None, ["not a skill folder or a SKILL.md file"]),
    ]
    assert not any(r.ok for r in reports)
    assert validate_paths([tmp_path / "missing", tmp_path / "empty"], missing_ok=True) == []


def test_validate_reports_each_skill_once(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills", "demo")
    reports = validate_paths([folder, tmp_path / "skills", folder / "SKILL.md"])
    assert [r.path for r in reports] == [folder]


def test_validate_reports_unparseable_files(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"---\nname: demo\ndescription: [\n---\n")
    [report] = validate_paths([folder])
    [problem] = report.errors
    assert problem.line == 4 and problem.message.startswith("YAML syntax error at line 4")


def test_lowercase_skill_md_is_accepted_with_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "skill.md").write_text(f"---\nname: demo\ndescription: {DESC}\n---\n")
    [report] = validate_paths([folder], strict=True)
    assert report.ok
    assert [p.message for p in report.warnings] == ["file is named skill.md, not SKILL.md"]


def test_symlinked_skill_md_must_stay_inside_the_skill(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"---\nname: demo\ndescription: {DESC}\n---\n")
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(outside)
    [report] = validate_paths([folder])
    assert [p.message for p in report.errors] == [
        "SKILL.md is a symlink to a file outside the skill folder"
    ]
    os.unlink(folder / "SKILL.md")
    (folder / "real.md").write_text(outside.read_text())
    (folder / "SKILL.md").symlink_to("real.md")
    [report] = validate_paths([folder])
    assert report.ok
