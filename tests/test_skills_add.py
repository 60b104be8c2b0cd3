"""`skillchat skills add` as a user runs it, against real git repositories on disk:
what it installs and locks, and what a hostile repository cannot make it do."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from git_repos import commit, git, make_repo, skill_md, url
from helpers import one_line_error, skillchat, wait_for

from skillchat.skills.content_hash import content_hash

REPO = Path(__file__).resolve().parents[1]
PDF = {
    "skills/pdf/SKILL.md": skill_md("pdf", extra="license: MIT\nallowed-tools: Bash(ls)\n"),
    "skills/pdf/scripts/fill.py": "print('fill')\n",
}


def user_skills() -> Path:
    return Path(os.environ["HOME"]) / ".agents" / "skills"


def lock_of(folder: Path) -> dict[str, Any]:
    return json.loads((folder.parent / "skills.lock").read_text())["skills"]


def test_one_skill_is_shown_installed_and_locked_to_its_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    head = git(repo, "rev-parse", "HEAD")
    for shown in (
        "pdf — A test skill.",
        "2 files",
        "licence: MIT",
        "scripts/fill.py",
        "allowed-tools: Bash(ls)",
        head,
    ):
        assert shown in done.stdout
    installed = user_skills() / "pdf"
    record = lock_of(user_skills())["pdf"]
    assert (record["source"], record["ref"], record["commit"], record["path"]) == (
        url(repo),
        None,
        head,
        "skills/pdf",
    )
    assert record["digest"] == content_hash(installed)  # the very hash trust uses
    fill = (installed / "scripts" / "fill.py").read_bytes()
    assert record["files"]["scripts/fill.py"] == hashlib.sha256(fill).hexdigest()
    listed = skillchat("skills", "list")
    assert "pdf\tA test skill.\tuser-level" in listed.stdout.splitlines()


def test_the_summary_names_the_packages_the_scripts_declare(tmp_path: Path) -> None:
    files = {
        **PDF,
        "skills/pdf/scripts/requirements.txt": "pypdf==5.1.0\n",
        "skills/pdf/scripts/chart.py": (
            "# /// script\n# dependencies = ['matplotlib']\n# ///\nprint('chart')\n"
        ),
    }
    done = skillchat("skills", "add", url(make_repo(tmp_path / "src", files)), "--yes")
    assert done.returncode == 0, done.stderr
    assert "packages: pypdf==5.1.0, matplotlib" in done.stdout
    bad = {**PDF, "skills/pdf/requirements.txt": "-e git+https://example.org/x.git\n"}
    refused = skillchat("skills", "add", url(make_repo(tmp_path / "bad", bad)), "--yes")
    assert "packages: refused:" in refused.stdout


@pytest.mark.parametrize("kind", ["tag", "branch", "commit"])
def test_shorthand_with_a_path_and_a_ref_through_the_base_override(
    tmp_path: Path, kind: str
) -> None:
    """owner/repo/path@ref, with SKILLCHAT_GITHUB_BASE pointing at a local folder."""
    repo = make_repo(tmp_path / "gh" / "acme" / "tools", PDF, tag="v1")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "stable")
    commit(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.")})
    ref = {"tag": "v1", "branch": "stable", "commit": first}[kind]
    env = {**os.environ, "SKILLCHAT_GITHUB_BASE": (tmp_path / "gh").as_uri()}
    done = skillchat("skills", "add", f"acme/tools/skills/pdf@{ref}", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert "A test skill." in (user_skills() / "pdf" / "SKILL.md").read_text()
    record = lock_of(user_skills())["pdf"]
    assert (record["ref"], record["commit"]) == (ref, first)


def test_a_repository_of_many_installs_named_skills_or_all(tmp_path: Path) -> None:
    files = {f"skills/{n}/SKILL.md": skill_md(n) for n in ("alpha", "beta", "gamma")}
    repo = make_repo(tmp_path / "src", files)
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "3 skills (alpha, beta, gamma)" in line and "--all" in line
    assert not user_skills().exists()
    done = skillchat("skills", "add", url(repo), "alpha", "gamma", "--yes")
    assert done.returncode == 0, done.stderr
    assert sorted(lock_of(user_skills())) == ["alpha", "gamma"]
    assert skillchat("skills", "add", url(repo), "--all", "--yes").returncode == 1  # collision
    assert skillchat("skills", "add", url(repo), "beta", "--yes").returncode == 0
    assert sorted(p.name for p in user_skills().iterdir()) == ["alpha", "beta", "gamma"]


def test_project_install_is_trusted_and_locked_beside_its_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    done = skillchat("skills", "add", url(repo), "--project", "--yes")
    assert done.returncode == 0, done.stderr
    assert "pdf" in lock_of(Path.cwd() / ".agents" / "skills")
    listed = skillchat("skills", "list")
    assert "pdf\tA test skill.\ttrusted" in listed.stdout.splitlines()


def test_local_folder_is_copied_and_locked_without_a_commit(tmp_path: Path) -> None:
    make_repo(tmp_path / "src", PDF)
    done = skillchat("skills", "add", str(tmp_path / "src"), "--path", "skills", "--yes")
    assert done.returncode == 0, done.stderr
    assert lock_of(user_skills())["pdf"]["commit"] is None
    assert (user_skills() / "pdf" / "scripts" / "fill.py").is_file()


def test_hooks_filters_submodules_and_lfs_do_not_run_or_fetch(tmp_path: Path) -> None:
    """The user's own git config defines a filter and hooks that would leave a mark;
    the repository asks for the filter, holds a submodule and an LFS pointer."""
    mark = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-merge", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {mark}\n")
        (hooks / hook).chmod(0o755)
    Path(os.environ["HOME"], ".gitconfig").write_text(
        f'[core]\n\thooksPath = {hooks}\n[filter "evil"]\n'
        f"\tsmudge = sh -c 'echo smudge >> {mark}; cat'\n\tclean = cat\n\trequired = true\n"
    )
    lfs = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n"
    repo = make_repo(
        tmp_path / "src", {**PDF, ".gitattributes": "* filter=evil\n", "skills/pdf/data.bin": lfs}
    )
    sub = make_repo(tmp_path / "sub", {"x": "y"})
    git(
        repo,
        "update-index",
        "--add",
        "--cacheinfo",
        f"160000,{git(sub, 'rev-parse', 'HEAD')},skills/pdf/vendor",
    )
    git(repo, "commit", "-qm", "submodule")
    mark.unlink(missing_ok=True)  # the filter ran for the test's own commits
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    assert not mark.exists(), mark.read_text()
    assert "skills/pdf/vendor (a submodule, not fetched)" in done.stdout
    assert "data.bin is a Git LFS pointer" in done.stdout
    assert (user_skills() / "pdf" / "data.bin").read_text() == lfs
    assert not (user_skills() / "pdf" / "vendor").exists()


def test_hidden_and_bidi_characters_are_shown_escaped(tmp_path: Path) -> None:
    md = skill_md("pdf", "Safe\u202e.").replace("# pdf", "# p\u200bdf")
    repo = make_repo(tmp_path / "src", {"pdf/SKILL.md": md, "pdf/scripts/a.sh": "l\u2066s\n"})
    done = skillchat("skills", "add", url(repo), "--yes")
    assert done.returncode == 0, done.stderr
    assert "SKILL.md has hidden or bidirectional characters: U+200B, U+202E" in done.stdout
    assert "scripts/a.sh has hidden or bidirectional characters: U+2066" in done.stdout
    assert "\u202e" not in done.stdout and "\u200b" not in done.stdout


def test_a_symlink_out_of_the_skill_is_refused_and_nothing_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    os.symlink("../../../secret", repo / "skills" / "pdf" / "key")
    commit(repo, {})
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "symlink" in line and "nothing installed" in line
    assert not user_skills().exists()


def test_a_file_over_the_limit_is_refused_before_it_is_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    (repo / "skills" / "pdf" / "big.bin").write_bytes(b"\0" * 10_000_001)
    commit(repo, {})
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "big.bin: 10,000,001 bytes, over the 10,000,000 limit" in line
    assert not user_skills().exists()


def test_a_name_already_installed_is_never_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    before = lock_of(user_skills())
    commit(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Replaced.")})
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "'pdf' is already installed" in line
    assert lock_of(user_skills()) == before
    assert "A test skill." in (user_skills() / "pdf" / "SKILL.md").read_text()


@pytest.mark.parametrize(
    "given",
    [
        ["acme/tools/../../etc@v1"],
        ["acme/tools", "--path", "../x"],
        ["acme/tools", "--path", "/etc"],
        ["acme/tools/.git/x"],
    ],
)
def test_a_path_that_leaves_the_repository_is_refused(given: list[str]) -> None:
    line = one_line_error(skillchat("skills", "add", *given, "--yes"))
    assert "not allowed in a path" in line or "is relative" in line


def test_a_ref_that_does_not_exist_fails_in_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    line = one_line_error(skillchat("skills", "add", url(repo), "--ref", "v9", "--yes"))
    assert "no branch, tag or commit 'v9'" in line


@pytest.fixture()
def asks_for_a_password() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that answers every request 401, as a private
    repository does; its base URL."""

    class Deny(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_credentials_prompt_fails_in_one_line_instead_of_hanging(
    asks_for_a_password: str,
) -> None:
    done = skillchat("skills", "add", f"{asks_for_a_password}/acme/tools", "--yes", timeout=60)
    line = one_line_error(done)
    assert "git fetch:" in line and ("Authentication" in line or "could not read" in line)


def test_ctrl_c_at_the_question_leaves_nothing_behind(
    tmp_path: Path, pty_sessions: Callable[..., Any]
) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    session = pty_sessions("skills", "add", url(repo), env={"TMPDIR": str(tmp)})
    session.expect("Install and trust 1 skill into")
    session.interrupt()
    assert session.wait() == 130
    assert not user_skills().exists() or not any(user_skills().iterdir())
    assert not (user_skills().parent / "skills.lock").exists()
    assert list(tmp.iterdir()) == []  # the fetched copy is gone too


@pytest.fixture()
def holds_the_fetch() -> Iterator[tuple[str, threading.Event]]:
    """An HTTP server on 127.0.0.1 that takes git's first request and never answers
    it (a slow or hung remote); its base URL, and an event set once a request came."""
    arrived = threading.Event()
    release = threading.Event()

    class Hold(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            arrived.set()
            release.wait(120)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hold)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", arrived
    release.set()
    server.shutdown()


def test_ctrl_c_in_the_middle_of_the_fetch_leaves_nothing_behind(
    tmp_path: Path, holds_the_fetch: tuple[str, threading.Event]
) -> None:
    base, arrived = holds_the_fetch
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = subprocess.Popen(  # a real process: its Ctrl-C is the subject
        [sys.executable, "-m", "skillchat", "skills", "add", f"{base}/acme/tools", "--yes"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert arrived.wait(60), "git never reached the server"
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Traceback" not in err
    assert not user_skills().exists() or not any(user_skills().iterdir())
    assert not (user_skills().parent / "skills.lock").exists()
    assert list(tmp.iterdir()) == []  # the half-fetched repository is gone too


def test_two_installs_at_once_give_one_skill_and_one_clear_refusal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    cmd = [sys.executable, "-m", "skillchat", "skills", "add", url(repo), "--yes"]
    runs = [
        subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    assert wait_for(lambda: all(r.poll() is not None for r in runs), timeout=120)
    codes = sorted(r.returncode for r in runs)
    errors = "".join(r.communicate()[1] for r in runs)
    assert codes == [0, 1], errors
    assert "already installed" in errors
    assert list(lock_of(user_skills())) == ["pdf"]
    assert content_hash(user_skills() / "pdf") == lock_of(user_skills())["pdf"]["digest"]


def test_a_crafted_tree_with_a_file_under_a_symlink_is_refused(tmp_path: Path) -> None:
    """A tree no `git add` makes: `scripts` both a symlink out and a folder holding
    a file. Writing the file would follow the link; the fetch refuses the tree."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = make_repo(tmp_path / "src", {"README": "x\n"})

    def obj(data: str) -> str:
        return git(repo, "hash-object", "-w", "--stdin", input=data)

    sub = git(repo, "mktree", input=f"100644 blob {obj('print(1)')}\tevil.py\n")
    pdf = git(
        repo,
        "mktree",
        input=f"100644 blob {obj(skill_md('pdf'))}\tSKILL.md\n"
        f"120000 blob {obj(str(outside))}\tscripts\n040000 tree {sub}\tscripts\n",
    )
    top = git(repo, "mktree", input=f"040000 tree {pdf}\tpdf\n")
    git(repo, "update-ref", "HEAD", git(repo, "commit-tree", top, "-m", "crafted"))
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes"))
    assert "duplicateEntries" in line
    assert list(outside.iterdir()) == [] and not user_skills().exists()


def test_a_download_over_the_bound_is_stopped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "src", PDF)
    (repo / "skills" / "pdf" / "noise.bin").write_bytes(os.urandom(3_000_000))
    commit(repo, {})
    env = {**os.environ, "SKILLCHAT_MAX_DOWNLOAD_BYTES": "1000000"}
    line = one_line_error(skillchat("skills", "add", url(repo), "--yes", env=env))
    assert "the download passed 1,000,000 bytes: stopped" in line
    assert not user_skills().exists()
