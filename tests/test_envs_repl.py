"""The REPL's consent to a first install, in a real terminal: the packages, the
versions they resolve to and where they were declared on the card, then yes / no;
no and Ctrl-C install nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from consent_helpers import results
from envs_helpers import local_index, write_wheel
from helpers import session_options, skill_folder, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

RUN = "Run it? [y]es / [n]o / [a]lways:"
INSTALL = "Install them? [y]es / [n]o:"
SCRIPT = (
    '# /// script\n# dependencies = ["tinypkg"]\n# ///\nimport tinypkg\nprint("v", tinypkg.VALUE)\n'
)


@pytest.fixture
def repl(
    server: ScriptedServer,
    pty_sessions: Callable[..., PtySession],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> PtySession:
    require_sandbox()
    write_wheel(tmp_path / "wheels", "tinypkg", code="VALUE = 7\n")
    local_index(monkeypatch, tmp_path / "wheels")
    folder = skill_folder(tmp_path / "skills", "demo", "name: demo\ndescription: A demo.\n")
    write_files(folder, {"scripts/show.py": SCRIPT})
    session = pty_sessions(*session_options(server, tmp_path / "skills"))
    session.prompt()
    return session


def test_no_and_ctrl_c_install_nothing_and_yes_installs_then_runs(
    server: ScriptedServer, repl: PtySession
) -> None:
    run = call(
        "run_command", {"command": "python /skills/demo/scripts/show.py", "skill_name": "demo"}
    )
    server.script(
        reply("", calls=[run]),
        reply("declined"),
        reply("", calls=[run]),
        reply("interrupted"),
        reply("", calls=[run]),
        reply("ran"),
    )
    repl.line("first")
    repl.expect(RUN)
    repl.send("y")  # one key, no Enter
    card = repl.expect(INSTALL)
    assert "tinypkg" in card and "/skills/demo/scripts/show.py (# /// script)" in card
    assert "tinypkg 1.0" in card  # resolved before the question
    repl.send("n")  # one key, no Enter
    repl.prompt()
    repl.line("second")
    repl.expect(RUN)
    repl.send("y")  # one key, no Enter
    repl.expect(INSTALL)
    repl.interrupt()
    repl.prompt()
    repl.line("third")
    repl.expect(RUN)
    repl.send("y")  # one key, no Enter
    repl.expect(INSTALL)
    repl.send("y")  # one key, no Enter
    repl.expect("+ tinypkg==1.0")  # uv's steps, shown while it installs
    repl.prompt()
    first, second, third = results(server)
    assert first["error_code"] == second["error_code"] == "NOT_ALLOWED"
    assert third["stdout"] == "v 7\n"
    assert str(third["notes"]).startswith("['installed tinypkg 1.0 in ")
