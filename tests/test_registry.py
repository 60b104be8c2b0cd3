"""Discovery: what counts as a skill, precedence, limits, and never crashing."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import skill_folder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillchat.skills.model import Declared
from skillchat.skills.registry import Registry, discover

DESC = "Does one thing well."


def make_skill(parent: Path, dir_name: str, name: str | None = None, extra: str = "") -> Path:
    return skill_folder(parent, dir_name, f"name: {name or dir_name}\ndescription: {DESC}\n{extra}")


def reasons(registry: Registry) -> list[tuple[str, str | None, str]]:
    return [(e.reason, e.name, e.path.name) for e in registry.excluded]


def test_discovers_skills_with_their_facts(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "beta", extra="allowed-tools: [Read, Grep]\nargument-hint: x\n")
    make_skill(skills, "alpha")
    registry = discover([skills])
    assert registry.names() == ["alpha", "beta"]
    assert list(registry.skills) == ["alpha", "beta"]
    assert registry.directories == (skills,)
    beta = registry.get("beta")
    assert beta is not None
    assert beta.root == skills / "beta"
    assert beta.skill_md == skills / "beta" / "SKILL.md"
    assert beta.source_dir == skills
    assert beta.description == DESC
    assert beta.allowed_tools == "Read Grep"
    assert [w.message for w in beta.warnings][1] == (
        "argument-hint: shown by Claude Code and skillchat (completion, /help)"
    )
    assert beta.warnings[1].severity == "note"
    assert all(w.severity != "error" for w in beta.warnings)
    assert registry.get("missing") is None
    assert registry.excluded == () and registry.problems == ()


def test_what_a_skill_declares_is_read_once_typed(tmp_path: Path) -> None:
    """The frontmatter keys skillchat acts on, read into one typed value (the whole
    mapping kept for `get_skill`); a value of the wrong type reads as the key's absence."""
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "full",
        extra="allowed-tools: Bash(git:*)\ncontext: fork\nmodel: ' gpt-x '\n"
        "disable-model-invocation: true\nuser-invocable: false\nargument-hint: [file]\n"
        "paths: 'src/*.{ts,py}'\nwhen_to_use: |\n  after a\n  commit\n",
    )
    make_skill(
        skills,
        "odd",
        extra="allowed-tools: 3\ncontext: 1\nmodel: [a]\ndisable-model-invocation: 'true'\n"
        "user-invocable: 0\nargument-hint: {a: 1}\npaths: ['**']\nwhen_to_use: '  '\n",
    )
    registry = discover([skills])
    full, odd = registry.get("full"), registry.get("odd")
    assert full is not None and odd is not None
    assert full.declared == Declared(
        allowed_tools="Bash(git:*)",
        forked=True,
        model="gpt-x",
        model_invocable=False,
        user_invocable=False,
        argument_hint="[file]",
        paths=("src/*.py", "src/*.ts"),
        when_to_use="after a commit",
    )
    assert full.declared is full.declared  # read once
    assert full.model_description == f"{DESC} When to use: after a commit"
    assert full.frontmatter["when_to_use"] == "after a\ncommit\n"  # the mapping, whole
    assert odd.declared == Declared()


def test_what_is_not_a_skill_is_ignored(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, ".hidden")
    make_skill(skills / "family", "nested")  # only immediate children count
    (skills / "empty").mkdir()
    (skills / "README.md").write_text("not a skill")
    (skills / "file-link").symlink_to(skills / "README.md")
    (skills / "broken-link").symlink_to(tmp_path / "nowhere")
    (skills / "loop").symlink_to(skills / "loop")
    registry = discover([skills])
    assert registry.skills == {} and registry.excluded == ()


