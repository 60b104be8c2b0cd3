"""Containment on what is actually opened: folders swapped for symlinks while reads
run, skill folders replaced after discovery, hard links. Real files, real threads."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import skill_folder

from skillchat.errors import FileAccessError
from skillchat.skills.files import list_skill_files, read_skill_file
from skillchat.skills.registry import discover
from skillchat.workspace.files import Workspace

OUTSIDE = "OUTSIDE-SECRET"
SWAPS = 1500  # folder <-> symlink swaps per race
READS = 1500  # reads per race


@pytest.fixture(autouse=True)
def fine_grained_threads() -> Iterator[None]:
    """Switch threads every microsecond so the swaps land between a read's steps."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def race(folder: Path, link_target: Path, read: Callable[[], str]) -> tuple[list[str], int]:
    """Swap `folder` for a symlink to `link_target` and back, SWAPS times, in a thread
    while this thread reads READS times (or until the swapper is done). Returns the
    texts read and how many reads were refused."""
    saved = folder.with_name(folder.name + ".saved")
    done = threading.Event()
    errors: list[BaseException] = []

    def swapper() -> None:
        try:
            for _ in range(SWAPS):
                os.rename(folder, saved)
                os.symlink(link_target, folder)
                os.unlink(folder)
                os.rename(saved, folder)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            done.set()

    texts: list[str] = []
    refused = 0
    assert read() not in (None, OUTSIDE)  # the read works before the race
    thread = threading.Thread(target=swapper)
    thread.start()
    try:
        for _ in range(READS):
            try:
                texts.append(read())
            except FileAccessError:
                refused += 1
            if done.is_set():
                break
    finally:
        done.wait(60)
        thread.join(60)
    assert not errors, errors
    texts.append(read())  # and after it, the folder back in place
    return texts, refused


def outside_folder(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "data.txt").write_text(OUTSIDE)
    (outside / "SKILL.md").write_text(f"---\nname: calc\ndescription: {OUTSIDE}\n---\n{OUTSIDE}\n")
    return outside


def discovered(tmp_path: Path):
    skill_folder(tmp_path / "skills", "calc", "name: calc\ndescription: d\n", "inside body\n")
    [skill] = discover([tmp_path / "skills"]).skills.values()
    return skill


def test_a_folder_swapped_for_a_symlink_mid_read_never_leaks(tmp_path: Path) -> None:
    skill = discovered(tmp_path)
    (skill.root / "sub").mkdir()
    (skill.root / "sub" / "data.txt").write_text("inside")
    outside = outside_folder(tmp_path)

    texts, _ = race(
        skill.root / "sub", outside, lambda: read_skill_file(skill, "sub/data.txt", limit=100).text
    )
    assert set(texts) == {"inside"}


def test_the_skill_folder_swapped_mid_read_never_leaks(tmp_path: Path) -> None:
    skill = discovered(tmp_path)
    (skill.root / "data.txt").write_text("inside")
    outside = outside_folder(tmp_path)

    texts, _ = race(skill.root, outside, lambda: read_skill_file(skill, "data.txt", limit=100).text)
    assert set(texts) == {"inside"}


def test_workspace_folder_swapped_for_a_link_to_a_hidden_one_never_leaks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "key.txt").write_text("public")
    (root / ".secrets").mkdir()
    (root / ".secrets" / "key.txt").write_text(OUTSIDE)
    workspace = Workspace.open(root)

    texts, _ = race(
        root / "docs", root / ".secrets", lambda: workspace.read("docs/key.txt", limit=100).text
    )
    assert set(texts) == {"public"}


def test_a_skill_folder_replaced_by_a_symlink_after_discovery_is_refused(tmp_path: Path) -> None:
    skill = discovered(tmp_path)
    outside = outside_folder(tmp_path)
    os.rename(skill.root, tmp_path / "moved-away")
    os.symlink(outside, skill.root)

    for rel in ("SKILL.md", "data.txt"):
        with pytest.raises(FileAccessError) as info:
            read_skill_file(skill, rel, limit=1000)
        assert info.value.code == "PATH_TRAVERSAL"
    assert list_skill_files(skill).paths == []


def test_a_folder_above_the_skill_replaced_by_a_symlink_is_refused(tmp_path: Path) -> None:
    skill = discovered(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "calc").mkdir(parents=True)
    (elsewhere / "calc" / "SKILL.md").write_text(OUTSIDE)
    os.rename(tmp_path / "skills", tmp_path / "skills-old")
    os.symlink(elsewhere, tmp_path / "skills")

    with pytest.raises(FileAccessError) as info:
        read_skill_file(skill, "SKILL.md", limit=1000)
    assert info.value.code == "PATH_TRAVERSAL"


def test_symlinks_that_stay_inside_keep_working(tmp_path: Path) -> None:
    skill = discovered(tmp_path)
    (skill.root / "a" / "b").mkdir(parents=True)
    (skill.root / "a" / "b" / "deep.txt").write_text("deep")
    (skill.root / "rel").symlink_to("a/b")  # relative, to a folder
    (skill.root / "a" / "up").symlink_to("../a/b/deep.txt")  # climbs, stays inside
    (skill.root / "abs").symlink_to(skill.root / "a")  # absolute, inside
    for rel in ("rel/deep.txt", "a/up", "abs/b/deep.txt", "abs/up"):
        assert read_skill_file(skill, rel, limit=100).text == "deep", rel
    (skill.root / "a" / "climb").symlink_to("../../..")
    with pytest.raises(FileAccessError) as info:
        read_skill_file(skill, "a/climb/etc/passwd", limit=100)
    assert info.value.code == "PATH_TRAVERSAL"


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_hard_linked_files_are_refused(tmp_path: Path, target: str) -> None:
    skill = discovered(tmp_path)
    if target == "outside":
        source = outside_folder(tmp_path) / "data.txt"
    else:  # a second name for a file of the skill itself: still two links
        source = skill.root / "original.txt"
        source.write_text("x")
    os.link(source, skill.root / "linked.txt")
    with pytest.raises(FileAccessError) as info:
        read_skill_file(skill, "linked.txt", limit=1000)
    assert info.value.code == "PERMISSION_DENIED"
    assert "2 hard links" in info.value.message


def test_a_hard_link_to_a_hidden_workspace_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".env").write_text(f"API_KEY={OUTSIDE}")
    os.link(root / ".env", root / "notes.txt")
    with pytest.raises(FileAccessError) as info:
        Workspace.open(root).read("notes.txt", limit=1000)
    assert info.value.code == "PERMISSION_DENIED"


def test_a_workspace_symlink_into_a_hidden_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(OUTSIDE)
    (root / "docs").symlink_to(".git")
    with pytest.raises(FileAccessError) as info:
        Workspace.open(root).read("docs/config", limit=1000)
    assert info.value.code == "PERMISSION_DENIED"


def test_a_hard_linked_skill_md_is_not_discovered(tmp_path: Path) -> None:
    outside = outside_folder(tmp_path)
    (tmp_path / "skills" / "calc").mkdir(parents=True)
    os.link(outside / "SKILL.md", tmp_path / "skills" / "calc" / "SKILL.md")
    registry = discover([tmp_path / "skills"])
    assert registry.skills == {}
    [excluded] = registry.excluded
    assert "2 hard links" in excluded.summary()
