"""`allowed-tools`: parsing Claude Code's syntax as real skills write it, matching
commands word by word (shell operators included), and the approve/restrict/ignore
policy for trusted and untrusted skills."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import skill_folder

from skillchat.skills.allowed_tools import (
    decide,
    match_command,
    parse_allowed_tools,
    split_entries,
)
from skillchat.skills.model import Skill
from skillchat.skills.registry import discover
from skillchat.skills.validation import inspect_skill


def test_entries_split_at_spaces_and_commas_outside_parentheses() -> None:
    value = "Read, Grep Bash(git log:*) Bash(python scripts/fill.py:*)\tmcp__gh__pr"
    assert split_entries(value) == [
        "Read",
        "Grep",
        "Bash(git log:*)",
        "Bash(python scripts/fill.py:*)",
        "mcp__gh__pr",
    ]
    assert split_entries("Bash(unclosed x Read") == ["Bash(unclosed x Read"]
    assert split_entries("a) b") == ["a)", "b"]


def test_each_kind_of_entry() -> None:
    rules = parse_allowed_tools(
        "Read Grep(*.py) Glob Edit Write WebFetch mcp__github__create_pr Bash(git:*) "
        "Bash(npm run test:*) Bash(git status) Bash(ls *) Bash() Bash(unclosed"
    )
    assert rules.declared
    assert [(r.entry, r.kind) for r in rules.bash] == [
        ("Bash(git:*)", "prefix"),
        ("Bash(npm run test:*)", "prefix"),
        ("Bash(git status)", "exact"),
        ("Bash(ls *)", "wildcard"),
    ]
    assert rules.read_only == ("Read", "Grep(*.py)", "Glob")
    assert rules.ignored == (
        "Edit",
        "Write",
        "WebFetch",
        "mcp__github__create_pr",
        "Bash()",
        "Bash(unclosed",
    )
    assert not rules.any_command
    assert parse_allowed_tools("Bash").any_command and parse_allowed_tools("Bash(*)").any_command
    assert not parse_allowed_tools(None).declared
    assert parse_allowed_tools("").declared and parse_allowed_tools("").bash == ()


def test_a_yaml_list_reaches_the_parser_joined_with_spaces(tmp_path: Path) -> None:
    skill_folder(
        tmp_path,
        "lister",
        "name: lister\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git log:*)\n",
    )
    skill = discover([tmp_path]).get("lister")
    assert skill is not None and skill.allowed_tools == "Read Bash(git log:*)"
    rules = parse_allowed_tools(skill.allowed_tools)
    assert [r.words for r in rules.bash] == [("git", "log")]
    assert match_command(rules, "git log --oneline").matched


def test_every_allowed_tools_value_of_the_real_corpus_parses(shared: Path) -> None:
    values: dict[str, str] = {}
    for corpus in ("real-skills", "real-skills-scripts"):
        for skill_md in sorted((shared / corpus).rglob("SKILL.md")):
            folder = skill_md.parent
            found = inspect_skill(
                str(folder), dir_name=folder.name, shown_dir=str(folder), strict=False
            )
            value = found.frontmatter.get("allowed-tools") if found else None
            if isinstance(value, str):
                values[folder.name] = value
    assert len(values) >= 8
    parsed = {name: parse_allowed_tools(value) for name, value in values.items()}
    for name, rules in parsed.items():  # nothing is lost: every entry lands somewhere
        entries = split_entries(values[name])
        assert len(rules.bash) + len(rules.read_only) + len(rules.ignored) == len(entries)
    contribution = parsed["make-repo-contribution"]
    assert contribution.summary() == "Bash(git:*) Bash(gh issue:*) Bash(gh pr:*)"
    assert contribution.read_only == ("Read",) and contribution.ignored == ("Edit",)
    assert match_command(contribution, "gh pr create --fill").matched
    assert not match_command(contribution, "gh repo delete x").matched
    assert parsed["git-commit"].any_command  # `allowed-tools: Bash`


PREFIX_RULES = parse_allowed_tools(
    "Bash(git:*) Bash(python scripts/fill.py:*) Bash(npm run test:*) Bash(git status) "
    "Bash(npm run lint*) Bash(ls *)"
)


@pytest.mark.parametrize(
    ("command", "matched"),
    [
        ("git", True),
        ("git log --oneline -3", True),
        ("  git   status  ", True),
        ('"git" log', True),  # the shell runs the same program
        ("gitx log", False),
        # run from the workspace, these run the workspace's own file, not the skill's
        ("python scripts/fill.py in.pdf out.pdf", False),
        ("python scripts/fill.py", False),
        ("python scripts/fill.pyc", False),
        ("python3 scripts/fill.py", False),
        ("python scripts/other.py", False),
        ("npm run test", True),
        ("npm run test --watch", True),
        ("npm run test:unit", False),  # a prefix rule is whole words
        ("npm run lint:fix", True),  # a `*` rule is characters
        ("ls", True),
        ("ls -la /tmp", True),
        ("lsblk", False),
        ("git 'log; rm -rf ~'", True),  # a quoted `;` is one argument, not an operator
        ("git status && git diff", True),
        ("git status | git diff", True),
        ("git log &", True),
        ("make;", False),
        # operator injection: every simple command must match
        ("git status; rm -rf ~", False),
        ("git log && curl x", False),
        ("git log || curl x", False),
        ("git log | sh", False),
        ("git log & rm -rf ~", False),
        ("git\nrm -rf ~", False),
        ("git log\r\nrm", False),
        ("git log $(curl x)", False),
        ("git log `curl x`", False),
        ('git log "$(curl x)"', False),
        ("git log <(curl x)", False),
        ("git log > ~/.bashrc", False),
        ("git log 2>&1", False),
        ("git log <<EOF", False),
        ("(git log)", False),
        ("git log 'unclosed", False),
        ("FOO=1 git log", False),
        ("GIT_SSH_COMMAND=evil git fetch", False),
        ("", False),
        ("git log\x00rm", False),
    ],
)
def test_matching(command: str, matched: bool) -> None:
    assert match_command(PREFIX_RULES, command).matched is matched


def test_shell_syntax_that_cannot_be_vouched_for_is_complex_even_under_bare_bash() -> None:
    anything = parse_allowed_tools("Bash")
    assert match_command(anything, "rm -rf build && make").matched
    for command in ("echo $(id)", "ls > out", "git\nrm", "(cd x)", "a ||"):
        found = match_command(anything, command)
        assert not found.matched and found.complex, command
    # Split at `;` into `git status` and `rm -rf ~`, each matched whole by its rule;
    # `#` is a word, not a comment: `git log # note` is four words.
    exact = parse_allowed_tools(
        "Bash(git status) Bash(rm -rf ~) Bash(git log) Bash(git log # note)"
    )
    assert match_command(exact, "git status; rm -rf ~").rule == "Bash(git status)"
    assert match_command(exact, "git log # note").rule == "Bash(git log # note)"


def _skill(tmp_path: Path, allowed: str | None) -> Skill:
    line = f"allowed-tools: {allowed}\n" if allowed is not None else ""
    skill_folder(tmp_path, "tool", f"name: tool\ndescription: d\n{line}")
    skill = discover([tmp_path]).get("tool")
    assert skill is not None
    return skill


def test_approve_pre_approves_only_a_trusted_skills_matching_command(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "Read Bash(git:*)")
    verdict = decide("git log", skill=skill, trusted=True)
    assert verdict.decision == "pre-approved" and "Bash(git:*)" in verdict.reason
    untrusted = decide("git log", skill=skill, trusted=False)
    assert untrusted.decision == "ask" and "not trusted" in untrusted.reason
    for command in ("ls", "git log; rm -rf ~", "git log $(id)"):
        assert decide(command, skill=skill, trusted=True).decision == "ask"
    assert decide("git log", skill=None, trusted=True).decision == "ask"


def test_restrict_refuses_what_a_declaring_skill_does_not_allow(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "Bash(git:*) Read")
    verdict = decide("curl x", skill=skill, trusted=True, mode="restrict")
    assert verdict.decision == "refused"
    assert "restrict" in verdict.reason and "(Bash(git:*))" in verdict.reason
    for trusted in (True, False):  # restricting narrows untrusted skills too
        injected = decide("git log; rm -rf ~", skill=skill, trusted=trusted, mode="restrict")
        assert injected.decision == "refused"
    complex_line = decide("git log > x", skill=skill, trusted=True, mode="restrict")
    assert complex_line.decision == "refused" and "shell syntax" in complex_line.reason
    matching = decide("git log", skill=skill, trusted=True, mode="restrict")
    assert matching.decision == "pre-approved"
    assert decide("git log", skill=skill, trusted=False, mode="restrict").decision == "ask"


def test_restrict_and_a_skill_with_no_command_rules_or_no_list(tmp_path: Path) -> None:
    read_only = _skill(tmp_path / "a", "Read Grep Glob")
    assert decide("ls", skill=read_only, trusted=True, mode="restrict").decision == "refused"
    undeclared = _skill(tmp_path / "b", None)
    assert decide("ls", skill=undeclared, trusted=True, mode="restrict").decision == "ask"
    anything = _skill(tmp_path / "c", "Bash")
    assert decide("ls > x", skill=anything, trusted=True, mode="restrict").decision == "ask"
    assert decide("ls", skill=anything, trusted=True, mode="restrict").decision == "pre-approved"


def test_ignore_always_asks(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "Bash(git:*)")
    for command in ("git log", "curl x"):
        verdict = decide(command, skill=skill, trusted=True, mode="ignore")
        assert verdict.decision == "ask"
