"""The one rewrite of a document (safe_io/write.py: the trust store, a skills.lock,
the lock's fingerprints): whole or not at all, in the mode asked whatever the umask,
and a failure is one line of the caller's error, with no temporary file left."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillchat.errors import LockError, TrustError
from skillchat.safe_io.write import replace_atomically


@pytest.fixture
def umask() -> Iterator[None]:
    """A umask that would leave files open to all (000), put back after."""
    before = os.umask(0)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask")
def test_the_new_bytes_replace_the_file_in_the_mode_asked(tmp_path: Path) -> None:
    path = tmp_path / "new" / "trust.json"
    replace_atomically(path, b"{}", TrustError, "cannot save trust")
    assert path.read_bytes() == b"{}" and mode(path) == 0o600
    assert mode(path.parent) == 0o700  # a folder it had to make is private
    os.umask(0o077)
    replace_atomically(path, b'{"a": 1}', LockError, "cannot write the lock", mode=0o644)
    assert path.read_bytes() == b'{"a": 1}' and mode(path) == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["trust.json"]


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "skills.lock"
    path.mkdir()  # a folder where the file goes: the rename cannot replace it
    (path / "kept").write_text("x")
    with pytest.raises(LockError) as raised:
        replace_atomically(path, b"{}", LockError, "cannot write the lock")
    assert str(raised.value).startswith(f"{path}: cannot write the lock: ")
    assert "\n" not in str(raised.value)
    assert (path / "kept").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills.lock"]
