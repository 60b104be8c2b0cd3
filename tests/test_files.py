"""The path rules of the file-access layer, against real files, links, FIFOs and devices."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from helpers import skill_folder
from hypothesis import given, settings
from hypothesis import strategies as st

from skillchat.errors import FileAccessError
from skillchat.safe_io.read import HARD_CAP_BYTES, Container, normalise_relative_path
from skillchat.skills.files import list_skill_files, read_skill_file, read_skill_md
from skillchat.skills.model import Skill

TRAVERSAL = "Path traversal detected: cannot access files outside skill folder"


def make_skill(root: Path, name: str = "calc") -> Skill:
    skill_dir = root / name
    md = skill_dir / "SKILL.md"
    if not md.exists():
        skill_folder(root, name, f"name: {name}\ndescription: d\n")
    return Skill(
        name=name,
        description="d",
        root=Path(os.path.realpath(skill_dir)),
        skill_md=md,
        source_dir=root,
        frontmatter={"name": name, "description": "d"},
    )


@pytest.fixture()
def skill(tmp_path: Path) -> Skill:
    s = make_skill(tmp_path / "skills")
    (s.root / "references").mkdir()
    (s.root / "references" / "REF.md").write_text("reference text ✓\n")
    (s.root / "docs" / "advanced").mkdir(parents=True)
    (s.root / "docs" / "advanced" / "deep.txt").write_text("deep")
    return s


def refused(skill: Skill, path: object, code: str) -> str:
    with pytest.raises(FileAccessError) as info:
        read_skill_file(skill, path, limit=1000)
    assert info.value.code == code, (path, info.value.code, info.value.message)
    return info.value.message


# --- reads that must work -------------------------------------------------------------


def test_reads_root_subdir_and_nested_files(skill: Skill) -> None:
    assert read_skill_file(skill, "references/REF.md", limit=1000).text == "reference text ✓\n"
    assert read_skill_file(skill, "docs/advanced/deep.txt", limit=1000).text == "deep"
    assert read_skill_file(skill, "./docs//advanced/deep.txt", limit=10).path == (
        "docs/advanced/deep.txt"
    )
    assert read_skill_file(skill, "docs\\advanced\\deep.txt", limit=10).text == "deep"
    assert read_skill_md(skill, limit=1000).text.startswith("---\nname: calc")


def test_empty_file_is_empty_text(skill: Skill) -> None:
    (skill.root / "empty.txt").write_bytes(b"")
    got = read_skill_file(skill, "empty.txt", limit=100)
    assert (got.text, got.size, got.truncated) == ("", 0, False)


def test_bom_is_stripped(skill: Skill) -> None:
    (skill.root / "bom.md").write_bytes(b"\xef\xbb\xbfhello")
    assert read_skill_file(skill, "bom.md", limit=100).text == "hello"


def test_symlink_inside_the_skill_is_followed(skill: Skill) -> None:
    (skill.root / "alias.md").symlink_to(skill.root / "references" / "REF.md")
    assert read_skill_file(skill, "alias.md", limit=100).text == "reference text ✓\n"


# --- lexical refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "../../../etc/passwd",
        "..",
        "../calc/SKILL.md",
        "references/../../x",
        "..\\..\\..\\Windows\\System32",
        "references\\..\\..\\x",
        "references/..\\..\\x",
        "a/b/../../../c",
        "/etc/passwd",
        "\\etc\\passwd",
        "C:\\Windows\\win.ini",
        "c:/Windows/win.ini",
        "\\\\host\\share\\x",
        "//host/share/x",
    ],
)
def test_traversal_and_absolute_paths_are_refused(skill: Skill, path: str) -> None:
    assert refused(skill, path, "PATH_TRAVERSAL") == TRAVERSAL


@pytest.mark.parametrize("path", ["", "   ", None, 3, ["a"]])
def test_empty_or_non_string_path_is_invalid(skill: Skill, path: object) -> None:
    refused(skill, path, "INVALID_ARGUMENT")


def test_nul_byte_is_invalid(skill: Skill) -> None:
    refused(skill, "references/REF.md\x00.png", "INVALID_ARGUMENT")


def test_dotted_names_that_are_not_parent_segments_are_fine(skill: Skill) -> None:
    (skill.root / "..notes.md").write_text("ok")
    (skill.root / "a..b").write_text("ok2")
    assert read_skill_file(skill, "..notes.md", limit=10).text == "ok"
    assert read_skill_file(skill, "a..b", limit=10).text == "ok2"


@given(st.text(min_size=1, max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_path_with_a_parent_segment_is_refused_before_the_disk(text: str) -> None:
    container = Container(Path("/nonexistent-root"), "skill 'x'", "skill folder")
    for sep in ("/", "\\"):
        hostile = f"{text}{sep}..{sep}{text}"
        with pytest.raises(FileAccessError) as info:
            normalise_relative_path(hostile, container)
        assert info.value.code in ("PATH_TRAVERSAL", "INVALID_ARGUMENT")


@given(st.lists(st.text(alphabet="abcXYZ09_-.é ", min_size=1, max_size=8), min_size=1))
@settings(max_examples=300, deadline=None)
def test_normalised_paths_never_escape(parts: list[str]) -> None:
    container = Container(Path("/root"), "skill 'x'", "skill folder")
    try:
        clean = normalise_relative_path("/".join(parts), container)
    except FileAccessError:
        return
    assert ".." not in clean.split("/")
    assert not clean.startswith("/")
    assert os.path.normpath(os.path.join("/root", clean)).startswith("/root/")


# --- refusals that need the real path --------------------------------------------------


def test_symlink_to_etc_passwd_is_refused(skill: Skill) -> None:
    (skill.root / "passwd").symlink_to("/etc/passwd")
    assert refused(skill, "passwd", "PATH_TRAVERSAL") == TRAVERSAL


def test_symlink_to_a_sibling_skill_is_refused(tmp_path: Path, skill: Skill) -> None:
    sibling = make_skill(tmp_path / "skills", "other")
    (sibling.root / "secret.md").write_text("sibling secret")
    (skill.root / "steal.md").symlink_to(sibling.root / "secret.md")
    (skill.root / "sibdir").symlink_to(sibling.root)
    refused(skill, "steal.md", "PATH_TRAVERSAL")
    refused(skill, "sibdir/secret.md", "PATH_TRAVERSAL")


def test_symlinked_directory_escaping_is_refused(tmp_path: Path, skill: Skill) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("outside")
    (skill.root / "link").symlink_to(outside)
    refused(skill, "link/x.md", "PATH_TRAVERSAL")


def test_symlink_loop_is_refused(skill: Skill) -> None:
    (skill.root / "loop_a").symlink_to(skill.root / "loop_b")
    (skill.root / "loop_b").symlink_to(skill.root / "loop_a")
    message = refused(skill, "loop_a", "UNSUPPORTED_FILE")
    assert "loop" in message


def test_missing_file_uses_the_contract_message(skill: Skill) -> None:
    message = refused(skill, "examples/missing.py", "NOT_FOUND")
    assert message == "File 'examples/missing.py' not found in skill 'calc'"


def test_file_used_as_directory_is_not_found(skill: Skill) -> None:
    refused(skill, "references/REF.md/inner", "NOT_FOUND")


def test_directory_is_refused(skill: Skill) -> None:
    assert "directory" in refused(skill, "references", "UNSUPPORTED_FILE")
    assert "directory" in refused(skill, ".", "UNSUPPORTED_FILE")


def test_fifo_is_refused_without_blocking(skill: Skill) -> None:
    os.mkfifo(skill.root / "pipe")
    result: list[str] = []

    def attempt() -> None:
        result.append(refused(skill, "pipe", "UNSUPPORTED_FILE"))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(60)  # a bound for a read that blocks, not a pace
    assert result and "FIFO" in result[0], "reading a FIFO blocked or was not refused"


def test_device_via_symlink_is_refused(skill: Skill) -> None:
    # /dev/zero outside the skill: refused as traversal before it is ever opened.
    (skill.root / "zero").symlink_to("/dev/zero")
    refused(skill, "zero", "PATH_TRAVERSAL")


def test_device_node_inside_the_skill_is_refused(skill: Skill) -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    try:
        os.mknod(skill.root / "null", 0o600 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod not permitted here")
    assert "device" in refused(skill, "null", "UNSUPPORTED_FILE")


def test_unix_socket_is_refused(skill: Skill, tmp_path: Path) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # A folder of its own with a short path (a socket's path is at most 107 bytes):
    # a fixed name in /tmp could be another user's socket from an earlier run.
    short = Path(tempfile.mkdtemp(prefix="sc-", dir="/tmp"))
    try:
        sock.bind(str(short / "s.sock"))
        (skill.root / "sock").symlink_to(short / "s.sock")
        refused(skill, "sock", "PATH_TRAVERSAL")
    finally:
        sock.close()
        shutil.rmtree(short, ignore_errors=True)


def test_unreadable_file_is_permission_denied(skill: Skill) -> None:
    target = skill.root / "secret.md"
    target.write_text("x")
    target.chmod(0)
    try:
        if os.access(target, os.R_OK):
            pytest.skip("running as a user that ignores file modes (root)")
        refused(skill, "secret.md", "PERMISSION_DENIED")
    finally:
        target.chmod(0o644)


# --- content rules ---------------------------------------------------------------------


def test_binary_with_nul_is_refused(skill: Skill) -> None:
    (skill.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    assert "binary" in refused(skill, "img.png", "UNSUPPORTED_FILE")


def test_invalid_utf8_is_refused(skill: Skill) -> None:
    (skill.root / "latin1.txt").write_bytes("café".encode("latin-1"))
    assert "binary" in refused(skill, "latin1.txt", "UNSUPPORTED_FILE")


def test_over_the_limit_is_truncated_with_a_notice(skill: Skill) -> None:
    (skill.root / "big.txt").write_text("a" * 5000)
    got = read_skill_file(skill, "big.txt", limit=1000)
    assert got.truncated and got.size == 5000 and got.text == "a" * 1000
    assert "truncated" in got.with_notice() and "5,000" in got.with_notice()


def test_exactly_at_the_limit_is_not_truncated(skill: Skill) -> None:
    (skill.root / "edge.txt").write_text("b" * 1000)
    got = read_skill_file(skill, "edge.txt", limit=1000)
    assert not got.truncated and got.with_notice() == "b" * 1000


def test_cut_inside_a_multibyte_character_is_not_binary(skill: Skill) -> None:
    (skill.root / "utf.txt").write_text("€" * 100)  # 3 bytes each
    got = read_skill_file(skill, "utf.txt", limit=100)
    assert got.truncated and got.text == "€" * 33


def test_hash_identifies_content(skill: Skill) -> None:
    first = read_skill_file(skill, "references/REF.md", limit=1000).sha256
    (skill.root / "references" / "REF.md").write_text("changed")
    assert read_skill_file(skill, "references/REF.md", limit=1000).sha256 != first


def test_limit_is_capped(skill: Skill) -> None:
    (skill.root / "small.txt").write_text("x")
    assert read_skill_file(skill, "small.txt", limit=10**12).text == "x"
    assert HARD_CAP_BYTES <= 64 * 1024 * 1024


def test_one_gigabyte_file_reads_only_the_limit(tmp_path: Path) -> None:
    """A sparse 1 GB file: the read must cost the limit, not the file (checked in a
    fresh process so its peak RSS is ours alone)."""
    s = make_skill(tmp_path / "skills", "big")
    with open(s.root / "huge.txt", "wb") as fh:
        fh.truncate(1024**3)
    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from skillchat.errors import FileAccessError\n"
        "from skillchat.safe_io.read import Container, read_contained\n"
        f"c = Container(Path({str(s.root)!r}), 'skill x', 'skill folder')\n"
        "try:\n"
        "    read_contained(c, 'huge.txt', limit=2_000_000)\n"
        "except FileAccessError as e:\n"
        "    print(e.code)\n"
        # VmHWM, unlike ru_maxrss, is not inherited from the forking pytest process.
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "UNSUPPORTED_FILE"  # zeros are NUL bytes: binary
    assert int(out[1]) < 100_000, f"peak RSS {out[1]} KiB: the cap did not hold"


# --- listing ---------------------------------------------------------------------------


def test_listing_skips_hidden_and_escaping_links(tmp_path: Path, skill: Skill) -> None:
    (skill.root / ".git").mkdir()
    (skill.root / ".git" / "config").write_text("x")
    (skill.root / ".hidden").write_text("x")
    (skill.root / "out").symlink_to("/etc/passwd")
    (skill.root / "in").symlink_to(skill.root / "SKILL.md")
    (skill.root / "dirlink").symlink_to(tmp_path)
    files = list_skill_files(skill).paths
    assert files == ["SKILL.md", "docs/advanced/deep.txt", "in", "references/REF.md"]


def test_listing_is_capped(skill: Skill) -> None:
    for i in range(30):
        (skill.root / f"f{i:02}.txt").write_text("x")
    listing = list_skill_files(skill, max_files=10)
    assert len(listing.paths) == 10 and listing.total == 33 and listing.cut
