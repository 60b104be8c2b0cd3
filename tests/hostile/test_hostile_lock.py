"""Hostile repositories, projects and locks against `skills add`, `sync`, `update`
and `verify`: real git repositories made in the test's folder, the real command."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from git_repos import commit, git, make_repo, skill_md, url
from helpers import one_line_error, skillchat, skillchat_peak, write_files

PDF = {
    "skills/pdf/SKILL.md": skill_md("pdf"),
    "skills/pdf/scripts/fill.py": "print('fill')\n",
}


def home_skills() -> Path:
    return Path(os.environ["HOME"]) / ".agents" / "skills"


def locked(project: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((project / ".agents" / "skills.lock").read_text())
    return doc


def project_with_lock(tmp_path: Path, files: dict[str, str] = PDF) -> tuple[Path, Path]:
    """A repository, and a project (a temp folder) with `pdf` installed from it with
    `--project`: the source and the project."""
    repo = make_repo(tmp_path / "src", files)
    project = tmp_path / "project"
    project.mkdir()
    done = skillchat("skills", "add", url(repo), "--project", "--yes", cwd=project)
    assert done.returncode == 0, done.stderr
    return repo, project


def cloned(project: Path, dest: Path) -> Path:
    """What a teammate's clone of `project` has: its lock, no skills."""
    (dest / ".agents").mkdir(parents=True)
    shutil.copy(project / ".agents" / "skills.lock", dest / ".agents" / "skills.lock")
    return dest


# --- a project install stays in the project -----------------------------------------


@pytest.mark.parametrize("link", [".agents", ".agents/skills"])
def test_sync_through_a_symlinked_skills_folder_is_refused(tmp_path: Path, link: str) -> None:
    """A clone whose `.agents` (or `.agents/skills`) is a symlink into the home, as
    git keeps symlinks: a project sync would land trusted user-level skills."""
    _, project = project_with_lock(tmp_path)
    clone = cloned(project, tmp_path / "clone")
    home_skills().mkdir(parents=True)
    if link == ".agents":
        shutil.copy(clone / ".agents" / "skills.lock", home_skills().parent / "skills.lock")
        shutil.rmtree(clone / ".agents")
        os.symlink(home_skills().parent, clone / ".agents")
    else:
        os.symlink(home_skills(), clone / ".agents" / "skills")
    line = one_line_error(skillchat("skills", "sync", "--project", cwd=clone))
    assert "symlink" in line and link in line
    assert list(home_skills().iterdir()) == []


@pytest.mark.parametrize("command", ["add", "update"])
def test_add_and_update_through_a_symlinked_agents_folder_are_refused(
    tmp_path: Path, command: str
) -> None:
    repo, project = project_with_lock(tmp_path)
    outside = tmp_path / "outside"
    shutil.move(project / ".agents", outside)
    os.symlink(outside, project / ".agents")
    commit(
        repo,
        {
            "skills/pdf/SKILL.md": skill_md("pdf", "Newer."),
            "skills/docx/SKILL.md": skill_md("docx"),
        },
    )
    before = sorted(p.name for p in (outside / "skills").iterdir())
    args = [url(repo), "docx"] if command == "add" else ["pdf"]
    line = one_line_error(skillchat("skills", command, *args, "--project", "--yes", cwd=project))
    assert "symlink" in line and ".agents" in line
    assert sorted(p.name for p in (outside / "skills").iterdir()) == before
    assert "A test skill." in (outside / "skills" / "pdf" / "SKILL.md").read_text()


