"""Real git repositories for the install tests: made with `git init` and `git commit`
in the test's folder and served as `file://` URLs, so no test touches the network."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import write_files


def git(repo: Path, *args: str, input: str | None = None) -> str:
    """`git ARGS` in `repo` with a fixed identity (and `input` on stdin); its stdout."""
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=repo,
        input=input,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def skill_md(name: str, description: str = "A test skill.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n"


def make_repo(root: Path, files: dict[str, str], *, tag: str | None = None) -> Path:
    """A repository at `root` whose first commit holds `files`; tagged `tag` if given."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    return commit(root, files, tag=tag)


def commit(root: Path, files: dict[str, str], *, tag: str | None = None) -> Path:
    """`files` written and committed (every change in the work tree is taken)."""
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "change", "--allow-empty")
    if tag:
        git(root, "tag", tag)
    return root


def url(repo: Path) -> str:
    return repo.resolve().as_uri()
