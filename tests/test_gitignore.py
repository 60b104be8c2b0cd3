"""The pure-Python .gitignore matcher, case by case, and the same cases checked
against git itself (`git check-ignore`) so the expected answers are git's, not ours."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skillchat.workspace.ignore import GitIgnore, parse_rule, parse_rules, translate

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
]


def matcher(files: dict[str, str]) -> GitIgnore:
    rules = {folder: parse_rules(text) for folder, text in files.items()}
    return GitIgnore(lambda folder: rules.get(folder, ()))


@pytest.mark.parametrize(("files", "path", "is_dir", "expected"), CASES)
def test_matcher(files: dict[str, str], path: str, is_dir: bool, expected: bool) -> None:
    assert matcher(files).ignored(path, is_dir=is_dir) is expected


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_every_case_agrees_with_git(tmp_path: Path) -> None:
    """Each case in a real repository, asked of `git check-ignore`."""
    disagreements = []
    for n, (files, path, is_dir, expected) in enumerate(CASES):
        repo = tmp_path / str(n)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for folder, text in files.items():
            (repo / folder).mkdir(parents=True, exist_ok=True)
            (repo / folder / ".gitignore").write_bytes(text.encode())
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_dir:
            target.mkdir()
        else:
            target.write_text("x")
        done = subprocess.run(
            ["git", "-C", str(repo), "check-ignore", "-q", "--", path],
            capture_output=True,
            env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        )
        assert done.returncode in (0, 1), done.stderr
        if (done.returncode == 0) is not expected:
            disagreements.append((files, path, expected))
    assert disagreements == []


def test_blank_comment_and_slash_only_lines_are_no_rules() -> None:
    assert parse_rules("\n# c\n/\n!\n   \n") == ()
    assert parse_rule("!/x/").negated and parse_rule("!/x/").dir_only  # type: ignore[union-attr]


def test_classes_never_match_a_slash() -> None:
    assert translate("[]x]") == "(?:(?!/)[\\]x])"
    assert not matcher({"": "/a[!b]c\n"}).ignored("a/c")
    assert matcher({"": "/a[!b]c\n"}).ignored("axc")
