"""Hostile text and tools against the terminal habits (docs/chats.md "Terminal
habits"): an answer full of terminal controls put on the clipboard, skill names
in `/context`, an editor that fails or writes binary, a keys file that is loose
or corrupt. Each in a real pseudo-terminal or the real command; docs/security.md
"Terminal habits" holds the promises, each beside its test."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path

import pytest
from chat_helpers import sent
from helpers import model_for, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply
from pty_session import LINE_DONE
from terminal_helpers import Start, repl_starter, shell_script

HOSTILE = "ok\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;title\x07\x9b31mred\x00end"


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "notes", "name: notes\ndescription: Keeps notes.\n", "# Notes\n")
    return root


@pytest.fixture
def repl(server: ScriptedServer, skills: Path, pty_sessions: Start) -> Start:
    return repl_starter(server, skills, pty_sessions)


def test_copy_sends_an_answers_controls_only_inside_base64(server, repl) -> None:
    server.script(reply(HOSTILE))
    session = repl(env={"WAYLAND_DISPLAY": "", "DISPLAY": ""})
    session.run("hi")
    start = len("".join(session.output))
    session.run("/copy")
    after = "".join(session.output)[start:]
    payloads = re.findall(r"\x1b\]52;c;([^\x07\x1b]*)\x07", after)
    assert len(payloads) == 1  # ours: the answer's own OSC 52 never reached the terminal
    assert base64.b64decode(payloads[0]).decode("utf-8") == HOSTILE  # as the model sent it
    assert "\x1b[2J" not in after and "\x1b]0;" not in after and "\x9b" not in after
    assert session.quit() == 0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("exit 3", "the editor exited with status 3; the line is as it was"),
        ("printf 'bin\\377\\000ary' > \"$1\"", "the editor's file is not UTF-8 text"),
        ("head -c 1000001 /dev/zero | tr '\\0' a > \"$1\"", "over 1,000,000 bytes"),
    ],
)
def test_an_editor_that_fails_or_writes_binary_leaves_the_line_and_says_so(
    server, repl, tmp_path, body: str, said: str
) -> None:
    server.script(reply("answered"))
    session = repl(env={"VISUAL": shell_script(tmp_path, "editor.sh", body)})
    session.send("kept line")
    session.send("\x18\x05")
    session.until_screen(lambda lines: any(said in line for line in lines))
    session.redrawn()
    session.send("\r")
    session.expect(LINE_DONE)
    assert "answered" in session.prompt()
    assert sent(server)[-1]["content"] == "kept line"
    assert "Traceback" not in "".join(session.output)
    assert session.quit() == 0


def test_an_editor_that_does_not_exist_is_one_line(server, repl) -> None:
    session = repl(env={"VISUAL": "/nonexistent/editor --flag"})
    session.send("x")
    session.send("\x18\x05")
    session.until_screen(lambda lines: any("did not start" in line for line in lines))
    session.redrawn()
    assert "Traceback" not in "".join(session.output)
    session.send("\x15")  # Ctrl-U: the kept line goes
    assert session.quit() == 0


KEY = "sk-stored-0123456789abcdef"


def keys_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "skillchat" / "keys.json"


@pytest.mark.parametrize(
    ("content", "mode", "said"),
    [
        (json.dumps({"OPENAI_API_KEY": KEY}), 0o644, "is readable by others (mode 644)"),
        ('{"OPENAI_API_KEY": ', 0o600, "not a keys file"),
        (json.dumps({"OPENAI_API_KEY": 1, "bad name!": KEY}), 0o600, "not a keys file"),
        (json.dumps([KEY]), 0o600, "not a keys file"),
    ],
)
def test_a_loose_or_corrupt_keys_file_is_one_line_unused_and_not_rewritten(
    server: ScriptedServer, content: str, mode: int, said: str
) -> None:
    keys_file().parent.mkdir(parents=True)
    keys_file().write_text(content)
    keys_file().chmod(mode)
    server.script(reply("answer"))
    done = skillchat(
        "ask", "--model", model_for(server), "--api-base", server.base_url, "hi", subprocess=True
    )
    assert done.returncode == 0 and done.stdout.strip() == "answer"
    warnings = [line for line in done.stderr.splitlines() if "keys.json" in line]
    assert len(warnings) == 1 and said in warnings[0] and KEY not in done.stderr
    assert "authorization" not in server.completions[-1].headers or KEY not in str(
        server.completions[-1].headers["authorization"]
    )
    refused = skillchat("keys", "set", "gemini", input="sk-new-key-0000000\n", subprocess=True)
    assert refused.returncode == 1 and said in refused.stderr
    assert keys_file().read_text() == content  # the user's keys are not lost


def test_context_never_shows_a_skill_name_the_model_made_up(server, repl) -> None:
    """A get_skill call naming no skill (controls, a fake name) activates nothing:
    its result counts as a tool result, and /context prints no name of the model's."""
    evil = "notes\x1b[2J\x1b]0;pwned\x07"
    server.script(
        reply(calls=[call("get_skill", {"skill_name": evil})]),
        reply(calls=[call("get_skill", {"skill_name": "notes"})]),
        reply("done"),
    )
    session = repl()
    session.run("go")
    start = len("".join(session.output))
    shown = session.run("/context")
    raw = "".join(session.output)[start:]
    assert "\x1b[2J" not in raw and "\x1b]0;" not in raw
    rows = [line.split()[1] for line in shown.splitlines() if line.startswith("skill ")]
    assert rows == ["notes"]
    assert session.quit() == 0


def test_a_fifo_as_the_keys_file_does_not_hang(server: ScriptedServer) -> None:
    keys_file().parent.mkdir(parents=True)
    os.mkfifo(keys_file(), 0o600)
    server.script(reply("answer"))
    done = skillchat(
        "ask", "--model", model_for(server), "--api-base", server.base_url, "hi", subprocess=True
    )
    assert done.returncode == 0 and done.stdout.strip() == "answer"
    assert "keys.json: not a regular file; stored keys not used" in done.stderr