def test_missing_and_unusable_directories_are_skipped(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills", "demo")
    (tmp_path / "a-file").write_text("x")
    registry = discover(
        [tmp_path / "nope", tmp_path / "a-file", Path("bad\0path"), tmp_path / "skills"]
    )
    assert registry.names() == ["demo"]
    assert [p.message for p in registry.problems] == [
        "cannot list skills directory: Not a directory",
        "cannot list skills directory: embedded null byte",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can list any directory")
def test_unlistable_directory_is_skipped(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    make_skill(locked, "demo")
    locked.chmod(0)
    try:
        registry = discover([locked])
    finally:
        locked.chmod(0o755)
    assert registry.skills == {}
    assert "Permission denied" in registry.problems[0].message


def test_first_directory_wins_a_name_collision(tmp_path: Path) -> None:
    first = make_skill(tmp_path / "project", "demo")
    second = make_skill(tmp_path / "user", "demo")
    registry = discover([tmp_path / "project", tmp_path / "user"])
    assert registry.get("demo").root == first  # type: ignore[union-attr]
    [shadowed] = registry.excluded
    assert (shadowed.reason, shadowed.name, shadowed.path) == ("shadowed", "demo", second)
    assert shadowed.shadowed_by == first
    assert shadowed.summary() == f"name 'demo' already taken by {first}"


def test_nfkc_equal_names_collide_inside_one_directory(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "demo")
    make_skill(skills, "ｄｅｍｏ")  # full-width folder and name: NFKC makes both 'demo'
    registry = discover([skills])
    assert registry.names() == ["demo"]
    assert reasons(registry) == [("shadowed", "demo", "ｄｅｍｏ")]


def test_an_invalid_skill_shadows_nothing(tmp_path: Path) -> None:
    make_skill(tmp_path / "project", "demo", extra="description: again\n")  # duplicate key
    good = make_skill(tmp_path / "user", "demo")
    registry = discover([tmp_path / "project", tmp_path / "user"])
    assert registry.get("demo").root == good  # type: ignore[union-attr]
    [invalid] = registry.excluded
    assert invalid.reason == "invalid"
    assert invalid.summary() == "YAML error at line 4: duplicate key 'description'"


def test_invalid_skills_are_recorded_with_every_error(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "wrong-dir", name="Other_Name")
    (skills / "no-frontmatter").mkdir()
    (skills / "no-frontmatter" / "SKILL.md").write_text("# Title only\n")
    registry = discover([skills], strict=True)  # every error: as `[skills] strict = true`
    assert registry.skills == {}
    assert [(e.reason, e.path.name, e.summary()) for e in registry.excluded] == [
        (
            "invalid",
            "no-frontmatter",
            "SKILL.md does not start with YAML frontmatter ('---' on line 1)",
        ),
        (
            "invalid",
            "wrong-dir",
            "name 'Other_Name' must be lowercase letters, digits and '-'; "
            "name 'Other_Name' does not match directory 'wrong-dir'",
        ),
    ]
    assert registry.excluded[1].problems[0].line == 2


def test_max_skills_keeps_the_first_in_scan_order(tmp_path: Path) -> None:
    for name in ["e", "d", "c", "b", "a"]:
        make_skill(tmp_path / "one", name)
    make_skill(tmp_path / "two", "a")  # shadowed: does not count against the limit
    make_skill(tmp_path / "two", "f")
    registry = discover([tmp_path / "one", tmp_path / "two"], max_skills=3)
    assert registry.names() == ["a", "b", "c"]
    assert reasons(registry) == [
        ("over-limit", "d", "d"),
        ("over-limit", "e", "e"),
        ("shadowed", "a", "a"),
        ("over-limit", "f", "f"),
    ]
    assert discover([tmp_path / "one"], max_skills=0).skills == {}


def test_past_max_skills_folders_are_not_read(tmp_path: Path) -> None:
    """Past the limit a folder is known by its name: its SKILL.md is not parsed, so
    a broken one is over the limit, not invalid; shadowing and disabling still hold."""
    for name in ["a", "b"]:
        make_skill(tmp_path / "one", name)
    skill_folder(tmp_path / "one", "c", "name: [unclosed\n")  # not YAML: never read
    make_skill(tmp_path / "one", "d")
    (tmp_path / "one" / "e").mkdir()  # no SKILL.md: not a skill at all
    make_skill(tmp_path / "two", "a")
    registry = discover([tmp_path / "one", tmp_path / "two"], max_skills=2, disabled={"d"})
    assert registry.names() == ["a", "b"]
    assert reasons(registry) == [
        ("over-limit", "c", "c"),
        ("disabled", "d", "d"),
        ("shadowed", "a", "a"),
    ]


def test_symlinked_skill_folder_is_followed_to_its_real_path(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store", "demo")
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "demo").symlink_to(real)
    (tmp_path / "linked-skills").symlink_to(skills)  # a symlinked skills directory too
    for directory in (skills, tmp_path / "linked-skills"):
        skill = discover([directory]).get("demo")
        assert skill is not None
        assert skill.root == real.resolve()
        assert skill.skill_md == real.resolve() / "SKILL.md"


def test_a_symlink_must_be_named_like_the_skill(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store", "demo")
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "alias").symlink_to(real)
    registry = discover([skills], strict=True)  # by default: loaded as 'alias', with a warning
    assert registry.skills == {}
    assert registry.excluded[0].summary() == "name 'demo' does not match directory 'alias'"
    assert registry.excluded[0].path == skills / "alias"


def test_lowercase_skill_md_fallback_and_uppercase_preference(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    (skills / "lower").mkdir(parents=True)
    (skills / "lower" / "skill.md").write_text(f"---\nname: lower\ndescription: {DESC}\n---\n")
    both = make_skill(skills, "both")
    (both / "skill.md").write_text("not even frontmatter")
    registry = discover([skills])
    assert registry.names() == ["both", "lower"]
    assert registry.get("lower").skill_md.name == "skill.md"  # type: ignore[union-attr]
    assert registry.get("both").skill_md.name == "SKILL.md"  # type: ignore[union-attr]


def test_hostile_skill_md_files_do_not_hang_or_crash(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    for name in ("fifo", "dir", "huge", "binary-body", "outside"):
        (skills / name).mkdir(parents=True)
    os.mkfifo(skills / "fifo" / "SKILL.md")
    (skills / "dir" / "SKILL.md").mkdir()
    with (skills / "huge" / "SKILL.md").open("wb") as fh:
        fh.write(b"---\n")
        fh.truncate(100 * 1024 * 1024)
    body = b"\x00\xff\xfe binary body, never read \n---\n"
    (skills / "binary-body" / "SKILL.md").write_bytes(
        f"---\nname: binary-body\ndescription: {DESC}\n---\n".encode() + body
    )
    (skills / "outside" / "SKILL.md").symlink_to("/etc/hostname")
    # A fifo opened would block this call for good; the 100 MB file is read only to
    # its cap (test_frontmatter.py measures that read's memory).
    registry = discover([skills])
    assert registry.names() == ["binary-body"]
    assert {e.path.name: e.summary() for e in registry.excluded} == {
        "dir": "SKILL.md is not a regular file",
        "fifo": "SKILL.md is not a regular file",
        "huge": "frontmatter larger than 64 KiB",
        "outside": "SKILL.md is a symlink to a file outside the skill folder",
    }


def test_tilde_is_expanded(isolated_env: Path) -> None:
    make_skill(isolated_env / "my-skills", "demo")
    registry = discover(["~/my-skills"])
    assert registry.names() == ["demo"]
    assert registry.directories == (isolated_env / "my-skills",)


CONTENT = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda fm, body: b"---\n" + fm + b"\n---\n" + body,
        st.binary(max_size=200),
        st.binary(max_size=50),
    ),
    st.builds(
        lambda name, desc: f"---\nname: {name}\ndescription: {desc}\n---\n".encode(),
        st.text(max_size=20),
        st.text(max_size=40),
    ),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(CONTENT, min_size=1, max_size=4))
def test_discovery_never_crashes_on_arbitrary_files(tmp_path: Path, contents: list[bytes]) -> None:
    skills = tmp_path / f"run-{time.perf_counter_ns()}"
    for i, data in enumerate(contents):
        (skills / f"s{i}").mkdir(parents=True)
        (skills / f"s{i}" / "SKILL.md").write_bytes(data)
    registry = discover([skills])
    assert len(registry.skills) + len(registry.excluded) == len(contents)
    for excluded in registry.excluded:
        assert excluded.reason == "invalid" and excluded.summary()
