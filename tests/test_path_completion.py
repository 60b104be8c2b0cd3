"""`@path` and `/attach PATH` completion: one folder level per Tab, never a hidden,
ignored or outside entry (it could not be read anyway)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from skillchat.ui.path_completion import PathCompleter
from skillchat.workspace.files import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "proj"
    for rel in ("src/app.py", "src/api.py", "src/util/x.py", "README.md", "build/out.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / ".env").write_text("TOKEN=1")
    (root / ".gitignore").write_text("build/\n")
    (root / "src" / "api.py.bak").write_text("x")
    (root / "src" / ".gitignore").write_text("*.bak\n")
    (tmp_path / "secret.txt").write_text("x")
    (root / "src" / "out-link.txt").symlink_to(tmp_path / "secret.txt")
    return Workspace.open(root)


def complete(ws: Workspace | None, text: str) -> list[tuple[str, int]]:
    completer = PathCompleter(lambda: ws)
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.start_position) for c in found]


def test_the_root_level_skips_hidden_and_ignored(ws) -> None:
    assert complete(ws, "look at @") == [("@README.md", -1), ("@src/", -1)]


def test_one_folder_level_at_a_time(ws) -> None:
    assert complete(ws, "explain @src/a") == [("@src/api.py", -6), ("@src/app.py", -6)]
    assert complete(ws, "@src/") == [
        ("@src/api.py", -5),
        ("@src/app.py", -5),
        ("@src/util/", -5),
    ]  # *.bak ignored by src/.gitignore, the link leads out


def test_attach_argument(ws) -> None:
    assert complete(ws, "/attach src/u") == [("src/util/", -5)]
    assert complete(ws, "/attach ") == [("README.md", 0), ("src/", 0)]


@pytest.mark.parametrize(
    "text",
    ["mail ada@", "no mention", "@../", "@.git/", "@build/", "@/etc/", "/attach a b", "@src/x "],
)
def test_nothing_to_offer(ws, text) -> None:
    assert complete(ws, text) == []


def test_no_workspace_no_completions() -> None:
    assert complete(None, "@") == []
