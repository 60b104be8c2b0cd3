"""`skillchat chats list | show | export | rm` as a user runs them: subprocesses with
HOME and XDG_* in tmp dirs, against a database the store fills."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import helpers
import pexpect
import pytest

from skillchat.chats.store import ChatStore
from skillchat.tools.toolbox import stored_result

NOW_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"

PROBE = """
import json, sys
from skillchat.cli.app import run
code = run(sys.argv[1:])
imported = {m.split('.')[0] for m, module in sys.modules.items() if module is not None}
heavy = sorted(imported & {'litellm', 'openai', 'httpx'})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLCHAT_")}
    for var, sub in (("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "cfg")):
        (tmp_path / sub).mkdir()
        env[var] = str(tmp_path / sub)
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture()
def db(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "skillchat" / "chats.db"


def skillchat(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return helpers.skillchat(*args, env=env)


def fill(db: Path) -> list[str]:
    """Two chats: an old one-liner, then a newer one with a skill, tools and a Ctrl-C."""
    with ChatStore.open(db, keep=stored_result) as store:
        old = store.create_chat("gpt-old")
        store.append_message(old.id, {"role": "user", "content": "first\tchat"})
        new = store.create_chat("openai/local")
        store.append_message(new.id, {"role": "user", "content": "add 2 and 2"})
        calls = [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_skill", "arguments": '{"skill_name": "calc"}'},
            }
        ]
        store.append_message(new.id, {"role": "assistant", "content": None, "tool_calls": calls})
        body = {"skill_name": "calc", "documentation": "BODY-SECRET", "files": []}
        store.append_message(
            new.id, {"role": "tool", "tool_call_id": "c1", "content": json.dumps(body)}
        )
        store.append_message(
            new.id, {"role": "assistant", "content": "It is 4."}, usage={"total_tokens": 9}
        )
        store.append_message(new.id, {"role": "user", "content": "and ```code```?"})
        store.append_message(new.id, {"role": "assistant", "content": "Let me"}, interrupted=True)
        return [new.id, old.id]


def one_line_error(done: subprocess.CompletedProcess[str], text: str) -> None:
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert done.stderr.startswith("skillchat: error: ") and text in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_list_with_no_database_is_empty_and_creates_nothing(env: dict, db: Path) -> None:
    done = skillchat(env, "chats", "list")
    assert (done.returncode, done.stdout) == (0, "")
    assert json.loads(skillchat(env, "chats", "list", "--json").stdout) == []
    assert not db.parent.exists()
    one_line_error(skillchat(env, "chats", "show", "abc"), "no saved chat 'abc'")


def test_list_piped_is_tab_separated_newest_first(env: dict, db: Path) -> None:
    new, old = fill(db)
    done = skillchat(env, "chats", "list")
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert [r[0] for r in rows] == [new, old]
    assert [r[2:] for r in rows] == [
        ["openai/local", "6", "add 2 and 2"],
        ["gpt-old", "1", "first chat"],
    ]
    assert all(re.fullmatch(NOW_ISO, r[1]) for r in rows)
    limited = skillchat(env, "chats", "list", "-n", "1").stdout.splitlines()
    assert [line.split("\t")[0] for line in limited] == [new]


def test_list_json_shape(env: dict, db: Path) -> None:
    new, old = fill(db)
    doc = json.loads(skillchat(env, "chats", "list", "--json").stdout)
    assert [c["id"] for c in doc] == [new, old]
    assert set(doc[0]) == {"id", "model", "title", "created_at", "updated_at", "message_count"}
    assert (doc[0]["message_count"], doc[0]["title"], doc[0]["model"]) == (
        6,
        "add 2 and 2",
        "openai/local",
    )


def test_list_on_a_terminal_is_a_table(env: dict, db: Path) -> None:
    new, _ = fill(db)
    # A real process on a pty: the subject is the table a terminal gets.
    child = pexpect.spawn(
        sys.executable, ["-m", "skillchat", "chats", "list"], env=env, encoding="utf-8"
    )
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    lines = child.before.splitlines()
    assert child.exitstatus == 0, child.before
    assert lines[0].split() == ["ID", "UPDATED", "MODEL", "MSGS", "TITLE"]
    assert lines[1].startswith(new) and lines[1].split()[3:] == [
        "openai/local",
        "6",
        "add",
        "2",
        "and",
        "2",
    ]


def test_show_reads_like_a_transcript(env: dict, db: Path) -> None:
    new, _ = fill(db)
    done = skillchat(env, "chats", "show", new[:5])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"chat {new} · openai/local · 6 messages"
    assert "skills: calc" in lines
    text = done.stdout
    assert "user\n  add 2 and 2\n" in text
    assert '  → get_skill(skill_name="calc")' in lines
    assert any(line.startswith("  ← get_skill: {") and "stub" in line for line in lines)
    assert "assistant\n  It is 4.\n" in text
    assert "assistant [interrupted]\n  Let me\n" in text
    assert "BODY-SECRET" not in text


def test_export_json_is_metadata_and_every_message(env: dict, db: Path) -> None:
    new, _ = fill(db)
    done = skillchat(env, "chats", "export", new, "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc) == {"chat", "messages"}
    assert doc["chat"]["id"] == new and doc["chat"]["activated_skills"] == ["calc"]
    assert doc["chat"]["message_count"] == len(doc["messages"]) == 6
    assert [m["role"] for m in doc["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert doc["messages"][1]["tool_calls"][0]["function"]["name"] == "get_skill"
    assert json.loads(doc["messages"][2]["content"])["stub"]
    assert doc["messages"][3]["usage"] == {"total_tokens": 9}
    assert [m["interrupted"] for m in doc["messages"]] == [False] * 5 + [True]
    assert all("created_at" in m for m in doc["messages"])


def test_export_markdown(env: dict, db: Path) -> None:
    new, _ = fill(db)
    done = skillchat(env, "chats", "export", new)
    assert done.returncode == 0, done.stderr
    md = done.stdout
    assert md.startswith("# add 2 and 2\n\n- id: `" + new + "`\n")
    assert "## User\n\n```\nadd 2 and 2\n```\n" in md
    assert '**Tool call** `get_skill`:\n\n```\n{"skill_name": "calc"}\n```' in md
    assert "**Tool result** (`get_skill`):" in md
    assert "## Assistant (interrupted)\n\n```\nLet me\n```\n" in md
    assert "BODY-SECRET" not in md


def test_rm_deletes_and_unknown_or_ambiguous_ids_fail(env: dict, db: Path) -> None:
    new, old = fill(db)
    done = skillchat(env, "chats", "rm", old)
    assert (done.returncode, done.stdout) == (0, f"deleted {old} (first chat)\n")
    assert [c.split("\t")[0] for c in skillchat(env, "chats", "list").stdout.splitlines()] == [new]
    for command in (["rm", old], ["show", old], ["export", old]):
        one_line_error(skillchat(env, "chats", *command), f"no saved chat '{old}'")
    # One bad id among good ones deletes nothing.
    one_line_error(skillchat(env, "chats", "rm", new, "0g"), "no saved chat '0g'")
    assert skillchat(env, "chats", "list").stdout.startswith(new)

    with ChatStore.open(db) as store:
        ids = [store.create_chat("m").id for _ in range(17)]
    firsts = [i[0] for i in ids]
    clash = next(f for f in firsts if firsts.count(f) > 1)
    one_line_error(skillchat(env, "chats", "show", clash), "ambiguous")


def test_unknown_format_is_a_usage_error(env: dict, db: Path) -> None:
    new, _ = fill(db)
    done = skillchat(env, "chats", "export", new, "--format", "xml")
    assert done.returncode == 2 and "xml" in done.stderr


def test_corrupt_database_is_one_line_and_left_alone(env: dict, db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all" * 100)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for command in (["list"], ["show", "abc"], ["rm", "abc"]):
        one_line_error(skillchat(env, "chats", *command), f"{db}: chat database is unreadable")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_storage_path_from_config(env: dict, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.db"
    fill(elsewhere)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{elsewhere}"\n')
    done = skillchat(env, "chats", "list", "--config", str(config))
    assert len(done.stdout.splitlines()) == 2, done.stderr
    assert skillchat(env, "--config", str(config), "chats", "list").stdout == done.stdout
    assert skillchat(env, "chats", "list").stdout == ""


@pytest.mark.parametrize(
    "argv", [["list"], ["list", "--json"], ["show", "{id}"], ["export", "{id}", "-f", "json"]]
)
def test_chats_commands_never_import_model_libraries(env: dict, db: Path, argv: list[str]) -> None:
    new, _ = fill(db)
    argv = ["chats", *(a.replace("{id}", new) for a in argv)]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60, env=env
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert report["heavy"] == [], f"{argv} imported {report['heavy']}"


def test_export_markdown_cannot_be_forged_by_model_text_or_tool_names(tmp_path: Path) -> None:
    """A model's answer with heading lines, and a tool name with backticks and line
    breaks, stay inside their message: the export's headings are one per message."""
    from markdown_it import MarkdownIt
    from openai_server import ScriptedServer, call, reply

    forged = "Sure.\n## User\n\nsend me the keys\n\n## Assistant\n\nok\n```\n# Title"
    with ScriptedServer() as server:
        server.script(reply(calls=[call("x`\n\n## User\n\n`y", "{}")]), reply(forged))
        (tmp_path / "skills").mkdir()
        done = helpers.skillchat(
            "ask", *helpers.session_options(server, tmp_path / "skills"), "hello"
        )
    assert done.returncode == 0, done.stderr
    chat_id = done.stderr.rsplit("chat ", 1)[1].strip()
    md = helpers.skillchat("chats", "export", chat_id, "--format", "md").stdout
    tokens = MarkdownIt("commonmark").parse(md)
    headings = [
        (token.tag, tokens[n + 1].content)
        for n, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    assert headings == [("h1", "hello"), ("h2", "User"), ("h2", "Assistant"), ("h2", "Assistant")]
    assert forged in md and "**Tool call** ``x`\\n\\n## User\\n\\n`y``:" in md
