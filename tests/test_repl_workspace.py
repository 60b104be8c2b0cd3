"""The workspace in the interactive session, in a real pseudo-terminal against the
scripted server: `/attach` with Tab completion, `@path` completion in a message,
what the model got, and what the database kept (paths and hashes, no content)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import sent, tool_messages
from helpers import session_options, write_files
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir

NOTES = "# Notes\n\nNOTES-BODY-7f3a\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"notes.md": NOTES, "src/app.py": "print('app')\n", ".env": "TOKEN=1"}
    return write_files(tmp_path / "project", files)


@pytest.fixture
def repl(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> Callable[..., PtySession]:
    (tmp_path / "no-skills").mkdir(exist_ok=True)

    def start(*args: str) -> PtySession:
        return pty_sessions(*session_options(server, tmp_path / "no-skills"), *args)

    return start


def test_attach_and_mentions_with_completion(server, repl, project) -> None:
    server.script(reply("Both read."))
    session = repl("--workspace", str(project))
    assert "workspace 'project'" in session.prompt()
    # As a person does: the menu shows (completions ready), then Tab picks its entry.
    session.send("/attach no")
    session.until_screen(lambda lines: any(line.strip() == "notes.md" for line in lines))
    session.send("\t")
    session.until_screen(lambda lines: any("/attach notes.md" in line for line in lines))
    screen = session.run("")
    assert "attached notes.md (" in screen and "it goes with your next message" in screen
    session.expect("attached: 1 for the next message")  # the toolbar
    assert "error: File 'missing.md' not found in workspace" in session.run("/attach missing.md")
    assert "is hidden" in session.run("/attach .env")
    session.send("compare with @src/a")
    session.until_screen(lambda lines: any(line.strip() == "app.py" for line in lines))
    session.send("\t")
    session.until_screen(lambda lines: any("compare with @src/app.py" in ln for ln in lines))
    screen = session.run(" please")
    assert screen.count("read_file · attached") == 2 and "Both read." in screen
    assert sent(server)[1] == {"role": "user", "content": "compare with @src/app.py please"}
    payloads = [json.loads(m["content"]) for m in tool_messages(server)]
    assert [p["file"]["path"] for p in payloads] == ["notes.md", "src/app.py"]
    assert payloads[0]["file"]["content"] == NOTES
    assert session.quit() == 0
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        assert [f.path for f in chat.attached_files] == ["notes.md", "src/app.py"]
    files = list(user_data_dir().glob("chats.db*"))
    assert all(b"NOTES-BODY-7f3a" not in f.read_bytes() for f in files)


def test_without_a_workspace_attach_files_and_grep_say_how_to_get_one(server, repl) -> None:
    session = repl()
    session.prompt()
    assert "attaching files needs a workspace: --workspace DIR" in session.run("/attach a.md")
    assert "/files needs a workspace: --workspace DIR" in session.run("/files")
    assert "/grep needs a workspace: --workspace DIR" in session.run("/grep notes")
    assert session.quit() == 0
    assert server.completions == []


def test_a_bad_workspace_stops_before_the_prompt(repl, tmp_path) -> None:
    session = repl("--workspace", str(tmp_path / "nope"))
    assert session.wait() == 2
    assert "--workspace: workspace" in "".join(session.output)


def test_files_and_grep_show_what_the_model_would_get(server, repl, project) -> None:
    (project / ".gitignore").write_text("build/\n")
    write_files(project, {"build/notes.md": "NOTES-BODY-7f3a\n"})
    session = repl("--workspace", str(project))
    session.prompt()
    screen = session.run("/files")
    assert "notes.md" in screen and "src/" in screen and ".env" not in screen
    assert "build" not in screen.replace("/files", "")
    screen = session.run("/files *.py")
    assert "src/app.py" in screen and "notes.md" not in screen
    screen = session.run("/grep NOTES-BODY")
    assert "notes.md  notes.md#L1-L3" in screen and "3: NOTES-BODY-7f3a" in screen
    assert "1 of 2 files match" in screen and "build/notes.md" not in screen
    assert "error: PATH_TRAVERSAL: glob '../*' has a '..'" in session.run("/files ../*")
    assert "/grep needs the text to find" in session.run("/grep")
    assert session.quit() == 0
    assert server.completions == []  # nothing went to the model
