"""The lock at every load: an installed skill that changed (a file edited, added or
deleted, a folder swapped for a symlink, the lock itself broken) is reported in one
line, shown as changed since installed, and untrusted until accepted or reinstalled;
`skills verify` says the same for CI, and `skills remove` takes one out."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from git_repos import make_repo, skill_md, url
from helpers import one_line_error, skillchat
from openai_server import ScriptedServer, reply

FILES = {
    "pdf/SKILL.md": skill_md("pdf", extra="allowed-tools: Bash(ls)\n"),
    "pdf/scripts/fill.py": "print('fill')\n",
    "pdf/scripts/lib/util.py": "X = 1\n",
}


def skills_dir(project: bool) -> Path:
    home = Path.cwd() if project else Path(os.environ["HOME"])
    return home / ".agents" / "skills"


@pytest.fixture(params=[False, True], ids=["user", "project"])
def installed(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """`pdf` installed from a real repository, user-level or in the project."""
    repo = make_repo(tmp_path / "src", FILES)
    flags = ["--project"] if request.param else []
    done = skillchat("skills", "add", url(repo), *flags, "--yes")
    assert done.returncode == 0, done.stderr
    return skills_dir(request.param) / "pdf"


def _edit(root: Path) -> None:
    (root / "scripts" / "fill.py").write_text("print('evil')\n")


def _add(root: Path) -> None:
    (root / "scripts" / "new.py").write_text("import os\n")


def _delete(root: Path) -> None:
    (root / "scripts" / "lib" / "util.py").unlink()


def _swap_for_symlink(root: Path) -> None:
    elsewhere = root.parent.parent / "elsewhere"
    shutil.move(root / "scripts", elsewhere)
    os.symlink(elsewhere, root / "scripts")


def _same_size_same_mtime(root: Path) -> None:
    """An edit that keeps size and mtime: the cheap check must still see it."""
    path = root / "scripts" / "fill.py"
    before = path.stat()
    path.write_text("print('lift')\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


TAMPERING = [_edit, _add, _delete, _swap_for_symlink, _same_size_same_mtime]


def trust_of(name: str, project: bool) -> str:
    done = skillchat("skills", "list", "--json")
    assert done.returncode == 0, done.stderr
    return next(s["trust"] for s in json.loads(done.stdout)["skills"] if s["name"] == name)


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda f: f.__name__.strip("_"))
def test_drift_is_reported_shown_and_untrusted(
    installed: Path, tamper: Callable[[Path], None]
) -> None:
    project = installed.parent == skills_dir(True)
    listed = skillchat("skills", "list")  # a first load that fills the stat cache
    assert listed.returncode == 0 and "changed since installed" not in listed.stderr
    tamper(installed)
    listed = skillchat("skills", "list")
    assert "pdf\tA test skill.\tdrifted" in listed.stdout.splitlines()
    warned = [line for line in listed.stderr.splitlines() if "changed since installed" in line]
    assert len(warned) == 1 and "untrusted until reinstalled or accepted" in warned[0]
    shown = skillchat("skills", "show", "pdf")
    assert "trust: changed since installed" in shown.stdout
    verify = skillchat("skills", "verify", *(["--project"] if project else []), "--json")
    assert verify.returncode == 1
    assert json.loads(verify.stdout)["skills"][0]["ok"] is False


def test_accepting_a_change_trusts_it_as_it_is_now(installed: Path) -> None:
    project = installed.parent == skills_dir(True)
    _edit(installed)
    assert trust_of("pdf", project) == "drifted"
    done = skillchat("skills", "trust", "pdf")
    assert done.returncode == 0, done.stderr
    assert trust_of("pdf", project) == "trusted"
    _add(installed)  # accepted content only: a further change is untrusted again
    assert trust_of("pdf", project) == "drifted"


def test_verify_names_each_change_and_passes_when_clean(installed: Path) -> None:
    flags = ["--project"] if installed.parent == skills_dir(True) else []
    lock = installed.parent.parent / "skills.lock"
    assert skillchat("skills", "verify", *flags).stdout == f"lock: {lock}\npdf\tok\n"
    _edit(installed)
    _add(installed)
    _delete(installed)
    done = skillchat("skills", "verify", *flags)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1:] == [
        "pdf\tchanged since installed: + scripts/new.py; - scripts/lib/util.py; ~ scripts/fill.py"
    ]


def test_a_lock_edited_by_hand(installed: Path) -> None:
    """A lock that still parses but names other bytes is drift; one that no longer
    parses vouches for nothing: every skill beside it is untrusted, verify fails."""
    project = installed.parent == skills_dir(True)
    lock = installed.parent.parent / "skills.lock"
    doc = json.loads(lock.read_text())
    doc["skills"]["pdf"]["digest"] = "0" * 64
    lock.write_text(json.dumps(doc))
    assert trust_of("pdf", project) == "drifted"
    lock.write_text(lock.read_text()[:-3])
    assert trust_of("pdf", project) == "drifted"
    listed = skillchat("skills", "list")
    assert "its lock cannot be read" in listed.stderr
    line = one_line_error(skillchat("skills", "verify", *(["--project"] if project else [])))
    assert "not a skills lock skillchat can read" in line


def test_reinstalling_after_remove_is_clean_again(installed: Path, tmp_path: Path) -> None:
    project = installed.parent == skills_dir(True)
    flags = ["--project"] if project else []
    _edit(installed)
    done = skillchat("skills", "remove", "pdf", *flags)
    assert done.returncode == 0, done.stderr
    assert not installed.exists()
    assert json.loads((installed.parent.parent / "skills.lock").read_text())["skills"] == {}
    assert skillchat("skills", "add", url(tmp_path / "src"), *flags, "--yes").returncode == 0
    assert trust_of("pdf", project) == ("trusted" if project else "user-level")


def test_removing_what_was_not_installed_is_one_line(tmp_path: Path) -> None:
    line = one_line_error(skillchat("skills", "remove", "nothing"))
    assert "'nothing' was not installed" in line


def test_ask_reports_a_drifted_skill_in_one_line(installed: Path, server: ScriptedServer) -> None:
    """Where the user works: `ask` says it once on stderr, and still answers."""
    _edit(installed)
    server.script(reply("fine"))
    done = skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fine\n"
    warned = [line for line in done.stderr.splitlines() if "changed since installed" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ")


def test_the_repl_reports_drift_on_reload(
    tmp_path: Path, server: ScriptedServer, pty_sessions: Callable[..., Any]
) -> None:
    repo = make_repo(tmp_path / "src", FILES)
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    session = pty_sessions("--model", "openai/test-model", "--api-base", server.base_url)
    assert "changed since installed" not in session.prompt()
    _edit(skills_dir(False) / "pdf")
    shown = session.run("/reload")
    assert shown.count("changed since installed") == 1
    assert session.quit() == 0
