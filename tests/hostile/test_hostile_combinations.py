"""Hostile cases where the newest surfaces meet: a project's lock beside the skills a
chat loads, the install cap of package installs set in the config, and the real
`skillchat` command as a user runs it."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import one_line_error, skill_folder, skillchat


def test_a_fifo_as_a_projects_lock_is_one_line_not_a_hang(tmp_path: Path) -> None:
    """A project's `.agents/skills.lock` is read at every start in the project (its
    skills' drift) and by `skills verify`; as a FIFO (a tar archive keeps one) the
    open waited for a writer that never came, and every command there hung. It is a
    lock that cannot be read: the project's skill is listed as changed, verify fails
    in one line. A real process: a hang must be stopped by its timeout."""
    project = tmp_path / "project"
    skill_folder(project / ".agents" / "skills", "demo", "name: demo\ndescription: A demo.\n")
    os.mkfifo(project / ".agents" / "skills.lock")
    listed = skillchat("skills", "list", cwd=project, subprocess=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "demo" in listed.stdout
    assert "the lock is not a regular file" in listed.stdout + listed.stderr
    verified = skillchat("skills", "verify", "--project", cwd=project, subprocess=True, timeout=60)
    assert "the lock is not a regular file" in one_line_error(verified)


def test_an_install_cap_past_what_a_tmpfs_can_be_is_a_config_line(tmp_path: Path) -> None:
    """`[run] install_max_mb` sizes the install's tmpfs and its file limit, in bytes:
    a huge value used to load, then fail each install with bubblewrap's own words
    ("--size takes a non-zero number of bytes"). It is refused when the config is
    read, as 0 and negative values are."""
    config = tmp_path / "config.toml"
    for value in ("99999999999999", "9223372036854775807", "0", "-5"):
        config.write_text(f"[run]\ninstall_max_mb = {value}\n")
        done = skillchat("config", "show", "--config", str(config))
        assert "install_max_mb must be between 1 and 1048576" in one_line_error(done), value
    config.write_text("[run]\ninstall_max_mb = 1048576\n")
    assert skillchat("config", "show", "--config", str(config)).returncode == 0
