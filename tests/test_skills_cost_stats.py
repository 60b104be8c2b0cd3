"""`skills cost` (checked against tiktoken itself) and `skills stats` (against a chat
store made by real `ask` runs through the scripted server)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest
import tiktoken
from helpers import one_line_error, skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession

from skillchat.chats.export import local_time
from skillchat.evals.cost import _litellm_tokenizers
from skillchat.sections import user_data_dir

GUIDE = "# Guide\n\nStep one: read the data. Step two: make the chart.\n"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    charts = skill_folder(
        root, "charts", "name: charts\ndescription: Makes charts from tables.\n",
        "# Charts\n\nRead [the guide](references/guide.md) and `scripts/plot.py`.\n",
    )  # fmt: skip
    write_files(charts, {"references/guide.md": GUIDE, "scripts/plot.py": "print(1)\n"})
    skill_folder(root, "notes", "name: notes\ndescription: Takes notes.\n", "# Notes\n")
    return root


def cost(library: Path, *args: str, **options) -> dict:
    done = skillchat("skills", "cost", "--json", "--skills-dir", str(library), *args, **options)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cost_figures_match_tiktoken(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(_litellm_tokenizers()))
    encoding = tiktoken.get_encoding("cl100k_base")

    def tokens(text: str) -> int:
        return len(encoding.encode(text))

    report = cost(library)
    assert report["tokenizer"] == "cl100k_base"
    charts, notes = report["skills"]
    entry = json.dumps({"name": "charts", "description": "Makes charts from tables."})
    assert charts["catalog"] == tokens(entry) + 1
    assert charts["referenced_files"] == ["references/guide.md", "scripts/plot.py"]
    assert charts["files"] == tokens(GUIDE) + tokens("print(1)\n")
    body = "# Charts\n\nRead [the guide](references/guide.md) and `scripts/plot.py`.\n"
    assert tokens(body) < charts["body"] < tokens(body) + 80  # + the JSON around it
    assert charts["activation"] == charts["body"] + charts["files"]
    assert notes["files"] == 0 and notes["referenced_files"] == []
    block = json.dumps(
        {"available_skills": [json.loads(entry), {"name": "notes", "description": "Takes notes."}]}
    )
    assert report["catalog"] == tokens(block)
    assert report["total"] == report["catalog"] + sum(report["overhead"].values())
    assert report["overhead"]["tool_schemas"] > 100 and report["overhead"]["rules"] > 50


def test_cost_marks_shortened_descriptions_and_pipes_tsv(library: Path, tmp_path: Path) -> None:
    skill_folder(library, "long", f"name: long\ndescription: {'Very long text. ' * 40}\n")
    config = tmp_path / "config.toml"
    config.write_text("[skills]\ncatalog_max_chars = 300\n")
    report = cost(library, "--config", str(config))
    assert [s["name"] for s in report["skills"] if s["shortened"]] == ["long"]
    assert "shortened" in report["catalog_warning"]
    done = skillchat("skills", "cost", "--skills-dir", str(library), "--config", str(config))
    lines = done.stdout.splitlines()
    assert lines[0] == "skill\tcatalog\tbody\tfiles\tactivation\tnote"  # every column
    row = lines[2].split("\t")
    assert row[0] == "long" and row[-1] == "shortened" and len(row) == 6
    assert "every request with skills:" in done.stderr and "cl100k_base" in done.stderr


@pytest.mark.parametrize("damaged", [False, True])
def test_cost_without_the_tokenizer_says_it_estimates(
    library: Path, tmp_path: Path, damaged: bool
) -> None:
    # A `litellm` package without its tokenizer file (or with a damaged one), found
    # first on the path: the estimate, and the damaged file left as it was.
    files = {"__init__.py": ""}
    bad = "litellm_core_utils/tokenizers/9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    if damaged:
        files[bad] = "not a BPE file\n"
    write_files(tmp_path / "fake" / "litellm", files)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), *sys.path])}
    # A child: the fake package must be first on sys.path from the interpreter's start.
    report = cost(library, env=env, subprocess=True)
    assert report["tokenizer"] == "characters / 4 (estimate)" and report["exact_for"] is None
    guide_and_script = (len(GUIDE) + 3) // 4 + (len("print(1)\n") + 3) // 4
    assert report["skills"][0]["files"] == guide_and_script
    if damaged:
        assert (tmp_path / "fake" / "litellm" / bad).read_text() == "not a BPE file\n"


def ask(server: ScriptedServer, library: Path, *args: str):
    argv = ["ask", "--model", "openai/test-model", "--api-base", server.base_url]
    return skillchat(*argv, "--skills-dir", str(library), *args)


def test_stats_from_real_ask_runs(server: ScriptedServer, library: Path) -> None:
    assert skillchat("skills", "stats", "--skills-dir", str(library)).stderr.startswith(
        "no chats yet"
    )
    assert not (user_data_dir() / "chats.db").exists()  # stats creates nothing
    get = call("get_skill", {"skill_name": "charts"}, id="call_model_1")
    read = call("read_file_in_skill", {"skill_name": "charts", "file_path": "references/guide.md"})
    missing = call("get_skill", {"skill_name": "nope"}, id="call_model_2")
    server.script(reply(calls=[get]), reply(calls=[read, missing]), reply("a chart"))
    assert ask(server, library, "plot this").returncode == 0
    server.script(reply("charted again"))
    assert ask(server, library, "/charts plot that").returncode == 0
    done = skillchat("skills", "stats", "--json", "--skills-dir", str(library))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["chats"] == 2 and doc["never_used"] == ["notes"]
    [charts] = doc["skills"]
    assert charts["activations_by_model"] == 1 and charts["activations_by_user"] == 1
    assert charts["files_read"] == 1 and charts["commands_run"] == 0
    assert charts["last_used"] is not None
    piped = skillchat("skills", "stats", "--skills-dir", str(library))
    header, row = piped.stdout.splitlines()  # a header first, as `skills cost` has
    assert header.split("\t")[:5] == ["skill", "by model", "by /name", "files read", "commands"]
    assert row.split("\t")[:5] == ["charts", "1", "1", "1", "0"]
    assert "2 chats; never used: notes" in piped.stderr
    shown = PtySession("skills", "stats", "--skills-dir", str(library))
    try:
        shown.wait()
        table = "".join(shown.output)
    finally:
        shown.close()
    local = local_time(charts["last_used"])  # the date as `chats list` shows it
    assert local in table and charts["last_used"] not in table


@pytest.mark.parametrize("kind", ["corrupt", "foreign"])
def test_stats_on_a_bad_store_is_one_line(library: Path, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "chats.db"
    if kind == "corrupt":
        path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    else:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE other (x)")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{path}"\n')
    before = path.read_bytes()
    done = skillchat("skills", "stats", "--config", str(config), "--skills-dir", str(library))
    message = one_line_error(done)
    assert str(path) in message
    assert path.read_bytes() == before  # never written
