"""`allowed-tools` rules that name a skill's own files match what a command runs, not
how it is spelled: the skill's file under /skills/NAME, from whatever folder the
command runs in; never the workspace's file of the same name, never another skill's,
and nothing the shell could read another way."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import skill_folder, write_files

from skillchat.skills.allowed_tools import decide, match_command, parse_allowed_tools
from skillchat.skills.model import Skill
from skillchat.skills.registry import discover

RULES = (
    "Bash(python3 scripts/fill.py:*) Bash(git:*) Bash(python -m scripts.fill:*) "
    "Bash(bash run.sh *) Bash(./bin/tool)"
)


def skill(parent: Path, name: str = "filler", allowed: str = RULES) -> Skill:
    folder = skill_folder(parent, name, f"name: {name}\ndescription: d\nallowed-tools: {allowed}\n")
    files = {"scripts/fill.py": "", "scripts/__init__.py": "", "run.sh": "", "bin/tool": ""}
    write_files(folder, files)
    found = discover([parent]).get(name)
    assert found is not None
    return found


def verdict(of: Skill, command: str, cwd: str = "/workspace") -> str:
    return decide(command, skill=of, trusted=True, cwd=cwd).decision


PRE_APPROVED = [
    "python3 /skills/filler/scripts/fill.py in.pdf",
    "python /skills/filler/scripts/fill.py",  # one interpreter, however spelled
    "python3.12 /skills/filler/scripts/fill.py",
    "python3 /skills/filler/./scripts//fill.py",
    "cd /skills/filler && python3 scripts/fill.py out.pdf",  # what the prompt suggests
    'cd "$SKILL_DIR" && python scripts/fill.py',  # $SKILL_DIR is /skills/filler
    "cd $SKILL_DIR && python3 scripts/fill.py",
    "cd ${SKILL_DIR} && python3 scripts/fill.py",
    "python3 $SKILL_DIR/scripts/fill.py",
    'python3 "${SKILL_DIR}/scripts/fill.py"',
    "cd /skills/filler/scripts && python3 fill.py",  # the same file, read from elsewhere
    "cd /skills/filler && git log && python3 scripts/fill.py",
    "cd /skills/filler && python3 scripts/fill.py | git log",
    "cd /skills/filler && python3 -m scripts.fill",  # a module of the skill, from its root
    "cd /skills/filler && bash run.sh x",  # a `*` rule naming a file of the skill
    "bash /skills/filler/run.sh x",
    "/skills/filler/bin/tool",
    "cd /skills/filler && ./bin/tool",
    "git status",  # a rule naming no file is matched word by word, as before
]

ASKED = [
    # the workspace's own files (commands start in /workspace)
    "python3 scripts/fill.py",
    "python scripts/fill.py in.pdf",
    "python3 ./scripts/fill.py",
    "python3 /workspace/scripts/fill.py",
    "python3 -m scripts.fill",
    "bash run.sh x",
    "./bin/tool",
    "cd /workspace && python3 scripts/fill.py",
    # another skill's files: the claim lends no rule to them
    "python3 /skills/other/scripts/fill.py",
    "cd /skills/other && python3 scripts/fill.py",
    # a `cd` the next command may not run after
    "cd /skills/filler; python3 scripts/fill.py",
    "cd /skills/filler || python3 scripts/fill.py",
    "cd /skills/filler | python3 scripts/fill.py",
    "cd /skills/filler & python3 scripts/fill.py",
    "git log || cd /skills/filler && python3 scripts/fill.py",
    "cd /skills/filler && git log; python3 scripts/fill.py",
    "cd /skills/filler && git log || python3 scripts/fill.py",
    "cd /skills/filler && git log & python3 scripts/fill.py",
    "cd -P /skills/filler && python3 scripts/fill.py",
    "cd - && python3 scripts/fill.py",
    # shell state that could move the folder or the variable
    "cd /skills/filler && pushd /workspace && python3 scripts/fill.py",
    "cd /skills/filler && CDPATH=/workspace && python3 scripts/fill.py",
    "SKILL_DIR=/workspace; cd $SKILL_DIR && python3 scripts/fill.py",
    "cd /skills/filler && source x && python3 scripts/fill.py",
    "cd /skills/filler && { cd /workspace; } && python3 scripts/fill.py",
    # `$SKILL_DIR` that bash does not expand: a folder of that name in the workspace
    "cd '$SKILL_DIR' && python3 scripts/fill.py",
    "cd \\$SKILL_DIR && python3 scripts/fill.py",
    'cd "\\$SKILL_DIR" && python3 scripts/fill.py',
    "cd $'$SKILL_DIR' && python3 scripts/fill.py",
    "cd $$SKILL_DIR && python3 scripts/fill.py",
    "cd ${SKILL_DIR:-/workspace} && python3 scripts/fill.py",
    "python3 $SKILL_DIRX/scripts/fill.py",
    # words the kernel or the shell may read otherwise
    "python3 /skills/filler/scripts/../scripts/fill.py",
    "cd /skills/filler/scripts/.. && python3 scripts/fill.py",
    "cd ../skills/filler && python3 scripts/fill.py",
    "python3 /skills/filler/scripts/fil?.py",
    "python3 /skills/filler/scripts/{fill,x}.py",
    "python3 ~/scripts/fill.py",
    "python3 //skills/filler/scripts/fill.py",
    "cd /skills && cd filler && python3 scripts/fill.py",  # `cd /skills` needs a rule
    # a `cd` into the skill is not a rule by itself
    "cd /skills/filler",
    "cd /skills/filler && rm -rf x",
    "python3 /skills/filler/scripts/fill.py > x",
]


@pytest.mark.parametrize("command", PRE_APPROVED)
def test_the_skills_own_files_are_pre_approved(tmp_path: Path, command: str) -> None:
    found = decide(command, skill=skill(tmp_path), trusted=True, cwd="/workspace")
    assert found.decision == "pre-approved", found.reason


@pytest.mark.parametrize("command", ASKED)
def test_anything_else_asks(tmp_path: Path, command: str) -> None:
    found = decide(command, skill=skill(tmp_path), trusted=True, cwd="/workspace")
    assert found.decision == "ask", found.reason


def test_from_the_scratch_folder_too_and_restrict_refuses(tmp_path: Path) -> None:
    filler = skill(tmp_path)
    for cwd in ("/workspace", "/scratch"):
        assert (
            verdict(filler, "cd /skills/filler && python3 scripts/fill.py", cwd) == "pre-approved"
        )
        assert verdict(filler, "python3 scripts/fill.py", cwd) == "ask"
        refused = decide("python3 scripts/fill.py", skill=filler, trusted=True, cwd=cwd,
                         mode="restrict")  # fmt: skip
        assert refused.decision == "refused" and "restrict" in refused.reason
    untrusted = decide("python3 /skills/filler/scripts/fill.py", skill=filler, trusted=False)
    assert untrusted.decision == "ask" and "not trusted" in untrusted.reason


def test_a_rule_is_the_claimed_skills_and_runs_only_its_files(tmp_path: Path) -> None:
    filler = skill(tmp_path / "a")
    other = skill(tmp_path / "b", "other")
    assert verdict(filler, "python3 /skills/filler/scripts/fill.py") == "pre-approved"
    assert verdict(other, "python3 /skills/filler/scripts/fill.py") == "ask"  # filler's file
    # $SKILL_DIR is the claimed skill's folder: other's own file
    assert verdict(other, 'cd "$SKILL_DIR" && python3 scripts/fill.py') == "pre-approved"


def test_a_star_rule_naming_the_skills_files(tmp_path: Path) -> None:
    filler = skill(tmp_path, allowed="Bash(python3 scripts/*) Bash(bash run.sh *)")
    assert verdict(filler, "python3 /skills/filler/scripts/fill.py a b") == "pre-approved"
    assert verdict(filler, "cd /skills/filler && python3 scripts/fill.py") == "pre-approved"
    assert verdict(filler, "cd /skills/filler && bash run.sh") == "pre-approved"
    for command in (
        "python3 scripts/fill.py",
        "python3 /skills/filler/scripts/../../other/x.py",  # `*` over `..`
        "python3 /skills/other/scripts/fill.py",
        "bash run.sh x",
    ):
        assert verdict(filler, command) == "ask", command


def test_a_bare_name_is_a_file_of_the_skill_only_when_the_skill_has_it(tmp_path: Path) -> None:
    filler = skill(tmp_path, allowed="Bash(python3 fill.py) Bash(cat notes.txt)")
    write_files(filler.root, {"fill.py": ""})
    assert verdict(filler, "python3 fill.py") == "ask"
    assert verdict(filler, "python3 /skills/filler/fill.py") == "pre-approved"
    assert verdict(filler, "cat notes.txt") == "pre-approved"  # a plain word
    write_files(filler.root, {"notes.txt": ""})  # now it names the skill's notes
    assert verdict(filler, "cat notes.txt") == "ask"
    assert verdict(filler, "cat /skills/filler/notes.txt") == "pre-approved"


def test_rule_paths_that_leave_the_skill_match_nothing(tmp_path: Path) -> None:
    filler = skill(tmp_path, allowed="Bash(python3 ../other/x.py) Bash(python3 $SKILL_DIR/x.py)")
    for command in ("python3 /skills/other/x.py", "cd /skills/filler && python3 ../other/x.py"):
        assert verdict(filler, command) == "ask"
    assert verdict(filler, "python3 /skills/filler/x.py") == "pre-approved"


def test_a_path_the_skill_does_not_have_is_the_projects(tmp_path: Path) -> None:
    filler = skill(
        tmp_path,
        allowed="Bash(./gradlew build:*) Bash(npx @playwright/test:*) "
        "Bash(curl https://example.com/api:*) Bash(python3 scripts/missing.py)",
    )
    for command in ("./gradlew build", "npx @playwright/test", "curl https://example.com/api"):
        assert verdict(filler, command) == "pre-approved", command
    assert verdict(filler, "python3 scripts/missing.py") == "ask"  # the skill has scripts/
    assert verdict(filler, "python3 /skills/filler/scripts/missing.py") == "pre-approved"


def test_without_a_skill_a_path_rule_matches_nothing() -> None:
    rules = parse_allowed_tools("Bash(python3 scripts/fill.py:*) Bash(git:*)")
    assert not match_command(rules, "python3 scripts/fill.py").matched
    assert not match_command(rules, "python3 /skills/x/scripts/fill.py").matched
    assert match_command(rules, "git log").matched
    assert match_command(parse_allowed_tools("Bash(python -c:*)"), "python3 -c 1").matched
