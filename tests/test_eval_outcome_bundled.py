"""`skillchat eval --outcome` on a bundled skill as it ships (calculator, found where
a fresh install finds it, no `--skills-dir`): the scripted server plays an agent
written for this test that does better with the skill on one task, worse on
another, and never loads it on a third; and whose with-skill answers to the first
task pass in two of five trials, so the report's pass@k and pass^k are checked
against values worked out by hand (docs/eval.md's own example: n = 5, c = 2, k = 2),
as are benchmark.json's mean and sample standard deviation per arm; with two tasks
measured, the report says it cannot conclude.

The tasks file lives outside the skill (the bundled folder is the package's, not
the test's to write in): its checks are deterministic and need no file of the
skill's. Trials 1-2 run first; trials 3-5 are added by a second run with
`--trials 5`, which keeps the first two from the results store (the store is
keyed by trial number), after the agent's script changed: that is how two of five
trials pass on a model that answers the same question the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import skillchat
from openai_server import ScriptedServer, call, reply

WITH = '"name": "calculator"'  # in the system prompt only when the skill is in the catalog
TASKS = [
    {"id": "percent", "prompt": "BUNDLED-PERCENT: what is 17% of 230?", "output_contains": "39.1"},
    {"id": "tip", "prompt": "BUNDLED-TIP: 15% tip on $40?", "output_matches": r"^\$6\.00$"},
    {"id": "noload", "prompt": "BUNDLED-NOLOAD: 2 + 2?", "output_contains": "4"},
]


def loads() -> dict[str, Any]:
    return reply(calls=[call("get_skill", {"skill_name": "calculator"})])


def script_agent(server: ScriptedServer, percent_with_skill: str) -> None:
    """With the skill: `percent` answered `percent_with_skill`, `tip` wrong (the
    skill's long form fails the task's exact format), `noload` without loading it.
    Without: `percent` guessed wrong, `tip` and `noload` right."""
    server.rules.clear()
    server.when("BUNDLED-PERCENT", loads(), reply(percent_with_skill), system=WITH)
    server.when("BUNDLED-TIP", loads(), reply("**$6.00** (40 × 15 / 100)"), system=WITH)
    server.when("BUNDLED-NOLOAD", reply("4"), system=WITH)
    server.when("BUNDLED-PERCENT", reply("about 40"))
    server.when("BUNDLED-TIP", reply("$6.00"))
    server.when("BUNDLED-NOLOAD", reply("4"))


def run(server: ScriptedServer, tasks: Path, out: Path, trials: int) -> dict[str, Any]:
    done = skillchat(
        "eval", str(tasks), "--outcome", "--model", "openai/test-model",
        "--api-base", server.base_url, "--out", str(out),
        "--trials", str(trials), "--k", "2", "--yes", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [model] = json.loads(done.stdout)["models"]
    by = {t["task"]: t for t in model["tasks"]}
    return by | {"order": [t["task"] for t in model["tasks"]], "notes": model["notes"]}


def test_the_bundled_calculator_deltas_pass_at_k_and_not_measured(
    server: ScriptedServer, tmp_path: Path
) -> None:
    tasks = tmp_path / "evals.json"
    tasks.write_text(json.dumps({"skill_name": "calculator", "evals": TASKS}))
    out = tmp_path / "ws"
    script_agent(server, "**39.1** (230 × 17 / 100)")
    run(server, tasks, out, 2)
    script_agent(server, "**39.2** (carried a digit wrong)")
    sent = len(server.completions)
    by = run(server, tasks, out, 5)
    # Only trials 3-5 were asked for: three tasks, two arms, a get_skill where loaded.
    again = [json.dumps(r.body) for r in server.completions[sent:]]
    assert len(again) == 3 * (2 + 1 + 1 + 2 + 1 + 1)
    assert by["order"] == ["tip", "noload", "percent"]  # the negative task first
    assert by["tip"]["delta"] == -1.0
    assert by["noload"]["delta"] is None  # not measured, never a tie
    assert by["noload"]["with_skill"]["not_measured"] == 5
    assert by["noload"]["with_skill"]["graded"] == 0
    percent = by["percent"]["with_skill"]
    assert (percent["graded"], percent["passed"], percent["k"]) == (5, 2, 2)
    # pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert percent["pass_at_k"] == pytest.approx(0.7)
    assert percent["pass_hat_k"] == pytest.approx(0.1)
    assert by["percent"]["without_skill"]["pass_rate"] == 0.0
    assert by["percent"]["delta"] == pytest.approx(0.4)
    # Two tasks measured in both arms, whose mean difference (-0.3) could be either
    # sign: both said plainly.
    assert "too few tasks to conclude: 2 with both arms measured" in " ".join(by["notes"])
    assert "the interval includes 0: no difference shown either way" in by["notes"]
    # benchmark.json: per arm the graded trials' pass rates, mean and sample stddev.
    # With: 2 of 10 pass (noload's 5 not measured); without: 10 of 15.
    bench = json.loads((out / "iteration-1" / "benchmark.json").read_text())
    summary = bench["run_summary"]
    assert summary["with_skill"]["pass_rate"] == {
        "mean": pytest.approx(0.2), "stddev": pytest.approx((1.6 / 9) ** 0.5)
    }  # fmt: skip
    assert summary["without_skill"]["pass_rate"] == {
        "mean": pytest.approx(2 / 3), "stddev": pytest.approx((30 / 9 / 14) ** 0.5)
    }  # fmt: skip
    # 30 trials ran, and none of them is a saved chat of the user's.
    listed = skillchat("chats", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) in ([], {"chats": []}), (
        listed.stdout
    )
