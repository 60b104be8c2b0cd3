"""Opening a workspace: a missing folder, a file or an unreadable folder is one clear
error, a usage error from `--workspace` and a config error from the file; and how a
user-typed path becomes a workspace-relative one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import skillchat

from skillchat.config import load_settings
from skillchat.errors import ConfigError, FileAccessError, UsageError, WorkspaceError
from skillchat.workspace.files import Workspace
from skillchat.workspace.project import workspace_from_settings


def test_open_resolves_links_and_names_the_folder(tmp_path: Path) -> None:
    (tmp_path / "real-project").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real-project")
    ws = Workspace.open(tmp_path / "link")
    assert ws.root == (tmp_path / "real-project").resolve() and ws.name == "real-project"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: p.write_text("x"), "is not a folder"),
    ],
)
def test_open_refuses(tmp_path: Path, make, why: str) -> None:
    make(tmp_path / "ws")
    with pytest.raises(WorkspaceError, match=f"workspace '.*ws' {why}"):
        Workspace.open(tmp_path / "ws")


@pytest.mark.skipif(os.geteuid() == 0, reason="root enters any folder")
def test_open_refuses_an_unreadable_folder(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(mode=0)
    with pytest.raises(WorkspaceError, match="is not readable"):
        Workspace.open(tmp_path / "ws")


def test_from_settings_off_flag_and_config(tmp_path: Path, monkeypatch) -> None:
    assert workspace_from_settings(load_settings()) is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    ws = workspace_from_settings(load_settings(workspace="proj"))  # relative to the cwd
    assert ws is not None and ws.root == (tmp_path / "proj").resolve()
    with pytest.raises(UsageError, match=r"^--workspace: workspace '.*nope' does not exist$"):
        workspace_from_settings(load_settings(workspace="nope"), "flag")
    config = tmp_path / "config.toml"
    config.write_text('workspace = "~/nope"\n')
    with pytest.raises(ConfigError, match=r"config.toml: workspace '.*nope' does not exist"):
        workspace_from_settings(load_settings(config))


def test_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    ws = Workspace.open(tmp_path / "ws")
    assert ws.relative("src/a.py") == "src/a.py"  # relative: to the workspace, as typed
    assert ws.relative(tmp_path / "ws" / "src" / "a.py") == "src/a.py"
    (tmp_path / "alias").symlink_to(tmp_path / "ws")
    assert ws.relative(tmp_path / "alias" / "b.md") == "b.md"  # through a linked folder
    for outside in (tmp_path / "other.md", tmp_path / "ws" / ".." / "x", Path("/etc/hosts")):
        with pytest.raises(FileAccessError) as caught:
            ws.relative(outside)
        assert caught.value.code == "PATH_TRAVERSAL"


def test_a_workspace_inside_a_hidden_folder_is_fine(tmp_path: Path) -> None:
    """Only segments below the workspace count as hidden, not the folders above it."""
    (tmp_path / ".config" / "proj").mkdir(parents=True)
    (tmp_path / ".config" / "proj" / "a.md").write_text("ok")
    ws = Workspace.open(tmp_path / ".config" / "proj")
    assert ws.read("a.md", limit=100).text == "ok"
    assert ws.entries("") == ["a.md"]


def test_config_show_lists_the_workspace(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('workspace = "~/src/proj"\n')
    done = skillchat("config", "show", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "workspace" in done.stdout and "~/src/proj" in done.stdout
