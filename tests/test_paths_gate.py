"""Claude Code's `paths`: a skill is in the catalog only while the workspace has a
matching file (or one was read in this chat), checked every turn from the
workspace's file index; `/name` works regardless."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from chat_helpers import make_chat, registry, settings_for, system_text, tool_messages
from helpers import skill_folder, write_files
from openai_server import ScriptedServer, call, reply

from skillchat.session import Session
from skillchat.skills.model import Skill
from skillchat.skills.paths import skill_paths
from skillchat.skills.registry import discover
from skillchat.workspace.files import Workspace
from skillchat.workspace.index import FileIndex, PathGlobs


def test_paths_read_as_claude_code_reads_them() -> None:
    assert skill_paths({"paths": "src/*.{ts,tsx}, docs/**"}) == ("src/*.tsx", "src/*.ts", "docs")
    assert skill_paths({"paths": ["*.py", " ", 3, "lib/**/*.rb"]}) == ("*.py", "lib/**/*.rb")
    assert skill_paths({"paths": ["**"]}) is None  # every file: always listed
    assert skill_paths({"paths": []}) is None
    assert skill_paths({"paths": {"a": 1}}) is None
    assert skill_paths({}) is None
    many = skill_paths({"paths": "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}"})
    assert many is not None and len(many) <= 256  # brace expansion is bounded


def test_globs_match_as_gitignore_lines() -> None:
    globs = PathGlobs(["*.py", "docs", "app/models/*.rb"])
    assert globs.matches("a.py") and globs.matches("deep/er/b.py")
    assert globs.matches("docs/x/y.txt") and globs.matches("src/docs/z.md")
    assert globs.matches("app/models/user.rb") and not globs.matches("x/app/models/user.rb")
    assert not globs.matches("a.pyc") and not globs.matches("readme.md")
    assert globs.count("docs/x", ["docs/x/1", "docs/x/2"]) == 2
    assert globs.count("src", ["src/a.py", "src/b.js"]) == 1


def test_the_index_follows_changes_folder_by_folder(tmp_path: Path) -> None:
    root = write_files(tmp_path / "ws", {"a.txt": "", "src/b.txt": "", ".hidden/c.py": ""})
    index = FileIndex(Workspace.open(root))
    assert index.refresh() == {"", "src"}
    assert index.files("src") == ("src/b.txt",) and index.files(".hidden") == ()
    assert index.refresh() == set()  # nothing moved: nothing listed again
    write_files(root, {"src/new/deeper/d.py": ""})
    assert index.refresh() == {"src", "src/new", "src/new/deeper"}
    assert index.files("src/new/deeper") == ("src/new/deeper/d.py",)
    (root / "src/new/deeper/d.py").unlink()
    (root / "src/new/deeper").rmdir()
    assert "src/new/deeper" in index.refresh() and index.files("src/new/deeper") == ()
    # A .gitignore edited in place (its folder's time unmoved) is seen, and applied.
    write_files(root, {".gitignore": "# none yet\n"})
    index.refresh()
    stamp = os.stat(root).st_mtime_ns
    (root / ".gitignore").write_text("*.txt\n")
    os.utime(root, ns=(stamp, stamp))
    index.refresh()
    assert index.files("") == () and index.files("src") == ()


@pytest.fixture
def gated(tmp_path: Path) -> dict[str, Skill]:
    root = tmp_path / "skills"
    skill_folder(root, "py-lint", "name: py-lint\ndescription: Lints Python.\npaths: ['*.py']\n")
    skill_folder(root, "doc-writer", "name: doc-writer\ndescription: Docs.\npaths: docs/**\n")
    skill_folder(root, "always", "name: always\ndescription: Always here.\n")
    return discover([root]).skills


def listed(server: ScriptedServer) -> set[str]:
    lines = (system_text(server) or "").splitlines()
    line = next(text for text in lines if "available_skills" in text)
    return {entry["name"] for entry in json.loads(line)["available_skills"]}


def test_a_workspace_that_gains_and_loses_a_matching_file(
    server: ScriptedServer, gated: dict[str, Skill], tmp_path: Path
) -> None:
    ws = write_files(tmp_path / "ws", {"README.md": "hi\n", ".gitignore": "build/\n"})
    chat = make_chat(server, registry(*gated.values()), workspace=Workspace.open(ws))
    server.script(*(reply(f"answer {i}") for i in range(6)))
    chat.send("one")
    assert listed(server) == {"always"}
    write_files(ws, {"src/pkg/tool.py": "print(1)\n"})
    chat.send("two")
    assert listed(server) == {"always", "py-lint"}
    (ws / "src/pkg/tool.py").unlink()
    write_files(ws, {"build/gen.py": "", ".cache/x.py": ""})  # ignored and hidden: not files
    chat.send("three")
    assert listed(server) == {"always"}
    chat.send("/py-lint check this")  # the user's /name works regardless
    assert json.loads(tool_messages(server)[-1]["content"])["skill_name"] == "py-lint"
    assert "py-lint" not in listed(server)


def test_a_file_read_in_this_chat_keeps_its_skill_listed(
    server: ScriptedServer, gated: dict[str, Skill], tmp_path: Path
) -> None:
    ws = write_files(tmp_path / "ws", {"docs/guide.txt": "the guide\n"})
    chat = make_chat(server, registry(*gated.values()), workspace=Workspace.open(ws))
    server.script(
        reply(calls=[call("read_file", {"path": "docs/guide.txt"})]),
        reply("read"),
        reply("later"),
    )
    chat.send("read the guide")
    assert "doc-writer" in listed(server)
    (ws / "docs/guide.txt").unlink()
    chat.send("and now")
    assert listed(server) == {"always", "doc-writer"}


def test_what_a_chat_read_lists_nothing_in_the_next_chat(
    server: ScriptedServer, gated: dict[str, Skill], tmp_path: Path
) -> None:
    """The gate keeps what a chat read on that chat's own steps: `/new` starts from
    the workspace alone."""
    ws = write_files(tmp_path / "ws", {"docs/guide.txt": "the guide\n"})
    reg = registry(*gated.values())
    session = Session(settings_for(server), registry=reg, workspace=Workspace.open(ws))
    server.script(
        reply(calls=[call("read_file", {"path": "docs/guide.txt"})]),
        reply("read"),
        reply("same chat"),
        reply("new chat"),
    )
    session.send("read the guide")
    (ws / "docs/guide.txt").unlink()
    session.send("and now")
    assert listed(server) == {"always", "doc-writer"}
    session.new_chat()
    session.send("hello")
    assert listed(server) == {"always"}


def test_without_a_workspace_no_file_can_match(
    server: ScriptedServer, gated: dict[str, Skill]
) -> None:
    server.script(reply("ok"))
    make_chat(server, registry(*gated.values())).send("hello")
    assert listed(server) == {"always"}


def test_list_skills_and_search_skills_leave_out_what_the_catalog_leaves_out(
    server: ScriptedServer, gated: dict[str, Skill], tmp_path: Path
) -> None:
    ws = write_files(tmp_path / "ws", {"README.md": "hi\n"})
    # A catalog too small for every description: search_skills is offered.
    chat = make_chat(
        server, registry(*gated.values()), workspace=Workspace.open(ws), catalog_max_chars=60
    )
    finds = [call("list_skills", {}), call("search_skills", {"query": "lints python docs"})]
    server.script(reply(calls=finds), reply("one"), reply(calls=finds), reply("two"))
    chat.send("which skills?")
    names, found = (json.loads(m["content"]) for m in tool_messages(server))
    assert names["skills"] == ["always"]
    assert names["notice"].startswith("2 more skill(s) not listed: their `paths` match no file")
    assert found["matches"] == []
    write_files(ws, {"tool.py": "print(1)\n"})
    chat.send("and now?")
    names, found = (json.loads(m["content"]) for m in tool_messages(server)[2:])
    assert names["skills"] == ["always", "py-lint"] and names["notice"].startswith("1 more")
    assert [m["name"] for m in found["matches"]] == ["py-lint"]
