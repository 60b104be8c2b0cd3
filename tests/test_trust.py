"""Trust: bound to a hash of the skill folder, kept in a private store that fails
safe, and shown by `skills list/show/trust` and the REPL's `/trust`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from helpers import one_line_error, skill_folder, skillchat, write_files

from skillchat.errors import TrustError
from skillchat.skills.content_hash import MAX_ENTRIES, content_hash
from skillchat.skills.model import Skill
from skillchat.skills.registry import discover
from skillchat.skills.trust import TrustState, TrustStore, default_store_path


def project_skill(parent: Path, name: str = "filler") -> Path:
    folder = skill_folder(parent, name, f"name: {name}\ndescription: d\nallowed-tools: Bash\n")
    write_files(folder, {"scripts/fill.py": "print('fill')\n", "references/a.md": "# A\n"})
    return folder


def load(parent: Path, name: str = "filler") -> Skill:
    skill = discover([parent]).get(name)
    assert skill is not None
    return skill


def test_the_hash_covers_every_file_mode_and_link(tmp_path: Path) -> None:
    folder = project_skill(tmp_path / "skills")
    (folder / "link").symlink_to("references/a.md")
    base = content_hash(folder)
    assert content_hash(folder) == base
    changes = [
        lambda: (folder / "scripts/fill.py").write_text("print('evil')\n"),
        lambda: (folder / "references/b.md").write_text("new"),
        lambda: (folder / "scripts/fill.py").chmod(0o755),
        lambda: ((folder / "link").unlink(), (folder / "link").symlink_to("scripts/fill.py")),
        lambda: (folder / "scripts/fill.py").rename(folder / "scripts/fill2.py"),
        lambda: (folder / "empty").mkdir(),
    ]
    seen = {base}
    for change in changes:
        change()
        digest = content_hash(folder)
        assert digest not in seen
        seen.add(digest)


def test_a_fifo_is_hashed_without_being_opened(tmp_path: Path) -> None:
    folder = project_skill(tmp_path / "skills")
    os.mkfifo(folder / "pipe")  # opening it for reading would block forever
    assert len(content_hash(folder)) == 64


def test_a_folder_past_the_bounds_cannot_be_trusted(tmp_path: Path) -> None:
    folder = project_skill(tmp_path / "skills")
    skill = load(tmp_path / "skills")
    store = TrustStore.load()
    store.trust(skill)
    many = folder / "many"
    many.mkdir()
    for i in range(MAX_ENTRIES):
        (many / f"{i}.txt").touch()
    with pytest.raises(TrustError, match="more than 2,000 files"):
        content_hash(folder)
    assert store.state(skill) is TrustState.CHANGED  # it grew past the bounds: not trusted
    with pytest.raises(TrustError):
        store.trust(skill)


def test_trust_is_bound_to_content_and_survives_a_reload(tmp_path: Path) -> None:
    folder = project_skill(tmp_path / "skills")
    skill = load(tmp_path / "skills")
    store = TrustStore.load()
    assert store.problem is None and store.state(skill) is TrustState.UNTRUSTED
    store.trust(skill)
    store.save()
    assert TrustStore.load().state(skill) is TrustState.TRUSTED
    (folder / "scripts/fill.py").write_text("import os; os.system('curl evil')\n")
    again = TrustStore.load()
    assert again.state(skill) is TrustState.CHANGED and not again.is_trusted(skill)
    again.trust(skill)
    assert again.state(skill) is TrustState.TRUSTED
    assert again.revoke(skill) and not again.revoke(skill)
    assert again.state(skill) is TrustState.UNTRUSTED


def test_trust_names_the_folder_not_the_skill_name(tmp_path: Path) -> None:
    project_skill(tmp_path / "one")
    project_skill(tmp_path / "two")  # the same name and content, elsewhere
    store = TrustStore.load()
    store.trust(load(tmp_path / "one"))
    assert store.state(load(tmp_path / "two")) is TrustState.UNTRUSTED


def test_user_level_skills_are_trusted_without_a_record(isolated_env: Path) -> None:
    for user_dir in (".agents/skills", ".claude/skills", ".config/skillchat/skills"):
        project_skill(isolated_env / user_dir)
        skill = load(isolated_env / user_dir)
        store = TrustStore.load()
        assert store.state(skill) is TrustState.USER and store.is_trusted(skill)
        assert not default_store_path().exists()
    project_skill(isolated_env / "work" / "skills")  # cwd's ./skills
    assert TrustStore.load().state(load(isolated_env / "work" / "skills")) is TrustState.UNTRUSTED


def test_the_store_is_private_and_written_whole(tmp_path: Path) -> None:
    project_skill(tmp_path / "skills")
    store = TrustStore.load()
    store.trust(load(tmp_path / "skills"))
    store.save()
    path = default_store_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["trust.json"]  # no temp file left
    doc = json.loads(path.read_text())
    assert doc["version"] == 1
    (record,) = doc["skills"].values()
    assert record["name"] == "filler" and len(record["sha256"]) == 64


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'{"version": 99, "skills": {}}',
        b'{"version": 1, "skills": []}',
        b'{"version": 1, "skills": {"/x": {"sha256": 5}}}',
        b'{"version": 1, "skills": {"/x": "trusted"}}',
    ],
)
def test_a_corrupt_store_trusts_nothing_and_is_replaced(tmp_path: Path, content: bytes) -> None:
    project_skill(tmp_path / "skills")
    skill = load(tmp_path / "skills")
    path = default_store_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    path.chmod(0o600)
    store = TrustStore.load()
    assert store.problem == (
        f"{path}: trust store is corrupt; no skill is trusted until you trust it again"
    )
    assert store.state(skill) is TrustState.UNTRUSTED
    store.trust(skill)
    store.save()
    fresh = TrustStore.load()
    assert fresh.problem is None and fresh.state(skill) is TrustState.TRUSTED


def test_a_store_others_can_write_or_a_directory_is_not_used(tmp_path: Path) -> None:
    project_skill(tmp_path / "skills")
    skill = load(tmp_path / "skills")
    store = TrustStore.load()
    store.trust(skill)
    store.save()
    path = default_store_path()
    path.chmod(0o666)
    shared = TrustStore.load()
    assert "not private to you" in (shared.problem or "")
    assert shared.state(skill) is TrustState.UNTRUSTED
    path.unlink()
    path.mkdir()
    assert "not a trust store" in (TrustStore.load().problem or "")
    with pytest.raises(TrustError, match="cannot save trust"):
        TrustStore.load().save()


# --- the commands, as a user runs them ------------------------------------------------


def test_cli_trust_list_show_and_revoke(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    folder = project_skill(skills)
    project_skill(skills, "other")
    dirs = ("--skills-dir", str(skills))

    pending = skillchat("skills", "trust", *dirs)
    assert pending.returncode == 0, pending.stderr
    assert pending.stdout.splitlines() == [
        f"filler\tuntrusted\t{folder}",
        f"other\tuntrusted\t{skills / 'other'}",
    ]
    done = skillchat("skills", "trust", "filler", *dirs)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("filler: trusted (sha256 ") and str(folder) in done.stdout
    listed = skillchat("skills", "list", *dirs).stdout.splitlines()
    assert [line.rsplit("\t", 1)[1] for line in listed] == ["trusted", "untrusted"]

    (folder / "scripts" / "fill.py").write_text("print('changed')\n")
    doc = json.loads(skillchat("skills", "list", "--json", *dirs).stdout)
    assert {s["name"]: s["trust"] for s in doc["skills"]} == {
        "filler": "changed",
        "other": "untrusted",
    }
    shown = skillchat("skills", "show", "filler", *dirs)
    assert "trust: changed since trusted" in shown.stdout.splitlines()
    doc = json.loads(skillchat("skills", "show", "filler", "--json", *dirs).stdout)
    assert doc["trust"] == "changed"
    assert doc["allowed_tools"] == {"commands": ["Bash"], "read_only": [], "ignored": []}

    everything = skillchat("skills", "trust", "--all", *dirs)
    assert [line.split(":")[0] for line in everything.stdout.splitlines()] == ["filler", "other"]
    assert "nothing to trust" in skillchat("skills", "trust", "--all", *dirs).stderr
    revoked = skillchat("skills", "trust", "--revoke", "other", *dirs)
    assert revoked.stdout == "other: trust revoked\n"
    listed = skillchat("skills", "list", *dirs).stdout.splitlines()
    assert [line.rsplit("\t", 1)[1] for line in listed] == ["trusted", "untrusted"]


def test_cli_bad_input(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    project_skill(skills)
    dirs = ("--skills-dir", str(skills))
    unknown = one_line_error(skillchat("skills", "trust", "nope", *dirs))
    assert "no skill named 'nope'" in unknown
    both = one_line_error(skillchat("skills", "trust", "filler", "--all", *dirs), code=2)
    assert "not both" in both
    path = default_store_path()
    path.parent.mkdir(parents=True)
    path.write_text("{garbage")
    listed = skillchat("skills", "list", *dirs)
    assert listed.returncode == 0 and listed.stdout.endswith("\tuntrusted\n")
    warnings = [line for line in listed.stderr.splitlines() if "trust store" in line]
    assert warnings == [f"warning: {path}: trust store is corrupt; no skill is trusted until "
                        "you trust it again"]  # fmt: skip
    assert skillchat("skills", "trust", "filler", *dirs).returncode == 0
    assert skillchat("skills", "list", *dirs).stdout.endswith("\ttrusted\n")


def test_repl_trust_lists_and_trusts(tmp_path: Path, pty_sessions) -> None:
    skills = tmp_path / "skills"
    folder = project_skill(skills)
    session = pty_sessions("--model", "openai/m", "--api-base", "http://127.0.0.1:9/v1",
                           "--skills-dir", str(skills))  # fmt: skip
    session.prompt()
    listing = session.run("/trust")
    assert "filler  untrusted" in listing and "/trust NAME (or --all) trusts" in listing
    assert "no skill named 'nope'" in session.run("/trust nope")
    assert "✓ filler: trusted (sha256" in session.run("/trust filler")
    assert "every skill is trusted" in session.run("/trust")
    (folder / "scripts" / "fill.py").write_text("print('changed')\n")
    assert "filler  changed since trusted" in session.run("/trust")
    assert "✓ filler: trusted (sha256" in session.run("/trust --all")
    (folder / "scripts" / "fill.py").write_text("print('changed again')\n")
    assert session.quit() == 0
    assert TrustStore.load().state(load(skills)) is TrustState.CHANGED


def test_a_deep_folder_is_hashed_without_recursion(tmp_path: Path) -> None:
    folder = project_skill(tmp_path / "skills")
    deep = folder
    for _ in range(1200):  # deeper than Python's recursion limit
        deep = deep / "d"
        deep.mkdir()
    (deep / "x.txt").write_text("x")
    try:
        first = content_hash(folder)
        (deep / "x.txt").write_text("y")
        assert content_hash(folder) != first
    finally:
        # pytest clears old temp folders with a recursive rmtree, which a tree this
        # deep makes crash (RecursionError, exit 1) in a later run: take it down here.
        (deep / "x.txt").unlink()
        while deep != folder:
            deep.rmdir()
            deep = deep.parent
