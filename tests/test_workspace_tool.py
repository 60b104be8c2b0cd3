"""`read_file` over the workspace (docs/tools.md), end to end: the scripted model calls the
tool through the real SDK and the local server, and each test checks the tool
message skillchat sent back. Then every bad input, each a clear error, the chat
going on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from chat_helpers import make_chat, registry, sent, system_text, tool_messages, write_skill
from helpers import write_files
from openai_server import ScriptedServer, call, reply

from skillchat.engine.context_fit import ELIDED
from skillchat.errors import FileAccessError
from skillchat.workspace.files import Workspace

APP = "def main():\n    print('hi')\n"
TRAVERSAL = "Path traversal detected: cannot access files outside workspace"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    files = {"src/app.py": APP, "README.md": "# Project\n"}
    return Workspace.open(write_files(tmp_path / "project", files))


def read(path: object = None, **extra: object) -> dict:
    args = {"path": path} if path is not None else {}
    return call("read_file", {**args, **extra})


def result_of(server: ScriptedServer, ws: Workspace, *calls: dict, **overrides: object) -> list:
    """The model makes `calls` (one round each); the decoded tool results sent back."""
    server.script(*[reply(calls=[c]) for c in calls], reply("done"))
    chat = make_chat(server, registry(), workspace=ws, **overrides)
    assert chat.send("go").answer == "done"
    return [json.loads(m["content"]) for m in tool_messages(server)]


def error(code: str, message: str) -> dict:
    return {"success": False, "errorCode": code, "errors": [message]}


# ---------------------------------------------------------- contract shapes


def test_success_payload_is_the_contracts(server, ws) -> None:
    [result] = result_of(server, ws, read("src/app.py"))
    assert result == {
        "success": True,
        "file": {"path": "src/app.py", "sizeBytes": len(APP), "content": APP, "isTruncated": False},
    }
    assert list(result["file"]) == ["path", "sizeBytes", "content", "isTruncated"]


@pytest.mark.parametrize("key", ["max_bytes", "maxBytes"])
def test_max_bytes_cuts_and_sets_is_truncated(server, ws, key) -> None:
    [result] = result_of(server, ws, read("src/app.py", **{key: 10}))
    assert result["file"] == {
        "path": "src/app.py",
        "sizeBytes": len(APP),
        "content": APP[:10],
        "isTruncated": True,
        "nextOffset": 10,
    }


def test_offset_reads_on_where_a_cut_read_stopped(server, ws) -> None:
    # A cut first piece, then the rest from the offset it names: other content, so
    # not ALREADY_IN_CONTEXT; the whole file is then in context in two pieces.
    first, rest = result_of(
        server, ws, read("src/app.py", max_bytes=10), read("src/app.py", offset=10)
    )
    assert first["file"]["content"] == APP[:10] and first["file"]["nextOffset"] == 10
    assert rest["file"] == {
        "path": "src/app.py",
        "sizeBytes": len(APP),
        "content": APP[10:],
        "isTruncated": False,
    }


def test_an_offset_inside_a_file_already_whole_in_context_is_a_repeat(server, ws) -> None:
    whole, part = result_of(server, ws, read("src/app.py"), read("src/app.py", offset=4))
    assert whole["file"]["content"] == APP
    assert part["errorCode"] == "ALREADY_IN_CONTEXT"


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (-1, "Invalid arguments for read_file: 'offset' must be a non-negative integer (bytes)"),
        ("3", "Invalid arguments for read_file: 'offset' must be a non-negative integer (bytes)"),
        (len(APP), f"offset {len(APP)} is past the end of 'src/app.py' ({len(APP)} bytes)"),
    ],
)
def test_a_bad_offset_is_an_error(server, ws, offset: object, message: str) -> None:
    [result] = result_of(server, ws, read("src/app.py", offset=offset))
    assert result == error("INVALID_ARGUMENT", message)


def test_one_result_is_capped_at_a_quarter_of_the_context_budget(server, tmp_path) -> None:
    big = "".join(f"line {i:05}\n" for i in range(2_000))  # 22,000 bytes
    ws = Workspace.open(write_files(tmp_path / "p", {"big.txt": big}))
    [result] = result_of(server, ws, read("big.txt"), context_max_chars=20_000)
    assert result["file"]["content"] == big[:5_000] and result["file"]["isTruncated"]
    assert result["file"]["nextOffset"] == 5_000


def test_not_found_has_the_contract_message(server, ws) -> None:
    [result] = result_of(server, ws, read("src/Experimental.py"))
    assert result == error(
        "NOT_FOUND",
        "File 'src/Experimental.py' is not available in activeFiles or the workspace. "
        "Ask the user to attach it if needed.",
    )


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ("{}", "missing required argument 'path'"),
        ('{"path": ""}', "'path' must be a non-empty string"),
        ('{"path": "  "}', "'path' must be a non-empty string"),
        ('{"path": 7}', "'path' must be a non-empty string"),
        ('{"path": "a", "max_bytes": 0}', "'max_bytes' must be a positive integer"),
        ('{"path": "a", "max_bytes": "10"}', "'max_bytes' must be a positive integer"),
        ('{"path": "a", "max_bytes": true}', "'max_bytes' must be a positive integer"),
        ("[1]", "arguments must be a JSON object"),
        ('{"path": ', "arguments are not valid JSON"),
    ],
)
def test_invalid_arguments(server, ws, arguments, why) -> None:
    [result] = result_of(server, ws, call("read_file", arguments))
    assert result["success"] is False and result["errorCode"] == "INVALID_ARGUMENT"
    assert result["errors"][0].startswith(f"Invalid arguments for read_file: {why}")


def test_unexpected_failure_is_internal_error(server, ws) -> None:
    [result] = result_of(server, ws, read("x" * 300))  # ENAMETOOLONG from the OS
    assert result["errorCode"] == "INTERNAL_ERROR"
    assert "File name too long" in result["errors"][0]


# ---------------------------------------------------------------- active files


ALREADY = (
    "File 'src/app.py' is already present in activeFiles for this session; reuse that content."
)


def test_a_second_read_of_unchanged_content_is_already_in_context(server, ws) -> None:
    first, second, shorter = result_of(
        server, ws, read("src/app.py"), read("./src//app.py"), read("src/app.py", max_bytes=5)
    )
    assert first["success"] is True
    assert second == error("ALREADY_IN_CONTEXT", ALREADY)
    assert shorter == error("ALREADY_IN_CONTEXT", ALREADY)  # a prefix of what is there


def test_changed_on_disk_is_served_afresh(server, ws) -> None:
    server.script(reply(calls=[read("src/app.py")]), reply("ok"))
    chat = make_chat(server, registry(), workspace=ws)
    chat.send("read it")
    (ws.root / "src" / "app.py").write_text(APP + "# edited\n")
    server.script(reply(calls=[read("src/app.py")]), reply("ok"))
    chat.send("again")
    result = json.loads(tool_messages(server)[-1]["content"])
    assert result["success"] is True and result["file"]["content"].endswith("# edited\n")


def test_a_result_elided_past_the_budget_is_served_again(server, ws) -> None:
    """Four reads of ~1.9 KB pass an 8,000-character budget: the first read leaves the
    context, and reading that file again is served, not ALREADY_IN_CONTEXT."""
    write_files(ws.root, {f"big{n}.txt": str(n) * 1_900 for n in range(4)})
    paths = ["src/app.py", *(f"big{n}.txt" for n in range(4)), "src/app.py"]
    for path in paths:
        server.script(reply(calls=[read(path)]), reply("ok"))
    chat = make_chat(server, registry(), workspace=ws, context_max_chars=8_000)
    for path in paths:
        chat.send(f"read {path}")
    first = next(m for m in sent(server) if m.get("role") == "tool")
    assert first["content"] == ELIDED
    assert json.loads(tool_messages(server)[-1]["content"])["file"]["content"] == APP


def test_a_cut_read_does_not_hide_the_whole_file(server, ws) -> None:
    cut, whole = result_of(server, ws, read("src/app.py", max_bytes=5), read("src/app.py"))
    assert cut["file"]["isTruncated"] is True
    assert whole["file"]["content"] == APP


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "path",
    [
        "../outside.txt",
        "src/../../outside.txt",
        "..\\outside.txt",
        "src\\..\\..\\outside.txt",
        "./../outside.txt",
        "/etc/passwd",
        "\\etc\\passwd",
        "C:\\Windows\\win.ini",
        "c:/Windows/win.ini",
        "\\\\host\\share\\x",
        "..",
    ],
)
def test_traversal_in_every_spelling(server, ws, path) -> None:
    (ws.root.parent / "outside.txt").write_text("secret")
    [result] = result_of(server, ws, read(path))
    assert result == error("PATH_TRAVERSAL", TRAVERSAL)


def test_nul_byte_is_invalid(server, ws) -> None:
    [result] = result_of(server, ws, read("src/app.py\x00.txt"))
    assert result["errorCode"] == "INVALID_ARGUMENT"


def test_symlink_leaving_the_workspace(server, ws) -> None:
    (ws.root.parent / "secret.txt").write_text("secret")
    (ws.root / "link.txt").symlink_to(ws.root.parent / "secret.txt")
    (ws.root / "linkdir").symlink_to(ws.root.parent)
    results = result_of(server, ws, read("link.txt"), read("linkdir/secret.txt"))
    assert results == [error("PATH_TRAVERSAL", TRAVERSAL)] * 2


def test_symlink_inside_the_workspace_is_followed(server, ws) -> None:
    (ws.root / "alias.py").symlink_to(ws.root / "src" / "app.py")
    [result] = result_of(server, ws, read("alias.py"))
    assert result["file"]["content"] == APP and result["file"]["path"] == "alias.py"


def test_fifo_directory_and_binary_are_unsupported(server, ws) -> None:
    os.mkfifo(ws.root / "pipe")
    (ws.root / "logo.png").write_bytes(b"PK\x03\x04\x00\x00")  # a zip named .png: no image
    (ws.root / "latin1.txt").write_bytes("café".encode("latin-1"))
    results = result_of(server, ws, read("pipe"), read("src"), read("logo.png"), read("latin1.txt"))
    assert [r["errorCode"] for r in results] == ["UNSUPPORTED_FILE"] * 4
    assert results[0]["errors"] == ["Cannot read file 'pipe': it is a FIFO, not a regular file"]
    assert results[1]["errors"] == ["Cannot read file 'src': it is a directory"]
    assert results[2]["errors"] == ["Cannot read file 'logo.png': binary files are not supported"]


def test_huge_file_is_cut_at_max_resource_bytes(server, ws) -> None:
    with (ws.root / "huge.log.txt").open("wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of NULs, never read whole
        f.seek(0)
        f.write(b"line\n" * 100)
    [result] = result_of(server, ws, read("huge.log.txt"), max_resource_bytes=200)
    assert result["file"]["isTruncated"] is True
    assert result["file"]["sizeBytes"] == 64 * 1024 * 1024
    assert result["file"]["content"] == "line\n" * 40
    [result] = result_of(server, ws, read("huge.log.txt", max_bytes=10**9), max_resource_bytes=300)
    assert result["file"]["content"] == "line\n" * 60  # max_bytes only lowers the limit


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_permission_denied(server, ws) -> None:
    (ws.root / "locked.txt").write_text("x")
    (ws.root / "locked.txt").chmod(0)
    [result] = result_of(server, ws, read("locked.txt"))
    assert result == error("PERMISSION_DENIED", "Cannot read file 'locked.txt': permission denied")


# ---------------------------------------------------------------- hidden and ignored


@pytest.mark.parametrize(
    ("path", "segment"),
    [(".env", ".env"), (".git/config", ".git"), ("src/.secrets/key.txt", ".secrets")],
)
def test_hidden_paths_are_refused(server, ws, path, segment) -> None:
    (ws.root / path).parent.mkdir(parents=True, exist_ok=True)
    (ws.root / path).write_text("TOKEN=1")
    [result] = result_of(server, ws, read(path))
    assert result == error(
        "PERMISSION_DENIED",
        f"File '{path}' is hidden ('{segment}' starts with '.'); hidden files and folders "
        "of the workspace are not readable",
    )


def test_a_link_to_a_hidden_file_is_refused(server, ws) -> None:
    (ws.root / ".env").write_text("TOKEN=1")
    (ws.root / "notes.txt").symlink_to(ws.root / ".env")
    [result] = result_of(server, ws, read("notes.txt"))
    assert result["errorCode"] == "PERMISSION_DENIED" and "'.env' is hidden" in result["errors"][0]


def test_gitignore_root_and_nested(server, ws) -> None:
    (ws.root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (ws.root / "src" / ".gitignore").write_text("generated_*.py\n")
    for rel in ("build/out.js", "debug.log", "keep.log", "src/generated_api.py", "gen.py"):
        (ws.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / rel).write_text("x")
    results = result_of(
        server,
        ws,
        read("build/out.js"),
        read("debug.log"),
        read("keep.log"),
        read("src/generated_api.py"),
        read("gen.py"),
    )
    ignored = "is ignored by the workspace's .gitignore; ignored files are not readable"
    assert [r.get("errorCode") for r in results] == [
        "PERMISSION_DENIED",
        "PERMISSION_DENIED",
        None,
        "PERMISSION_DENIED",
        None,
    ]
    assert results[0]["errors"] == [f"File 'build/out.js' {ignored}"]


def test_a_link_to_an_ignored_file_is_refused(server, ws) -> None:
    (ws.root / ".gitignore").write_text("secrets.txt\n")
    (ws.root / "secrets.txt").write_text("x")
    (ws.root / "plain.txt").symlink_to(ws.root / "secrets.txt")
    [result] = result_of(server, ws, read("plain.txt"))
    assert result["errors"][0].startswith("File 'secrets.txt' is ignored")


def test_git_info_exclude_is_read(server, ws) -> None:
    (ws.root / ".git" / "info").mkdir(parents=True)
    (ws.root / ".git" / "info" / "exclude").write_text("*.local\n")
    (ws.root / "db.local").write_text("x")
    [result] = result_of(server, ws, read("db.local"))
    assert result["errorCode"] == "PERMISSION_DENIED" and "is ignored" in result["errors"][0]


def test_a_latin1_gitignore_matches_the_bytes_of_names(server, ws) -> None:
    (ws.root / ".gitignore").write_bytes(b"caf\xe9\n")
    (ws.root / os.fsdecode(b"caf\xe9")).write_text("latin-1 name")
    (ws.root / "café").write_text("utf-8 name")
    [utf8] = result_of(server, ws, read("café"))
    assert utf8["success"] is True
    with pytest.raises(FileAccessError, match="is ignored"):  # no JSON can name it
        ws.read(os.fsdecode(b"caf\xe9"), limit=100)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: p.write_bytes(b"*.log\n\x00"), "it holds NUL bytes"),
        (lambda p: os.mkfifo(p), "it is a FIFO, not a regular file"),
        (lambda p: p.mkdir(), "it is a directory"),
        (lambda p: p.symlink_to("/etc/hostname"), "it is a symbolic link"),
        (lambda p: p.write_bytes(b"#" * (1024 * 1024 + 1)), "it is over 1,048,576 bytes"),
    ],
)
def test_an_unreadable_gitignore_fails_closed(server, ws, make, why) -> None:
    make(ws.root / "src" / ".gitignore")
    inside, outside = result_of(server, ws, read("src/app.py"), read("README.md"))
    assert inside == error(
        "PERMISSION_DENIED",
        f"File 'src/app.py' cannot be served: the workspace's 'src/.gitignore' cannot be "
        f"read ({why}), so nothing in 'src/' is served until it can be",
    )
    assert outside["success"] is True  # only its own folder is closed


def test_an_unreadable_root_gitignore_closes_the_workspace(server, ws) -> None:
    os.mkfifo(ws.root / ".gitignore")
    [result] = result_of(server, ws, read("README.md"))
    assert result["errorCode"] == "PERMISSION_DENIED"
    assert result["errors"][0].endswith("so nothing in the workspace is served until it can be")


# ---------------------------------------------------------------- what the model is told


WORKSPACE_TOOLS = ["read_file", "list_files", "search_files"]


def test_workspace_alone_sends_only_the_workspace_tools_and_names_the_folder(server, ws) -> None:
    result_of(server, ws, read("README.md"))
    body = server.completions[0].body
    assert [t["function"]["name"] for t in body["tools"]] == WORKSPACE_TOOLS
    prompt = system_text(server, 0)
    assert prompt is not None and "the folder 'project'" in prompt and "read_file" in prompt
    assert str(ws.root) not in json.dumps(body)  # the name, never the absolute path


def test_with_skills_read_file_comes_after_the_skill_tools(server, ws, tmp_path) -> None:
    reg = registry(write_skill(tmp_path / "skills", "pdf"))
    server.script(reply("hi"))
    make_chat(server, reg, workspace=ws).send("hello")
    names = [t["function"]["name"] for t in server.completions[0].body["tools"]]
    assert names == ["list_skills", "get_skill", "read_file_in_skill", *WORKSPACE_TOOLS]


def test_without_a_workspace_read_file_is_an_unknown_tool(server, tmp_path) -> None:
    reg = registry(write_skill(tmp_path / "skills", "pdf"))
    server.script(reply(calls=[read("a.txt")]), reply("done"))
    make_chat(server, reg).send("go")
    content = json.loads(tool_messages(server)[0]["content"])
    assert content["error_code"] == "INVALID_ARGUMENT"
    assert content["error"] == (
        "Unknown tool 'read_file'. Available: list_skills, get_skill, read_file_in_skill"
    )
    assert "read_file" not in [t["function"]["name"] for t in server.completions[0].body["tools"]]
    assert "workspace" not in (system_text(server, 0) or "")


def test_without_skills_the_skill_tools_are_unknown(server, ws) -> None:
    # A workspace-only chat: the skill tools are neither offered nor run, and the
    # error names only what is offered.
    calls = [call("get_skill", {"skill_name": "pdf"}), call("list_skills", {})]
    server.script(reply(calls=calls), reply("done"))
    make_chat(server, registry(), workspace=ws).send("go")
    for message, name in zip(tool_messages(server), ("get_skill", "list_skills"), strict=True):
        assert json.loads(message["content"]) == {
            "error": f"Unknown tool '{name}'. Available: {', '.join(WORKSPACE_TOOLS)}",
            "error_code": "INVALID_ARGUMENT",
        }
    assert [t["function"]["name"] for t in server.completions[0].body["tools"]] == WORKSPACE_TOOLS


def test_errors_keep_the_chat_going(server, ws) -> None:
    server.script(reply(calls=[read("../x"), read("nope"), read("README.md")]), reply("fine"))
    chat = make_chat(server, registry(), workspace=ws)
    assert chat.send("go").answer == "fine"
    server.script(reply("still here"))
    assert chat.send("and now?").answer == "still here"
    assert sent(server)[-1] == {"role": "user", "content": "and now?"}
