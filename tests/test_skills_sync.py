"""`skillchat skills sync`: a teammate with only the project's committed lock gets
the same bytes; `--frozen` refuses anything else."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from git_repos import commit, git, make_repo, skill_md, url
from helpers import one_line_error, skillchat

FILES = {
    "skills/pdf/SKILL.md": skill_md("pdf", extra="allowed-tools: Bash(ls)\n"),
    "skills/pdf/scripts/fill.py": "print('fill')\n",
    "skills/docx/SKILL.md": skill_md("docx"),
}


def installed_by_teammate(tmp_path: Path) -> tuple[Path, Path]:
    """The author installs two skills at a tag into the project; the teammate's
    clone has the lock and no skills. Both projects' `.agents` folders."""
    # Inside the teammate's clone: a project's lock copies nothing from outside it.
    repo = make_repo(tmp_path / "teammate" / "src", FILES, tag="v1")
    os.chmod(repo / "skills" / "pdf" / "scripts" / "fill.py", 0o755)
    commit(repo, {}, tag="v2")
    commit(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "After v2.")})  # the branch moves on
    author = tmp_path / "author"
    author.mkdir()
    done = skillchat(
        "skills", "add", url(repo), "--all", "--ref", "v2", "--project", "--yes", cwd=author
    )
    assert done.returncode == 0, done.stderr
    teammate = tmp_path / "teammate" / ".agents"
    teammate.mkdir(parents=True)
    shutil.copy(author / ".agents" / "skills.lock", teammate / "skills.lock")
    return author / ".agents", teammate


def files_of(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_sync_frozen_reproduces_an_install_byte_for_byte(tmp_path: Path) -> None:
    author, teammate = installed_by_teammate(tmp_path)
    done = skillchat("skills", "sync", "--project", "--frozen", cwd=teammate.parent)
    assert done.returncode == 0, done.stderr
    read = f"lock: {teammate / 'skills.lock'}"  # the project's: the user-level lock is empty
    assert done.stdout.splitlines() == [read, "docx: installed", "pdf: installed"]
    assert files_of(teammate / "skills") == files_of(author / "skills")
    lock = json.loads((teammate / "skills.lock").read_text())
    assert lock == json.loads((author / "skills.lock").read_text())
    listed = skillchat("skills", "list", cwd=teammate.parent)  # came with the project:
    assert "pdf\tA test skill.\tuntrusted" in listed.stdout.splitlines()  # read, then trust
    # --yes as add and update take it (a script passes the same flags): sync never asks
    again = skillchat("skills", "sync", "--project", "--frozen", "--yes", cwd=teammate.parent)
    assert again.stdout.splitlines() == [read, "docx: in place", "pdf: in place"], again.stderr


def test_sync_frozen_fails_when_the_locked_commit_is_gone(tmp_path: Path) -> None:
    _, teammate = installed_by_teammate(tmp_path)
    shutil.rmtree(teammate.parent / "src")  # history rewritten: same files, other commits
    repo = make_repo(teammate.parent / "src", {**FILES, "NEWS": "rewritten\n"})
    os.chmod(repo / "skills" / "pdf" / "scripts" / "fill.py", 0o755)  # the same files
    commit(repo, {}, tag="v2")
    line = one_line_error(skillchat("skills", "sync", "--project", "--frozen", cwd=teammate.parent))
    assert line.startswith("skillchat: error: docx: ") and "no branch, tag or commit '" in line
    assert not (teammate / "skills").exists() or not any((teammate / "skills").iterdir())
    done = skillchat("skills", "sync", "--project", cwd=teammate.parent)  # not frozen: the ref
    assert done.returncode == 0, done.stderr
    assert (
        "pdf: installed (commit" in done.stdout
        and "is gone from the source; took v2" in done.stdout
    )
    lock = json.loads((teammate / "skills.lock").read_text())
    assert lock["skills"]["pdf"]["commit"] == git(repo, "rev-parse", "v2^{commit}")


def test_sync_frozen_fails_when_the_files_hash_differently(tmp_path: Path) -> None:
    _, teammate = installed_by_teammate(tmp_path)
    doc = json.loads((teammate / "skills.lock").read_text())
    doc["skills"]["pdf"]["digest"] = "0" * 64
    (teammate / "skills.lock").write_text(json.dumps(doc))
    line = one_line_error(skillchat("skills", "sync", "--project", "--frozen", cwd=teammate.parent))
    assert "pdf: the source's files hash differently from the lock" in line
    assert not (teammate / "skills").exists() or not any((teammate / "skills").iterdir())


def test_update_shows_script_and_allowed_tools_changes_then_swaps_and_relocks(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "src", FILES)
    assert skillchat("skills", "add", url(repo), "pdf", "--project", "--yes").returncode == 0
    same = skillchat("skills", "update", "--project")
    assert same.returncode == 0 and "pdf: up to date" in same.stdout
    commit(
        repo,
        {
            "skills/pdf/SKILL.md": skill_md("pdf", extra="allowed-tools: Bash(rm)\n"),
            "skills/pdf/scripts/wipe.sh": "rm -rf x\n",
            "skills/pdf/scripts/requirements.txt": "pyyaml\n",
        },
    )
    asked = skillchat("skills", "update", "--project")  # not a terminal, no --yes: shown only
    assert "not a terminal" in one_line_error(asked)
    for shown in (
        "+ scripts/wipe.sh",
        "~ SKILL.md",
        "new script: scripts/wipe.sh",
        "allowed-tools: Bash(ls) -> Bash(rm)",
        "packages: none declared -> pyyaml",
    ):
        assert shown in asked.stdout
    installed = Path.cwd() / ".agents" / "skills" / "pdf"
    assert not (installed / "scripts" / "wipe.sh").exists()
    done = skillchat("skills", "update", "pdf", "--project", "--yes")
    assert done.returncode == 0, done.stderr
    assert (installed / "scripts" / "wipe.sh").is_file()
    lock = json.loads((installed.parent.parent / "skills.lock").read_text())["skills"]["pdf"]
    assert lock["commit"] == git(repo, "rev-parse", "HEAD")
    assert "scripts/wipe.sh" in lock["files"]
    listed = skillchat("skills", "list")
    assert "pdf\tA test skill.\ttrusted" in listed.stdout.splitlines()
    assert skillchat("skills", "verify", "--project").returncode == 0
