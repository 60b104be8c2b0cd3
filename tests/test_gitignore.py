"""The .gitignore matcher (pathspec per file, git's precedence between files), case by
case, and the same cases checked against git itself (`git check-ignore`) so the
expected answers are git's, not ours: text cases, byte (Latin-1) cases and
`.git/info/exclude`."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillchat.workspace.ignore import NO_RULES, GitIgnore, parse_rules

EXCLUDE = ".git/info/exclude"

# (.gitignore files by folder, path, is_dir, ignored?)
CASES: list[tuple[dict[str, str], str, bool, bool]] = [
    ({"": "*.log\n"}, "a.log", False, True),
    ({"": "*.log\n"}, "deep/er/a.log", False, True),
    ({"": "*.log\n"}, "a.log.txt", False, False),
    ({"": "# *.log\n\n"}, "a.log", False, False),
    ({"": "\\#notes\n"}, "#notes", False, True),
    ({"": "build/\n"}, "build", False, False),  # dir-only pattern, a file named build
    ({"": "build/\n"}, "build/out.js", False, True),
    ({"": "build/\n"}, "src/build/out.js", False, True),
    ({"": "/build\n"}, "src/build/out.js", False, False),  # anchored to the root
    ({"": "/build\n"}, "build/out.js", False, True),
    ({"": "doc/frotz\n"}, "doc/frotz", False, True),
    ({"": "doc/frotz\n"}, "a/doc/frotz", False, False),  # a middle '/' anchors too
    ({"": "*.txt\n!keep.txt\n"}, "keep.txt", False, False),
    ({"": "*.txt\n!keep.txt\n"}, "drop.txt", False, True),
    ({"": "out/\n!out/keep.txt\n"}, "out/keep.txt", False, True),  # parent excluded
    ({"": "out/*\n!out/keep.txt\n"}, "out/keep.txt", False, False),
    ({"": "out/*\n!out/keep.txt\n"}, "out/other.txt", False, True),
    ({"": "**/logs\n"}, "a/b/logs/x", False, True),
    ({"": "**/logs/debug.log\n"}, "logs/debug.log", False, True),
    ({"": "a/**/b\n"}, "a/b", False, True),
    ({"": "a/**/b\n"}, "a/x/y/b", False, True),
    ({"": "a/**/b\n"}, "a/x/c", False, False),
    ({"": "abc/**\n"}, "abc/d/e", False, True),
    ({"": "abc/**\n"}, "abcd/e", False, False),
    ({"": "foo**bar\n"}, "fooxbar", False, True),
    ({"": "foo**bar\n"}, "foo/bar", False, False),  # a '**' inside a name is '*'
    ({"": "f?o\n"}, "fxo", False, True),
    ({"": "f?o\n"}, "f/o", False, False),
    ({"": "[a-c].md\n"}, "b.md", False, True),
    ({"": "[!a-c].md\n"}, "b.md", False, False),
    ({"": "[!a-c].md\n"}, "d.md", False, True),
    ({"": "v[[:digit:]].txt\n"}, "v7.txt", False, True),
    ({"": "v[[:digit:]].txt\n"}, "vx.txt", False, False),
    ({"": "trail  \n"}, "trail", False, True),  # trailing spaces dropped
    ({"": "sp\\ \n"}, "sp ", False, True),  # ... unless escaped
    ({"": "\\!bang\n"}, "!bang", False, True),
    ({"": "*.md\r\n"}, "x.md", False, True),  # CRLF file
    ({"": "*.gen\n", "sub": "!x.gen\n"}, "sub/x.gen", False, False),  # deeper file wins
    ({"": "*.gen\n", "sub": "!x.gen\n"}, "other/x.gen", False, True),
    ({"sub": "/only-here\n"}, "sub/only-here", False, True),
    ({"sub": "/only-here\n"}, "only-here", False, False),
    ({"sub": "/only-here\n"}, "sub/x/only-here", False, False),
    ({"sub": "*.tmp\n"}, "sub/x/y.tmp", False, True),
    ({"": "secret\n"}, "secret", True, True),
    ({"": "node_modules\n"}, "web/node_modules/lib/index.js", False, True),
    ({"": "a[b\n"}, "a[b", False, False),  # an unclosed class matches nothing
    ({"": "[]x]y\n"}, "]y", False, True),  # ']' first in a class is a member
    ({"": "*.log\n!keep/\n"}, "keep/a.log", False, True),  # '!keep/' re-includes the folder
    ({"": "**/\n"}, "top", False, False),  # '**/' is every folder, never a root file
    ({"": "**/\n"}, "sub/f", False, True),
    ({"": "a/**/\n"}, "a/f", False, False),
    ({"": "a/**/\n"}, "a/b/f", False, True),
    # git wildmatches only what follows a path pattern's literal prefix, so this `**`
    # starts a segment there (found by the random test below: git ignores `ab`)
    ({"": "a**/b\n"}, "ab", False, True),
    ({"": "a**/b\n"}, "ax/y/b", False, True),
    ({"": "/*\n!/src\n"}, "src/x.py", False, False),
    ({"": "/*\n!/src\n"}, "docs/x.md", False, True),
    ({"": "x\\\\y\n"}, "x\\y", False, True),  # an escaped backslash
    ({"": "\ufeff*.bom\n"}, "a.bom", False, True),  # a UTF-8 BOM is not part of the line
    ({EXCLUDE: "*.local\n"}, "cfg.local", False, True),
    ({EXCLUDE: "*.local\n", "": "!keep.local\n"}, "keep.local", False, False),  # .gitignore first
    ({EXCLUDE: "/top\n"}, "sub/top", False, False),  # anchored at the root
    ({EXCLUDE: "!*.md\n", "": "*.md\n"}, "a.md", False, True),
    ({"": "a//\n"}, "b/a/x", False, False),  # one trailing slash goes: 'a/', matching nothing
    ({"": "//a\n"}, "a", False, False),  # one leading slash goes: '/a', matching nothing
    ({"": "//x/a\n"}, "x/a", False, False),
]


def matcher(files: dict[str, str]) -> GitIgnore:
    rules = {folder: parse_rules(text.encode()) for folder, text in files.items()}
    return GitIgnore(lambda folder: rules.get(folder, NO_RULES), rules.get(EXCLUDE, NO_RULES))


@pytest.mark.parametrize(("files", "path", "is_dir", "expected"), CASES)
def test_matcher(files: dict[str, str], path: str, is_dir: bool, expected: bool) -> None:
    assert matcher(files).ignored(path, is_dir=is_dir) is expected


def git_ignores(home: Path, repo: Path, path: bytes) -> bool:
    """`git check-ignore` on `path` in `repo`, with no user or system config."""
    done = subprocess.run(
        [b"git", b"-C", os.fsencode(repo), b"check-ignore", b"-q", b"--", path],
        capture_output=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_every_case_agrees_with_git(tmp_path: Path) -> None:
    """Each case in a real repository, asked of `git check-ignore`."""
    disagreements = []
    for n, (files, path, is_dir, expected) in enumerate(CASES):
        repo = tmp_path / str(n)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for folder, text in files.items():
            file = repo / EXCLUDE if folder == EXCLUDE else repo / folder / ".gitignore"
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(text.encode())
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_dir:
            target.mkdir()
        else:
            target.write_text("x")
        if git_ignores(tmp_path, repo, path.encode()) is not expected:
            disagreements.append((files, path, expected))
    assert disagreements == []


# (.gitignore bytes, path bytes, ignored?): git matches bytes, so does the matcher.
BYTE_CASES: list[tuple[bytes, bytes, bool]] = [
    (b"caf\xe9\n", b"caf\xe9", True),  # a Latin-1 pattern, a Latin-1 name
    (b"caf\xe9\n", "café".encode(), False),  # ... is not the UTF-8 name
    (b"caf?\n", b"caf\xe9", True),
    (b"caf?\n", "café".encode(), False),  # '?' is one byte: UTF-8 'é' is two
    (b"caf??\n", "café".encode(), True),
    ("café\n".encode(), "café".encode(), True),
    (b"[\xe0-\xef]x\n", b"\xe9x", True),  # a class over bytes
    (b"*\x85\n", b"a\x85", True),  # 0x85 is a byte, not a line break
    (b"n\xb0*\n", b"n\xb0 1", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), BYTE_CASES)
def test_bytes_match_as_git_does(pattern: bytes, path: bytes, expected: bool) -> None:
    rules = parse_rules(pattern)
    assert (
        GitIgnore(lambda folder: rules if folder == "" else NO_RULES).ignored(os.fsdecode(path))
        is expected
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_every_byte_case_agrees_with_git(tmp_path: Path) -> None:
    disagreements = []
    for n, (pattern, path, expected) in enumerate(BYTE_CASES):
        repo = tmp_path / str(n)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / ".gitignore").write_bytes(pattern)
        (repo / os.fsdecode(path)).write_text("x")
        if git_ignores(tmp_path, repo, path) is not expected:
            disagreements.append((pattern, path, expected))
    assert disagreements == []


def test_blank_comment_and_slash_only_lines_are_no_rules() -> None:
    assert not matcher({"": "\n# c\n/\n!\n   \n"}).ignored("c")
    assert matcher({"": "/x/\n!/x/\n"}).ignored("x/y") is False


def test_classes_never_match_a_slash() -> None:
    assert not matcher({"": "/a[!b]c\n"}).ignored("a/c")
    assert matcher({"": "/a[!b]c\n"}).ignored("axc")


# Files only; their folders (x, x/y, "a x", ba, ba/a) are matched as folders on the way.
TREE = ["a", "b", "ab", "a.b", "x/a", "x/ab", "x/y/b", "a x/b", "ba/a/ab", "ba/b", "ba/a/a.b"]
PATTERN = st.lists(
    st.sampled_from(["a", "b", "*", "?", "/", "**", "[ab]", "[!a]", ".", " ", "\\", "!"]),
    min_size=1,
    max_size=6,
).map("".join)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(PATTERN, min_size=1, max_size=4))
def test_random_patterns_agree_with_git(tmp_path: Path, lines: list[str]) -> None:
    """Random .gitignore files over one tree: every path, asked of git at once."""
    repo = Path(tempfile.mkdtemp(dir=tmp_path))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    text = "\n".join(lines) + "\n"
    (repo / ".gitignore").write_text(text)
    for rel in TREE:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x")
    done = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--stdin"],
        input="\n".join(TREE) + "\n",
        capture_output=True,
        text=True,
        env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode in (0, 1), done.stderr
    ours = matcher({"": text})
    assert {p for p in TREE if ours.ignored(p)} == set(done.stdout.splitlines()), text
