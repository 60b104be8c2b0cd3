"""`skillchat ask --workspace DIR --attach PATH` as a user runs it: a subprocess against
the scripted server. What was sent, what was saved (paths and hashes, no content),
and each bad input as one line and its exit code, with no request sent."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from chat_helpers import sent, system_text, tool_messages
from helpers import one_line_error, session_options, skillchat, write_files
from openai_server import ScriptedServer, call, reply

from skillchat.chats.store import ChatStore

NOTES = "# Notes\n\nship it on Friday\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "project", {"notes.md": NOTES, "src/app.py": "print(1)\n"})


def ask(server: ScriptedServer, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    empty = Path.home() / "no-skills"  # the test's own home (conftest)
    empty.mkdir(exist_ok=True)
    options = session_options(server, empty)
    return skillchat("ask", *options, *args, stdin=subprocess.DEVNULL, cwd=cwd)


def test_attach_sends_the_file_and_saves_its_path_and_hash(server, project) -> None:
    server.script(reply("Friday."))
    done = ask(server, "--workspace", str(project), "--attach", "notes.md", "when do we ship?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Friday.\n"
    assert "read_file · attached" in done.stderr  # the card
    user, assistant, tool = sent(server)[1:]
    assert user == {"role": "user", "content": "when do we ship?"}
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"path": "notes.md"}'
    assert json.loads(tool["content"])["file"]["content"] == NOTES
    assert "the folder 'project'" in (system_text(server) or "")
    with ChatStore.open(Path.home() / ".local/share/skillchat/chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        [attached] = chat.attached_files
        assert attached.path == "notes.md" and attached.size_bytes == len(NOTES)
        assert attached.sha256 == hashlib.sha256(NOTES.encode()).hexdigest()
        assert attached.workspace == str(project.resolve())
        stored = [m.message.get("content") or "" for m in store.load_messages(chat.id)]
    assert not any("ship it on Friday" in text for text in stored)  # content never stored


def test_mention_in_the_prompt_and_a_model_read(server, project) -> None:
    server.script(reply(calls=[call("read_file", {"path": "notes.md"})]), reply("ok"))
    done = ask(server, "-w", str(project), "compare @src/app.py with the notes")
    assert done.returncode == 0, done.stderr
    attached, read = [json.loads(m["content"]) for m in tool_messages(server)]
    assert attached["file"]["path"] == "src/app.py"
    assert read["file"]["content"] == NOTES


def test_workspace_from_the_config_relative_to_the_cwd(server, project, tmp_path) -> None:
    (tmp_path / "config.toml").write_text('workspace = "project"\n')
    server.script(reply("ok"))
    done = ask(
        server, "--config", str(tmp_path / "config.toml"), "-a", "src/app.py", "hi", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(tool_messages(server)[0]["content"])["file"]["path"] == "src/app.py"


def test_json_report_lists_the_attachment_as_a_tool_call(server, project) -> None:
    server.script(reply("ok"))
    done = ask(server, "-w", str(project), "-a", str(project / "notes.md"), "--json", "hi")
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["tool_calls"]
    assert record["name"] == "read_file" and record["arguments"] == {"path": "notes.md"}


@pytest.mark.parametrize(
    ("attach", "why"),
    [
        ("missing.md", "File 'missing.md' not found in workspace"),
        ("../outside.md", "Path traversal detected: cannot access files outside workspace"),
        ("/etc/hostname", "'/etc/hostname' is outside the workspace"),
        (".env", "File '.env' is hidden"),
        ("src", "Cannot read file 'src': it is a directory"),
        ("blob.bin", "Cannot read file 'blob.bin': binary files are not supported"),
    ],
)
def test_an_attachment_that_cannot_be_read_stops_before_any_request(
    server, project, attach, why
) -> None:
    (project / ".env").write_text("TOKEN=1")
    (project / "blob.bin").write_bytes(b"\x00\x01\x02")
    (project.parent / "outside.md").write_text("x")
    done = ask(server, "-w", str(project), "--attach", attach, "hi")
    line = one_line_error(done, 2)
    assert line.startswith(f"skillchat: error: --attach {attach}: {why}")
    assert server.completions == []


def test_a_fifo_attachment_is_refused_without_blocking(server, project) -> None:
    import os

    os.mkfifo(project / "pipe")
    done = ask(server, "-w", str(project), "--attach", "pipe", "hi")
    assert "it is a FIFO, not a regular file" in one_line_error(done, 2)


def test_bad_workspaces(server, project, tmp_path) -> None:
    done = ask(server, "--workspace", str(tmp_path / "nope"), "hi")
    assert one_line_error(done, 2).endswith("nope' does not exist")
    done = ask(server, "--workspace", str(project / "notes.md"), "hi")
    assert one_line_error(done, 2).endswith("notes.md' is not a folder")
    (tmp_path / "config.toml").write_text(f'workspace = "{tmp_path / "gone"}"\n')
    done = ask(server, "--config", str(tmp_path / "config.toml"), "hi")
    assert "config.toml: workspace" in one_line_error(done, 1)
    done = ask(server, "--attach", "notes.md", "hi")
    assert "--attach needs a workspace" in one_line_error(done, 2)
    assert server.completions == []


def test_the_model_lists_and_searches_and_the_cards_show_query_and_hits(server, project) -> None:
    server.script(
        reply(calls=[call("list_files", {"glob": "*.py"})]),
        reply(calls=[call("search_files", {"query": "Friday"})]),
        reply("Friday, per notes.md."),
    )
    done = ask(server, "-w", str(project), "when do we ship?")
    assert done.returncode == 0, done.stderr
    listed, found = [json.loads(m["content"]) for m in tool_messages(server)]
    assert [e["path"] for e in listed["entries"]] == ["src/app.py"]
    [hit] = found["results"]
    assert (hit["docPath"], hit["chunkPath"]) == ("notes.md", "notes.md#L1-L3")
    assert "list_files" in done.stderr and 'glob="*.py"' in done.stderr
    assert "search_files" in done.stderr and 'query="Friday"' in done.stderr
    assert "1 matching file of 2 searched" in done.stderr
    assert "notes.md#L1-L3" in done.stderr