def test_update_reads_nothing_through_a_symlinked_skill_folder(tmp_path: Path) -> None:
    """A clone's `.agents/skills/pdf` that is a link to a folder of the user's: the
    update's summary must not show what that folder holds, and the swap replaces
    the link, never the folder it points at."""
    repo, project = project_with_lock(tmp_path)
    private = write_files(
        tmp_path / "private",
        {
            "SKILL.md": skill_md("pdf", extra="allowed-tools: Bash(secret-tool)\n"),
            "scripts/requirements.txt": "secretpkg\n",
        },
    )
    shutil.rmtree(project / ".agents" / "skills" / "pdf")
    os.symlink(private, project / ".agents" / "skills" / "pdf")
    commit(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.")})
    shown = skillchat("skills", "update", "--project", cwd=project)
    assert "not a terminal" in one_line_error(shown)
    assert "secret" not in shown.stdout and "edited here since installed" in shown.stdout
    done = skillchat("skills", "update", "--project", "--yes", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / ".agents" / "skills" / "pdf").is_symlink()
    assert "secret-tool" in (private / "SKILL.md").read_text()


# --- lock names and records ------------------------------------------------------------


def _renamed(project: Path, name: str) -> None:
    path = project / ".agents" / "skills.lock"
    doc = json.loads(path.read_text())
    doc["skills"][name] = doc["skills"].pop("pdf")
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("name", ["../../outside/evil", "a/b", "..", "Evil"])
@pytest.mark.parametrize("command", ["update", "sync", "verify"])
def test_a_lock_name_that_is_not_a_skill_name_is_one_line(
    tmp_path: Path, name: str, command: str
) -> None:
    repo, project = project_with_lock(tmp_path)
    commit(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.")})
    (tmp_path / "outside").mkdir()
    _renamed(project, name)
    if command == "sync":
        shutil.rmtree(project / ".agents" / "skills")
    flags = ["--yes"] if command == "update" else []
    line = one_line_error(skillchat("skills", command, "--project", *flags, cwd=project))
    assert "skills.lock" in line and "not a skill name" in line and json.dumps(name) in line
    assert list((tmp_path / "outside").iterdir()) == []
    assert not home_skills().exists()


@pytest.mark.parametrize(
    "field, value",
    [("source", 5), ("path", None), ("commit", ["x"]), ("files", {"a": 1}), ("ref", {})],
)
def test_a_lock_record_of_the_wrong_shape_is_one_line(
    tmp_path: Path, field: str, value: object
) -> None:
    _, project = project_with_lock(tmp_path)
    path = project / ".agents" / "skills.lock"
    doc = json.loads(path.read_text())
    doc["skills"]["pdf"][field] = value
    path.write_text(json.dumps(doc))
    shutil.rmtree(project / ".agents" / "skills")
    line = one_line_error(skillchat("skills", "sync", "--project", cwd=project))
    assert "not a skills lock skillchat can read" in line


def test_a_lock_nested_past_the_parser_is_one_line(tmp_path: Path) -> None:
    """A project's lock is read at every start in the project: JSON nested deeper
    than Python's parser goes must not crash `skills list` or `verify`."""
    _, project = project_with_lock(tmp_path)
    (project / ".agents" / "skills.lock").write_text("[" * 200_000 + "]" * 200_000)
    line = one_line_error(skillchat("skills", "verify", cwd=project))
    assert "not a skills lock skillchat can read" in line
    listed = skillchat("skills", "list", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert "pdf: its lock cannot be read" in listed.stderr


def test_a_lock_source_that_is_neither_a_url_nor_a_folder_is_refused(tmp_path: Path) -> None:
    """git takes a relative path for a folder relative to where it runs: a hand-made
    source climbing from the fetch's temp folder reaches any repository on disk."""
    repo, project = project_with_lock(tmp_path)
    path = project / ".agents" / "skills.lock"
    doc = json.loads(path.read_text())
    doc["skills"]["pdf"]["source"] = "../" * 30 + str(repo).lstrip("/")
    path.write_text(json.dumps(doc))
    shutil.rmtree(project / ".agents" / "skills")
    line = one_line_error(skillchat("skills", "sync", "--project", cwd=project))
    assert "neither a git URL nor a folder" in line
    assert not (project / ".agents" / "skills" / "pdf").exists()


# --- crafted repositories --------------------------------------------------------------


def _crafted(repo: Path, pdf_entries: str) -> None:
    """HEAD of `repo` made a commit whose tree is `pdf/` holding a SKILL.md and
    `pdf_entries` (mktree lines), as no `git add` would make it."""
    pdf = git(
        repo,
        "mktree",
        input=f"100644 blob {_blob(repo, skill_md('pdf'))}\tSKILL.md\n" + pdf_entries,
    )
    top = git(repo, "mktree", input=f"040000 tree {pdf}\tpdf\n")
    git(repo, "update-ref", "HEAD", git(repo, "commit-tree", top, "-m", "crafted"))


def _blob(repo: Path, data: str) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data)


@pytest.mark.parametrize("target", ["a\0b", "x" * 6000], ids=["nul", "6000-chars"])
def test_a_symlink_git_cannot_make_is_refused_naming_the_skill(tmp_path: Path, target: str) -> None:
    repo = make_repo(tmp_path / "src", {"README": "x\n"})
    _crafted(repo, f"120000 blob {_blob(repo, target)}\tlink\n")
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert line.startswith("skillchat: error: pdf: link: ") and "symlink" in line
    assert not home_skills().exists()


def test_two_skill_folders_with_one_name_are_refused_under_all(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "src",
        {"a/pdf/SKILL.md": skill_md("pdf"), "b/pdf/SKILL.md": skill_md("pdf", "Other.")},
    )
    for args in (["--all"], ["pdf"]):
        line = one_line_error(skillchat("skills", "add", url(repo), *args, "--yes"))
        assert "more than one skill named 'pdf'" in line and "a/pdf" in line and "b/pdf" in line
    assert not home_skills().exists()
    done = skillchat("skills", "add", url(repo), "--path", "b", "pdf", "pdf", "--yes")
    assert done.returncode == 0, done.stderr  # named twice: installed once
    assert "Other." in (home_skills() / "pdf" / "SKILL.md").read_text()


def test_a_repository_of_thousands_of_skills_is_one_short_line(tmp_path: Path) -> None:
    """19,999 skill folders (one tree reused): found in one pass, and the line that
    asks which to install names a few, not all."""
    repo = make_repo(tmp_path / "src", {"README": "x\n"})
    skill = git(repo, "mktree", input=f"100644 blob {_blob(repo, skill_md('s'))}\tSKILL.md\n")
    top = git(repo, "mktree", input="".join(f"040000 tree {skill}\ts{i}\n" for i in range(19_999)))
    git(repo, "update-ref", "HEAD", git(repo, "commit-tree", top, "-m", "many"))
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "the source holds 19999 skills (s0, s1, s10, " in line
    assert "more)" in line and len(line) < 1_000
    assert not home_skills().exists()


def _tree_bomb(repo: Path, fanout: int = 10, depth: int = 6) -> None:
    """A commit of a few KB whose tree lists fanout**depth files: one tree reused
    `fanout` times at each level."""
    tree = git(repo, "mktree", input="".join(
        f"100644 blob {_blob(repo, 'x')}\tf{i}\n" for i in range(fanout)
    ))  # fmt: skip
    for _ in range(depth - 1):
        tree = git(
            repo, "mktree", input="".join(f"040000 tree {tree}\td{i}\n" for i in range(fanout))
        )
    skill = git(repo, "mktree", input=f"100644 blob {_blob(repo, skill_md('pdf'))}\tSKILL.md\n")
    top = git(repo, "mktree", input=f"040000 tree {tree}\tbomb\n040000 tree {skill}\tpdf\n")
    git(repo, "update-ref", "HEAD", git(repo, "commit-tree", top, "-m", "bomb"))


def test_a_tree_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A million entries from a few KB of objects: the listing is read as git writes
    it and stopped at the bound. A real process, as its memory is the subject."""
    repo = make_repo(tmp_path / "src", {"README": "x\n"})
    _tree_bomb(repo)
    done, peak = skillchat_peak("skills", "add", url(repo), "pdf", "--yes")
    line = one_line_error(done)
    assert "more than 20,000 entries" in line and "--path" in line
    assert peak < 200_000, f"{peak} KiB at most"
    assert not home_skills().exists()


# --- what a repository may hold ----------------------------------------------------


def test_git_files_of_a_real_repository_install_but_never_dot_git(tmp_path: Path) -> None:
    files = {
        **PDF,
        "skills/pdf/.gitignore": "*.pyc\n",
        "skills/pdf/.gitattributes": "* text=auto\n",
        "skills/pdf/.github/workflows/ci.yml": "on: push\n",
    }
    repo = make_repo(tmp_path / "src", files)
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    for rel in (".gitignore", ".gitattributes", ".github/workflows/ci.yml"):
        assert (home_skills() / "pdf" / rel).read_text() == files[f"skills/pdf/{rel}"]
    local = write_files(
        tmp_path / "local" / "docx", {"SKILL.md": skill_md("docx"), ".gitignore": "x\n"}
    )
    git(local, "init", "-q")
    done = skillchat("skills", "add", str(local), "--yes")
    assert done.returncode == 0, done.stderr
    assert (home_skills() / "docx" / ".gitignore").exists()
    assert not (home_skills() / "docx" / ".git").exists()


def test_hidden_characters_are_reported_in_every_text_file(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "src", {**PDF, "skills/pdf/references/guide.md": "run rm\u202e -rf\n"}
    )
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    assert "references/guide.md has hidden or bidirectional characters: U+202E" in done.stdout


def test_a_project_lock_may_not_copy_a_local_folder_from_outside_the_project(
    tmp_path: Path,
) -> None:
    """A lock that came with a project names a folder of the user's (their private
    skills): sync would copy it into the project."""
    private = write_files(tmp_path / "private" / "secret", {"SKILL.md": skill_md("secret")})
    author = tmp_path / "author"
    author.mkdir()
    done = skillchat("skills", "add", str(private), "--project", "--yes", cwd=author)
    assert done.returncode == 0, done.stderr
    clone = cloned(author, tmp_path / "clone")
    line = one_line_error(skillchat("skills", "sync", "--project", cwd=clone))
    assert "secret" in line and "outside the project" in line
    assert not (clone / ".agents" / "skills" / "secret").exists()
    inside = write_files(clone / "vendor" / "mine", {"SKILL.md": skill_md("mine")})
    done = skillchat("skills", "add", str(inside), "--project", "--yes", cwd=clone)
    assert done.returncode == 0, done.stderr


# --- verify where the command runs ----------------------------------------------------


def test_verify_reads_the_project_lock_where_it_runs(tmp_path: Path) -> None:
    _, project = project_with_lock(tmp_path)
    (project / ".agents" / "skills" / "pdf" / "scripts" / "fill.py").write_text("evil\n")
    done = skillchat("skills", "verify", cwd=project)
    assert done.returncode == 1
    lock = project / ".agents" / "skills.lock"
    assert f"lock: {lock}" in done.stdout.splitlines()
    assert "pdf\tchanged since installed: ~ scripts/fill.py" in done.stdout
    doc = json.loads(skillchat("skills", "verify", "--json", cwd=project).stdout)
    assert doc["ok"] is False and str(lock) in doc["locks"]
