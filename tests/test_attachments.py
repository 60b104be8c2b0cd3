"""Active files: `@path` mentions and `Chat.attach`, in process against the scripted
server. Each test checks what was sent: the synthetic read_file call and result after
the user message (tools on), or the inline block (tools off); and what a later read
of the same file gets back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import (
    RecordingView,
    make_chat,
    registry,
    sent,
    system_text,
    tool_messages,
    write_skill,
)
from helpers import write_files
from openai_server import ScriptedServer, call, reply

from skillchat.errors import FileAccessError, UsageError
from skillchat.workspace.files import Workspace
from skillchat.workspace.mentions import candidates, mentioned_paths

NOTES = "# Notes\n\nship it\n"
ALREADY = "File 'notes.md' is already present in activeFiles for this session; reuse that content."


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    files = {"notes.md": NOTES, "src/app.py": "print(1)\n"}
    return Workspace.open(write_files(tmp_path / "project", files))


def attached_payloads(server: ScriptedServer, n: int = 0) -> list[dict]:
    return [json.loads(m["content"]) for m in tool_messages(server, n)]


# ------------------------------------------------------------------ @path syntax


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("explain @notes.md", ["notes.md"]),
        ("@notes.md first", ["notes.md"]),
        ("see @notes.md.", ["notes.md"]),
        ("(see @src/app.py)", ["src/app.py"]),
        ("'@notes.md', please", ["notes.md"]),
        ("@notes.md and @notes.md", ["notes.md"]),
        ("@src/app.py @notes.md", ["src/app.py", "notes.md"]),
        ("mail me at ada@notes.md", []),  # inside a word: an e-mail, not a mention
        ("ping @alice", []),  # nothing of that name: plain text
        ("@ alone", []),
        ("a@b@notes.md", []),
    ],
)
def test_mentions(ws, text, expected) -> None:
    assert mentioned_paths(text, ws.root) == expected


def test_trailing_punctuation_is_kept_when_the_file_has_it(ws) -> None:
    (ws.root / "v1.0.").write_text("odd")
    assert mentioned_paths("see @v1.0.", ws.root) == ["v1.0."]
    assert candidates("a.md),") == ["a.md),", "a.md)", "a.md"]


# ------------------------------------------------------------------ tools on


def test_mention_attaches_as_a_read_file_result_after_the_user_message(server, ws) -> None:
    server.script(reply("It says ship it."))
    view = RecordingView()
    result = make_chat(server, registry(), view, workspace=ws).send("summarise @notes.md")
    assert result.answer == "It says ship it." and result.requests == 1
    user, assistant, tool = sent(server)[1:]
    assert user == {"role": "user", "content": "summarise @notes.md"}
    [tool_call] = assistant["tool_calls"]
    assert tool_call["function"] == {"name": "read_file", "arguments": '{"path": "notes.md"}'}
    assert tool["tool_call_id"] == tool_call["id"]
    assert json.loads(tool["content"]) == {
        "success": True,
        "file": {
            "path": "notes.md",
            "sizeBytes": len(NOTES),
            "content": NOTES,
            "isTruncated": False,
        },
    }
    [card] = view.of("tool")
    assert card.synthetic and card.name == "read_file"
    assert [(f.path, f.size) for f in result.attached] == [("notes.md", len(NOTES))]


def test_a_read_of_an_attached_file_is_already_in_context(server, ws) -> None:
    server.script(reply(calls=[call("read_file", {"path": "notes.md"})]), reply("ok"))
    make_chat(server, registry(), workspace=ws).send("@notes.md what now?")
    [attached, again] = attached_payloads(server, 1)
    assert attached["success"] is True
    assert again == {"success": False, "errorCode": "ALREADY_IN_CONTEXT", "errors": [ALREADY]}


def test_an_attached_file_changed_on_disk_is_served_again(server, ws) -> None:
    server.script(reply("ok"))
    chat = make_chat(server, registry(), workspace=ws)
    chat.send("@notes.md")
    (ws.root / "notes.md").write_text(NOTES + "and test it\n")
    server.script(reply(calls=[call("read_file", {"path": "notes.md"})]), reply("ok"))
    chat.send("I edited it, read it again")
    fresh = attached_payloads(server, -1)[-1]
    assert fresh["success"] is True and fresh["file"]["content"].endswith("and test it\n")


def test_attaching_unchanged_content_again_is_skipped_with_a_notice(server, ws) -> None:
    server.script(reply("ok"), reply("ok"), reply("ok"))
    view = RecordingView()
    chat = make_chat(server, registry(), view, workspace=ws)
    chat.send("@notes.md")
    assert chat.send("again @notes.md").attached == []
    assert sent(server)[-1] == {"role": "user", "content": "again @notes.md"}
    assert "notes.md is already in the conversation, unchanged: not sent again" in view.of("notice")
    (ws.root / "notes.md").write_text("new\n")
    assert [f.text for f in chat.send("and @notes.md").attached] == ["new\n"]


def test_attach_queues_for_the_next_message(server, ws) -> None:
    server.script(reply("ok"))
    chat = make_chat(server, registry(), workspace=ws)
    chat.attach("src/app.py")
    chat.attach(str(ws.root / "notes.md"))  # absolute, inside the workspace
    chat.attach("./notes.md")  # the same file: once
    result = chat.send("compare them")
    assert [f.path for f in result.attached] == ["src/app.py", "notes.md"]
    [assistant] = [m for m in sent(server) if m.get("tool_calls")]
    paths = [json.loads(c["function"]["arguments"])["path"] for c in assistant["tool_calls"]]
    assert paths == ["src/app.py", "notes.md"]
    server.script(reply("ok"))
    assert chat.send("next").attached == []  # the queue was emptied


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("missing.md", "NOT_FOUND"),
        ("../outside.md", "PATH_TRAVERSAL"),
        ("/etc/hosts", "PATH_TRAVERSAL"),
        (".env", "PERMISSION_DENIED"),
        ("src", "UNSUPPORTED_FILE"),
    ],
)
def test_attach_refuses_at_once(server, ws, path, code) -> None:
    (ws.root / ".env").write_text("TOKEN=1")
    chat = make_chat(server, registry(), workspace=ws)
    with pytest.raises(FileAccessError) as caught:
        chat.attach(path)
    assert caught.value.code == code


def test_attach_without_a_workspace_is_a_usage_error(server) -> None:
    with pytest.raises(UsageError, match="needs a workspace"):
        make_chat(server, registry()).attach("notes.md")


def test_without_a_workspace_mentions_are_plain_text(server, ws, monkeypatch) -> None:
    monkeypatch.chdir(ws.root)
    server.script(reply("ok"))
    assert make_chat(server, registry()).send("@notes.md").attached == []
    assert sent(server) == [{"role": "user", "content": "@notes.md"}]


def test_refused_mentions_become_notices_and_the_message_still_goes(server, ws) -> None:
    (ws.root / ".env").write_text("TOKEN=1")
    (ws.root / "blob.bin").write_bytes(b"\x00\x01")
    server.script(reply("ok"))
    view = RecordingView()
    result = make_chat(server, registry(), view, workspace=ws).send("@.env @blob.bin @src hi")
    assert result.answer == "ok" and result.attached == []
    assert sent(server) == [
        sent(server)[0],  # the system prompt
        {"role": "user", "content": "@.env @blob.bin @src hi"},
    ]
    notices = view.of("notice")
    assert len(notices) == 3 and all(n.startswith("not attached: ") for n in notices)
    assert "binary files are not supported" in notices[1]


def test_an_attachment_gone_before_sending_is_a_notice(server, ws) -> None:
    server.script(reply("ok"))
    view = RecordingView()
    chat = make_chat(server, registry(), view, workspace=ws)
    chat.attach("notes.md")
    (ws.root / "notes.md").unlink()
    assert chat.send("hi").attached == []
    assert view.of("notice") == ["not attached: notes.md: File 'notes.md' not found in workspace"]


def test_with_a_skill_invocation_the_skill_comes_first(server, ws, tmp_path) -> None:
    reg = registry(write_skill(tmp_path / "skills", "review", "# Review\n\n$ARGUMENTS\n"))
    server.script(reply("ok"))
    make_chat(server, reg, workspace=ws).send("/review @src/app.py")
    names = [m["tool_calls"][0]["function"]["name"] for m in sent(server) if m.get("tool_calls")]
    assert names == ["get_skill", "read_file"]
    assert sent(server)[1] == {"role": "user", "content": "@src/app.py"}


# ------------------------------------------------------------------ tools off


def test_without_tools_the_file_is_a_block_in_the_user_message(server, ws) -> None:
    server.script(reply("ok"))
    view = RecordingView()
    chat = make_chat(server, registry(), view, workspace=ws, tools=False)
    chat.send("summarise @notes.md")
    body = server.completions[0].body
    assert "tools" not in body
    assert sent(server)[1] == {
        "role": "user",
        "content": f'<file path="notes.md">\n{NOTES}\n</file>\n\nsummarise @notes.md',
    }
    prompt = system_text(server)
    assert prompt is not None and '<file path="...">' in prompt and "read_file" not in prompt
    [card] = view.of("tool")
    assert card.synthetic
    server.script(reply("ok"))
    assert chat.send("again @notes.md").attached == []  # unchanged: not inlined twice
