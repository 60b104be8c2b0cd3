"""Chats and the input history are private to the user whatever the umask: the chat
database with its `-wal` and `-shm`, the history file and the data folder, created
under `umask 000` by `ask` and by the interactive session, and tightened when they
already exist with wider modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import session_options
from openai_server import ScriptedServer, reply

from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    """This process's umask (inherited by what it starts), restored after."""
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def test_ask_under_umask_000_writes_a_private_database(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.script(reply("hello"))
    fresh = tmp_path / "fresh"  # XDG_DATA_HOME does not exist yet
    # A real process: it inherits the umask at its start, as a user's shell gives it.
    done = subprocess.run(
        [sys.executable, "-m", "skillchat", "ask", *session_options(server, "."), "hi"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "XDG_DATA_HOME": str(fresh / "data")},
        umask=0,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = fresh / "data" / "skillchat"
    assert mode(data) == 0o700 and mode(data / "chats.db") == 0o600
    assert mode(fresh) == mode(fresh / "data") == 0o700  # the folders made on the way too


def test_wal_and_shm_are_private_and_wider_files_are_tightened() -> None:
    path = user_data_dir() / "chats.db"
    with umask(0), ChatStore.open(path) as store:
        store.create_chat("m")  # a write: SQLite makes -wal and -shm
        wal, shm = path.with_name("chats.db-wal"), path.with_name("chats.db-shm")
        assert [mode(p) for p in (path.parent, path, wal, shm)] == [0o700, 0o600, 0o600, 0o600]
        for p in (path, wal, shm):
            p.chmod(0o666)
        path.parent.chmod(0o777)
        with ChatStore.open(path) as again:  # a second session, while the first is open
            assert again.list_chats()
        assert [mode(p) for p in (path.parent, path, wal, shm)] == [0o700, 0o600, 0o600, 0o600]


def test_a_database_the_user_placed_keeps_its_folder(tmp_path: Path) -> None:
    """`[storage] path` in a folder of the user's: the file is private, the folder
    (their home, a synced folder) is not skillchat's to change."""
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with umask(0), ChatStore.open(folder / "chats.db"):
        pass
    assert mode(folder) == 0o755 and mode(folder / "chats.db") == 0o600


def test_the_session_under_umask_000(server: ScriptedServer, pty_sessions) -> None:
    """The history and the database of the interactive session: private when created,
    and tightened when an older run left them readable by others."""
    data = user_data_dir()
    server.script(reply("one"), reply("two"))
    with umask(0):
        session = pty_sessions(*session_options(server, "."))
    session.prompt()
    session.run("hello")
    history, database = data / "history", data / "chats.db"
    assert history.read_text().count("hello") == 1
    assert [mode(p) for p in (data, history, database)] == [0o700, 0o600, 0o600]
    assert mode(database.with_name("chats.db-wal")) == 0o600
    assert session.quit() == 0
    for p, wide in ((data, 0o777), (history, 0o666), (database, 0o666)):
        p.chmod(wide)
    with umask(0):
        session = pty_sessions(*session_options(server, "."))
    session.prompt()
    assert [mode(p) for p in (data, history, database)] == [0o700, 0o600, 0o600]
    assert session.quit() == 0
