"""A fork's transcript kept with its chat, apart from its messages: `--json` reports
its run, `chats show`/`export` show it, a resumed chat never sends it to the parent's
model, and SKILL.md bodies and file contents it read are stubs in the database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fork_helpers import FORK, digest_skills
from helpers import session_options, skillchat
from openai_server import ScriptedServer, call, reply

from skillchat.chats.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir

SECRET = "FILE-CONTENT-7d1f"


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    return digest_skills(tmp_path / "skills", f"{SECRET}\n" * 100)


def ask(server: ScriptedServer, skills: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return skillchat("ask", *session_options(server, skills), *args, stdin=subprocess.DEVNULL)


def test_a_forks_run_is_reported_kept_shown_and_never_resent(
    server: ScriptedServer, skills: Path
) -> None:
    read = call("read_file_in_skill", {"skill_name": "digest", "file_path": "notes.md"})
    server.when("", reply(calls=[read], usage={"prompt_tokens": 40, "completion_tokens": 2}),
                reply("NOTES: 100 lines"), system=FORK)  # fmt: skip
    task = {"skill_name": "digest", "task": "digest the notes"}
    server.script(reply(calls=[call("get_skill", task)]), reply("100 lines"), reply("again"))
    first = ask(server, skills, "--json", "how many lines?")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    [run] = report["forks"]
    assert run["skill"] == "digest" and run["outcome"] == "answered"
    assert run["task"] == "digest the notes" and run["requests"] == 2 and run["tool_calls"] == 1
    assert [m["role"] for m in run["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert set(report["usage_by_model"]) == {"openai/test-model"}
    assert report["usage_by_model"]["openai/test-model"]["prompt_tokens"] >= 40
    assert json.loads(report["tool_calls"][0]["result"])["answer"] == "NOTES: 100 lines"
    # The fork's lines on stderr: started, its read nested, ended.
    assert "⑂ digest #" in first.stderr and "│ read_file_in_skill" in first.stderr
    assert "└ answered · 2 requests · 1 tool call" in first.stderr

    stats = json.loads(skillchat("skills", "stats", "--json", "--skills-dir", str(skills)).stdout)
    [digest] = stats["skills"]
    assert digest["activations_by_model"] == 1 and digest["forks"] == 1

    chat_id = report["chat_id"]
    shown = skillchat("chats", "show", chat_id)
    assert shown.returncode == 0, shown.stderr
    assert "⑂ fork digest on openai/test-model: answered" in shown.stdout
    assert "→ read_file_in_skill" in shown.stdout and "assistant: NOTES: 100 lines" in shown.stdout
    exported = json.loads(skillchat("chats", "export", chat_id, "--format", "json").stdout)
    [fork] = exported["chat"]["forks"]
    assert fork["messages"][-1]["content"] == "NOTES: 100 lines"
    md = skillchat("chats", "export", chat_id, "--format", "md").stdout
    assert "### Fork `digest` on `openai/test-model`: answered" in md
    # The file's content is a stub in the database, as in the chat's own messages.
    assert SECRET not in (user_data_dir() / "chats.db").read_bytes().decode("latin-1")

    again = ask(server, skills, "-c", "and again?")
    assert again.returncode == 0, again.stderr
    resent = json.dumps(server.completions[-1].body["messages"][1:])  # the system prompt apart
    assert "NOTES: 100 lines" in resent  # the answer the parent got, in its result
    assert "digest the notes" in resent and "read_file_in_skill" not in resent
    assert "notes.md" not in resent


def test_a_version_4_database_migrates_with_its_chats(tmp_path: Path) -> None:
    db = tmp_path / "chats.db"
    raw = sqlite3.connect(db)
    for statements in MIGRATIONS[:4]:
        for sql in statements:
            raw.execute(sql)
    raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    raw.execute("PRAGMA user_version = 4")
    stamp = "2026-01-02T03:04:05.000000Z"
    raw.execute(
        "INSERT INTO chats (id, model, title, created_at, updated_at, message_count)"
        " VALUES ('0123abcd', 'm', 'hi', ?, ?, 1)",
        (stamp, stamp),
    )
    raw.execute(
        "INSERT INTO messages (chat_id, seq, role, content, created_at)"
        " VALUES ('0123abcd', 0, 'user', 'hi', ?)",
        (stamp,),
    )
    raw.commit()
    raw.close()
    with ChatStore.open(db) as store:
        chat = store.get_chat("0123abcd")
        assert chat.title == "hi" and chat.forks == ()
        assert [m.message for m in store.load_messages(chat.id)] == [
            {"role": "user", "content": "hi"}
        ]
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    raw.close()


def test_a_fork_reads_a_file_and_runs_a_sandboxed_command(
    server: ScriptedServer, skills: Path, tools: object
) -> None:
    read = call("read_file_in_skill", {"skill_name": "digest", "file_path": "notes.md"})
    count = call("run_command", {"command": "wc -l < /skills/digest/notes.md",
                                 "skill_name": "digest"})  # fmt: skip
    server.when("first-task", reply(calls=[read]), reply(calls=[count]), reply("100 lines"),
                system=FORK)  # fmt: skip
    server.when("second-task", reply(calls=[count]), reply("not allowed"), system=FORK)
    for task in ("first-task", "second-task"):
        server.script(reply(calls=[call("get_skill", {"skill_name": "digest", "task": task})]),
                      reply("relayed"))  # fmt: skip
    done = ask(server, skills, "--json", "--allow-run", "count the notes")
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["forks"]
    ran = json.loads(run["messages"][4]["content"])
    assert ran["exit_code"] == 0 and ran["stdout"].strip() == "100"
    assert run["tool_calls"] == 2 and run["outcome"] == "answered"
    # Without --allow-run the fork's command is refused, as the parent's would be.
    refused = ask(server, skills, "--json", "count the notes")
    assert refused.returncode == 0, refused.stderr
    [run] = json.loads(refused.stdout)["forks"]
    assert json.loads(run["messages"][2]["content"])["error_code"] == "NOT_ALLOWED"
