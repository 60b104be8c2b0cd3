"""`list_files` and `search_files` end to end: the scripted model calls them through the
real SDK and the local server, and each test checks the tool message skillchat sent
back. The same rules as read_file (hidden, ignored, links, kinds), then every bad
input the issue names, each bounded and a clear result."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from chat_helpers import make_chat, registry, system_text, tool_messages
from helpers import write_files
from openai_server import ScriptedServer, call, reply

from skillchat.tools.toolbox import stored_result
from skillchat.workspace.files import Workspace

CART = (
    "".join(f"line {n}\n" for n in range(1, 40))
    .replace("line 20\n", "    total = round(price, 2)\n")
    .replace("line 23\n", "    return round(total, 2)\n")
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    files = {
        "src/cart.py": CART,
        "src/util/money.py": "def to_cents(x):\n    return round(x * 100)\n",
        "README.md": "# Shop\n",
        "build/out.py": "round(1)\n",
        ".env": "round(secret)\n",
        ".gitignore": "build/\n",
    }
    return Workspace.open(write_files(tmp_path / "project", files))


def results(server: ScriptedServer, ws: Workspace, *calls: dict) -> list[dict]:
    """The model makes `calls` (one round each); the decoded tool results sent back."""
    server.script(*[reply(calls=[c]) for c in calls], reply("done"))
    chat = make_chat(server, registry(), workspace=ws)
    assert chat.send("go").answer == "done"
    return [json.loads(m["content"]) for m in tool_messages(server)]


def listing(**args: object) -> dict:
    return call("list_files", args)


def search(query: object, **args: object) -> dict:
    return call("search_files", {"query": query, **args})


def error(code: str, message: str) -> dict:
    return {"success": False, "errorCode": code, "errors": [message]}


# ------------------------------------------------------------------- list_files


def test_the_system_prompt_points_at_the_finding_tools(server, ws) -> None:
    results(server, ws, listing())
    assert "Find workspace files with list_files and search_files" in (system_text(server) or "")


def test_a_folder_listing_is_sorted_sized_and_hides_what_read_file_refuses(server, ws) -> None:
    root, src = results(server, ws, listing(), listing(path="src"))
    assert root == {
        "success": True,
        "path": ".",
        "entries": [
            {"path": "README.md", "type": "file", "sizeBytes": 7},
            {"path": "src/", "type": "directory"},
        ],
        "total": 2,
        "isTruncated": False,
        "notices": [],
    }
    assert [e["path"] for e in src["entries"]] == ["src/cart.py", "src/util/"]


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("*.py", None, ["src/cart.py", "src/util/money.py"]),  # any depth, as rg -g
        ("**/*.py", None, ["src/cart.py", "src/util/money.py"]),
        ("src/*.py", None, ["src/cart.py"]),  # anchored: '*' never crosses '/'
        ("util/", "src", ["src/util/money.py"]),  # relative to path; a folder's files
        ("*.md", "src", []),
    ],
)
def test_globs(server, ws, glob, path, expected) -> None:
    [result] = results(server, ws, listing(glob=glob, path=path))
    assert [e["path"] for e in result["entries"]] == expected
    assert result["glob"] == glob and result["total"] == len(expected)


def test_a_long_listing_is_cut_and_says_so(server, ws) -> None:
    for n in range(600):
        (ws.root / "src" / f"gen{n:03d}.txt").write_text("x")
    [result] = results(server, ws, listing(path="src"))
    assert len(result["entries"]) == 500 and result["total"] == 602
    assert result["entries"][0]["path"] == "src/cart.py"  # sorted before cut
    assert result["isTruncated"] is True
    assert result["notices"] == [
        "showing the first 500 of 602 entries: narrow it with path or glob"
    ]


def test_a_walk_stops_past_its_entry_budget_and_says_so(ws) -> None:
    for n in range(50):
        (ws.root / "src" / f"g{n}.txt").write_text("x")
    walker = ws.walker(max_entries=20)
    found = list(walker.files(""))
    assert len(found) < 20
    assert walker.report.notes() == ["stopped after 20 entries: narrow it with path or glob"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            {"glob": "../*"},
            "PATH_TRAVERSAL",
            "glob '../*' has a '..': globs cannot leave the workspace",
        ),
        (
            {"glob": "/etc/*"},
            "PATH_TRAVERSAL",
            "glob '/etc/*' is absolute: globs are relative to the folder searched "
            "(the workspace root unless you pass path)",
        ),
        (
            {"path": "../other"},
            "PATH_TRAVERSAL",
            "Path traversal detected: cannot access files outside workspace",
        ),
        (
            {"path": "/etc"},
            "PATH_TRAVERSAL",
            "Path traversal detected: cannot access files outside workspace",
        ),
        (
            {"glob": "!*.py"},
            "INVALID_ARGUMENT",
            "glob '!*.py' starts with '!': give the files to select, not to skip",
        ),
        (
            {"glob": 3},
            "INVALID_ARGUMENT",
            "Invalid arguments for list_files: 'glob' must be a string",
        ),
        ({"path": "nope"}, "NOT_FOUND", "Folder 'nope' not found in the workspace"),
        ({"path": "README.md/x"}, "NOT_FOUND", "Folder 'README.md/x' not found in the workspace"),
        (
            {"path": ".git"},
            "PERMISSION_DENIED",
            "File '.git' is hidden ('.git' starts with '.'); hidden files and folders of the "
            "workspace are not readable",
        ),
        (
            {"path": "build"},
            "PERMISSION_DENIED",
            "File 'build' is ignored by the workspace's .gitignore; ignored files are not readable",
        ),
    ],
)
def test_bad_arguments_are_clear_errors(server, ws, args, code, message) -> None:
    [result] = results(server, ws, listing(**args))
    assert result == error(code, message)


def test_fifos_links_and_loops(server, ws, tmp_path) -> None:
    os.mkfifo(ws.root / "src" / "pipe")
    (ws.root / "src" / "out").symlink_to(tmp_path)  # leaves the workspace
    (ws.root / "src" / "up").symlink_to(ws.root / "src")  # a folder link: listed, never walked
    (ws.root / "src" / "self").symlink_to(ws.root / "src" / "self")  # a loop
    (ws.root / "src" / "alias.py").symlink_to(ws.root / "src" / "cart.py")
    (ws.root / "src" / "secret").symlink_to(ws.root / ".env")
    folder, walked, pipe, loop = results(
        server,
        ws,
        listing(path="src"),
        listing(glob="**"),
        listing(path="src/pipe"),
        listing(path="src/self"),
    )
    assert [e["path"] for e in folder["entries"]] == [
        "src/alias.py",
        "src/cart.py",
        "src/up/",
        "src/util/",
    ]
    assert [e["path"] for e in walked["entries"]] == [
        "README.md",
        "src/alias.py",
        "src/cart.py",
        "src/util/money.py",
    ]
    assert pipe == error("UNSUPPORTED_FILE", "'src/pipe' is not a folder")
    assert loop["errorCode"] == "UNSUPPORTED_FILE" and "symlink loop" in loop["errors"][0]


def test_a_gitignore_that_cannot_be_read_closes_its_folder(server, ws) -> None:
    os.mkfifo(ws.root / "src" / ".gitignore")
    root, src = results(server, ws, listing(glob="**"), listing(path="src"))
    assert [e["path"] for e in root["entries"]] == ["README.md"]
    notice = (
        "'src/.gitignore' cannot be read, so nothing in their folders is served until they "
        "can be (ask the user to fix them)"
    )
    assert root["notices"] == [notice]
    assert src["entries"] == [] and src["notices"] == [notice]


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens any folder")
def test_an_unreadable_folder_is_skipped_and_named(server, ws) -> None:
    (ws.root / "src" / "util").chmod(0)
    try:
        [result] = results(server, ws, listing(glob="**"))
    finally:
        (ws.root / "src" / "util").chmod(0o755)
    assert [e["path"] for e in result["entries"]] == ["README.md", "src/cart.py"]
    assert result["notices"] == ["folders that cannot be opened were skipped: 'src/util'"]


# ------------------------------------------------------------------- search_files


def test_snippets_have_a_docpath_a_chunkpath_and_merged_matches(server, ws) -> None:
    [result] = results(server, ws, search("round("))
    assert result["success"] is True and result["query"] == "round(" and result["regex"] is False
    cart, money = result["results"]
    assert cart == {
        "docPath": "src/cart.py",
        "chunkPath": "src/cart.py#L18-L25",
        "matchingLines": 2,
        "snippet": "18- line 18\n19- line 19\n20:     total = round(price, 2)\n21- line 21\n"
        "22- line 22\n23:     return round(total, 2)\n24- line 24\n25- line 25",
        "alreadyInContext": False,
    }
    assert (
        money["docPath"] == "src/util/money.py" and money["chunkPath"] == "src/util/money.py#L1-L2"
    )
    # build/ is ignored and .env hidden: neither is searched
    assert result["filesMatched"] == 2 and result["filesSearched"] == 3


def test_ranking_puts_names_then_counts_first(server, ws) -> None:
    write_files(ws.root, {"docs/round.md": "round\n", "a.txt": "round round\nround\n"})
    [result] = results(server, ws, search("round"))
    assert [(r["docPath"], r["matchingLines"]) for r in result["results"]] == [
        ("docs/round.md", 1),  # the file's name has the query
        ("a.txt", 2),  # then more matching lines, then shallower paths
        ("src/cart.py", 2),
        ("src/util/money.py", 1),
    ]


def test_regex_search_and_a_bad_regex(server, ws) -> None:
    good, bad, kind = results(
        server,
        ws,
        search(r"round\(\w+ \*", regex=True),
        search("round(", regex=True),
        search("x", regex="yes"),
    )
    assert [r["docPath"] for r in good["results"]] == ["src/util/money.py"]
    assert bad["errorCode"] == "INVALID_ARGUMENT"
    assert bad["errors"][0].startswith("query is not a valid regex: missing )")
    assert kind == error("INVALID_ARGUMENT", "regex must be true or false")


def test_a_catastrophic_regex_is_stopped(server, ws) -> None:
    (ws.root / "a.txt").write_text("a" * 5000 + "b\n")
    [result] = results(server, ws, search("(a|aa)+$", regex=True, path="a.txt"))
    assert result == error(
        "INVALID_ARGUMENT",
        "the regex took over 1 s on 'a.txt' (catastrophic backtracking?): simplify it, "
        "or search for literal text",
    )


def test_results_are_capped_with_a_notice(server, ws) -> None:
    for n in range(30):
        (ws.root / "src" / f"m{n:02d}.py").write_text("x = round(1)\n")
    [result] = results(server, ws, search("round(", glob="src/*.py"))
    assert len(result["results"]) == 20 and result["filesMatched"] == 31
    assert result["isTruncated"] is True
    assert result["notices"] == [
        "showing the 20 best of 31 matching files: narrow the query, path or glob to see others"
    ]


def test_huge_binary_fifo_and_long_lines(server, ws) -> None:
    with open(ws.root / "huge.log", "wb") as f:  # 1 GB, sparse: costs no disk
        f.truncate(1024**3)
    (ws.root / "blob.bin").write_bytes(b"round(\x00\x01")
    os.mkfifo(ws.root / "pipe")
    (ws.root / "min.js").write_text("x" * 5000 + "round(" + "y" * 5000 + "\n")
    [result] = results(server, ws, search("round("))
    [line] = next(r for r in result["results"] if r["docPath"] == "min.js")["snippet"].splitlines()
    assert line == "1: " + "x" * 240 + "…"
    assert result["notices"] == [
        "1 files over 2,000,000 bytes were not searched: 'huge.log'",
        "1 binary or unreadable files were not searched",
    ]


def test_a_snippet_of_a_file_in_context_says_so(server, ws) -> None:
    read, found, again = results(
        server,
        ws,
        call("read_file", {"path": "src/cart.py"}),
        search("round("),
        call("read_file", {"path": "src/cart.py"}),
    )
    assert read["success"] is True
    flags = {r["docPath"]: r["alreadyInContext"] for r in found["results"]}
    assert flags == {"src/cart.py": True, "src/util/money.py": False}
    assert found["notices"] == [
        "results marked alreadyInContext come from files whose full text is already in this "
        "conversation: reuse that text instead of calling read_file"
    ]
    assert again["errorCode"] == "ALREADY_IN_CONTEXT"


def test_search_results_are_stored_without_snippets(server, ws) -> None:
    [result] = results(server, ws, search("round("))
    stored = json.loads(
        stored_result("search_files", '{"query": "round("}', json.dumps(result)).content
    )
    assert stored["results"][0] == {
        "docPath": "src/cart.py",
        "chunkPath": "src/cart.py#L18-L25",
        "matchingLines": 2,
    }
    assert "round(price" not in json.dumps(stored)
    assert stored["stub"] == "snippets not stored; call search_files again if needed"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ({"query": ""}, "INVALID_ARGUMENT", "query must be a non-empty string"),
        ({"query": 5}, "INVALID_ARGUMENT", "query must be a non-empty string"),
        (
            {},
            "INVALID_ARGUMENT",
            "Invalid arguments for search_files: missing required argument 'query'",
        ),
        (
            {"query": "x", "glob": "../*"},
            "PATH_TRAVERSAL",
            "glob '../*' has a '..': globs cannot leave the workspace",
        ),
        (
            {"query": "x", "path": "src/pipe"},
            "UNSUPPORTED_FILE",
            "'src/pipe' is not a regular file or folder",
        ),
    ],
)
def test_bad_search_arguments(server, ws, args, code, message) -> None:
    os.mkfifo(ws.root / "src" / "pipe")
    [result] = results(server, ws, call("search_files", args))
    assert result == error(code, message)
