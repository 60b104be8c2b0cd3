"""`eval -m NAME` with a `[models.NAME]` table sends the table's model to its server
with its limits, as `ask --model NAME` does; eval takes `--max-tokens` and
`--reply-timeout` as `ask` does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import skillchat
from openai_server import ScriptedServer, call, reply

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"
TABLE = """
[models.smol]
model = "HuggingFaceTB/SmolLM2-360M-Instruct"
api_base = "{base}"
backend = "openai"
max_tokens = 321
"""


def files(tmp_path: Path, server: ScriptedServer) -> tuple[Path, Path]:
    config = tmp_path / "config.toml"
    config.write_text(TABLE.format(base=server.base_url))
    queries = tmp_path / "eval_queries.json"
    queries.write_text(
        json.dumps([{"skill": "calculator", "query": "17% of 230?", "should_trigger": True}])
    )
    return config, queries


def activates() -> list[dict]:
    return [reply(calls=[call("get_skill", {"skill_name": "calculator"})]), reply("39.1")]


def run_eval(config: Path, queries: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return skillchat(
        "eval", str(queries), "--config", str(config), "--skills-dir", str(SKILLS),
        "--runs", "1", "--json", *args, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_eval_with_a_named_model_sends_its_table(server: ScriptedServer, tmp_path: Path) -> None:
    config, queries = files(tmp_path, server)
    server.script(*activates())
    done = run_eval(config, queries, "-m", "smol")
    assert done.returncode == 0, done.stderr
    bodies = [r.body for r in server.completions]
    assert {b["model"] for b in bodies} == {"HuggingFaceTB/SmolLM2-360M-Instruct"}
    assert {b["max_tokens"] for b in bodies} == {321}
    assert "smol" in done.stdout  # the report names the model as the user did


def test_eval_takes_max_tokens_over_the_table(server: ScriptedServer, tmp_path: Path) -> None:
    config, queries = files(tmp_path, server)
    server.script(*activates())
    done = run_eval(config, queries, "-m", "smol", "--max-tokens", "9")
    assert done.returncode == 0, done.stderr
    assert {r.body["max_tokens"] for r in server.completions} == {9}


def test_eval_takes_reply_timeout(server: ScriptedServer, tmp_path: Path) -> None:
    config, queries = files(tmp_path, server)
    server.script({"endless": "text", "chunk_delay": 0.05, "piece": "drip "})
    done = run_eval(config, queries, "-m", "smol", "--reply-timeout", "1")
    assert done.returncode == 1, done.stderr
    assert "the reply took longer than reply_timeout (1s)" in done.stdout + done.stderr
