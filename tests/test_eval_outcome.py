"""`skillchat eval --outcome` as a user runs it: the scripted server plays an agent
that does better with the skill on some tasks and worse on one, the real sandbox
runs its commands and the verifier, and the report is read as CI and a user would."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    NO_SHARED,
    REAL_SKILLS_SCRIPTS,
    one_line_error,
    skillchat,
    write_files,
)
from openai_server import ScriptedServer, call, reply
from outcome_fixture import (
    SECRET,
    SKILL,
    WITH,
    demo_skill,
    evals_json,
    interrupted,
    outcome_argv,
    run_outcome,
    script_agent,
    writable_copy,
)
from pty_session import PtySession
from sandbox_helpers import require_sandbox

from skillchat.evals.outcome_stats import (
    Interval,
    bootstrap_difference,
    bootstrap_mean,
    pass_at_k,
    pass_hat_k,
)


def test_per_task_deltas_negative_first_and_not_measured(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()  # its commands and verifier
    script_agent(server)
    skills = demo_skill(tmp_path)
    out = tmp_path / "ws"
    done = run_outcome(server, skills, out, "--trials", "2", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    [model] = json.loads(done.stdout)["models"]
    tasks = [t["task"] for t in model["tasks"]]
    assert tasks == ["worse", "noload", "answer", "report"]  # negative first
    by = {t["task"]: t for t in model["tasks"]}
    assert by["worse"]["delta"] == -1.0 and by["worse"]["delta_ci95"] == [-1.0, -1.0]
    assert by["answer"]["delta"] == 1.0 and by["report"]["delta"] == 1.0
    noload = by["noload"]
    assert noload["delta"] is None  # never a tie
    assert noload["with_skill"]["not_measured"] == 2 and noload["with_skill"]["graded"] == 0
    assert noload["without_skill"]["pass_rate"] == 1.0
    assert by["report"]["with_skill"] == {
        "trials": 2,
        "graded": 2,
        "passed": 2,
        "not_measured": 0,
        "errors": 0,
        "pass_rate": 1.0,
        "k": 2,
        "pass_at_k": 1.0,
        "pass_hat_k": 1.0,
    }
    interval = bootstrap_mean([-1.0, 1.0, 1.0])
    assert interval is not None
    assert model["mean_delta"] == {"mean": pytest.approx(1 / 3), "low": -1.0, "high": 1.0}
    assert (interval.low, interval.high) == (-1.0, 1.0)
    assert any("too few trials to conclude" in n for n in model["notes"])
    # The guide's workspace: per run its outputs (answer.md beside the agent's files)
    # and grading.json; benchmark.json with run_summary and delta.
    iteration = out / "iteration-1"
    run = iteration / "eval-report" / "with_skill" / "run-1"
    assert (run / "outputs" / "report.txt").read_text() == "ok from input\n"
    assert (run / "outputs" / "answer.md").read_text() == "done"
    grading = json.loads((run / "grading.json").read_text())
    assert [e["passed"] for e in grading["expectations"]] == [True, True]
    assert not (
        iteration / "eval-report" / "without_skill" / "run-1" / "outputs" / "report.txt"
    ).exists()
    bench = json.loads((iteration / "benchmark.json").read_text())
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == pytest.approx(4 / 6)
    assert bench["run_summary"]["without_skill"]["pass_rate"]["mean"] == pytest.approx(4 / 8)
    # Unpaired, and the not-measured trials left out: not the paired mean above.
    assert bench["run_summary"]["delta"]["pass_rate"] == "+0.17"
    assert len(bench["runs"]) == 16


def test_terminal_table_bars_and_min_delta_gate(server: ScriptedServer, tmp_path: Path) -> None:
    require_sandbox()  # its commands and verifier
    script_agent(server)
    skills = demo_skill(tmp_path)
    out = tmp_path / "ws"
    under = run_outcome(server, skills, out, "--trials", "1", "--yes", "--min-delta", "0.1")
    assert under.returncode == 1, under.stderr
    assert "under --min-delta +0.10" in under.stdout
    assert "-100 pts" in under.stdout and "not measured" in under.stdout
    assert "█" * 20 + "│ [-100, -100]" in under.stdout  # the worse task's bar, left of 0
    # The same trials again: from the store, no request sent.
    sent = len(server.completions)
    met = run_outcome(server, skills, out, "--trials", "1", "--yes", "--min-delta", "-1", "--json")
    assert met.returncode == 0, met.stderr
    assert json.loads(met.stdout)["models"][0]["meets_min_delta"] is True
    assert len(server.completions) == sent
    # An edited verifier (in evals/, outside the skill's digest) grades its task again.
    verifier = skills / SKILL / "evals" / "check_report.py"
    verifier.write_text(verifier.read_text() + "# edited\n")
    again = run_outcome(server, skills, out, "--trials", "1", "--yes", "--json")
    assert again.returncode == 0, again.stderr
    rerun = [json.dumps(r.body) for r in server.completions[sent:]]
    assert rerun and all("TASK-REPORT" in body for body in rerun)


def test_without_arm_cannot_load_or_read_the_skill_and_no_arm_reads_evals(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Every probe an agent could make, in both arms: the skill's evals/ (answers,
    verifier) never reaches the model, and without the skill it is not loadable,
    not in the catalog, not at /skills."""
    require_sandbox()  # its commands and verifier
    probes = [
        call("get_skill", {"skill_name": SKILL}),
        call("read_file_in_skill", {"skill_name": SKILL, "file_path": "evals/evals.json"}),
        call("read_file_in_skill", {"skill_name": SKILL, "file_path": "evals/check_report.py"}),
        call(
            "run_command",
            {
                "command": f"ls -R /skills ~/.agents/skills; cat /skills/{SKILL}/evals/* "
                f"~/.agents/skills/{SKILL}/evals/*; "
                f'grep -rls "{SECRET[:8]}""{SECRET[8:]}" /skills /home /opt /tmp .'  # not whole
            },
        ),
    ]
    server.when("PROBE", reply(calls=probes), reply("probed"))
    skills = demo_skill(
        tmp_path, [{"id": "p", "prompt": "PROBE everything", "output_contains": "x"}]
    )
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert len(server.completions) == 4  # two requests per arm
    assert not any(SECRET in json.dumps(r.body) for r in server.completions)
    answers = {
        "with" if WITH in r.body["messages"][0]["content"] else "without": tool_results(r.body)
        for r in server.completions
        if tool_results(r.body)
    }
    got, evals_json, verifier, ran = answers["with"]
    assert "Say CODE-42" in got and "evals" not in got  # loaded; evals/ not listed
    assert "not found in skill" in evals_json and "not found in skill" in verifier
    assert f"/skills/{SKILL}:" in ran and "evals" not in ran.replace(f"/{SKILL}/evals/", "")
    got, evals_json, verifier, ran = answers["without"]
    assert "error" in got.lower() and "Say CODE-42" not in got  # not even offered
    assert "error" in evals_json.lower() and "error" in verifier.lower()
    assert f"/skills/{SKILL}:" not in ran and "Say CODE-42" not in ran


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def test_pass_at_k_and_pass_hat_k_against_hand_computed_values() -> None:
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10; C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # n=5, c=3, k=3: 1 - C(2,3)/C(5,3) = 1; C(3,3)/C(5,3) = 1/10
    assert pass_at_k(5, 3, 3) == 1.0 and pass_hat_k(5, 3, 3) == pytest.approx(0.1)
    # n=4, c=1, k=1: the pass rate both ways
    assert pass_at_k(4, 1, 1) == pass_hat_k(4, 1, 1) == 0.25
    assert pass_at_k(2, 1, 3) is None and pass_hat_k(2, 1, 3) is None
    # One task, 1 of 2 with against 0 of 2 without: a resample's difference is 0, 0.5
    # or 1 (a quarter of draws each end), so the 95% interval is [0, 1] whatever the draws.
    assert bootstrap_difference((1, 2), (0, 2)) == Interval(0.5, 0.0, 1.0)
    assert bootstrap_difference((1, 2), (0, 0)) is None
    assert bootstrap_mean([0.5, 0.5]) == bootstrap_mean([0.5, 0.5])
    again = bootstrap_mean([1.0, -1.0, 0.0, 0.5])
    assert again == bootstrap_mean([1.0, -1.0, 0.0, 0.5])  # deterministic


def test_ctrl_c_keeps_finished_trials_and_a_rerun_runs_only_the_rest(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()  # its commands and verifier
    script_agent(server)
    server.rules.insert(0, {"when": "TASK-NOLOAD", "then": [reply("never", delay=120)]})
    skills = demo_skill(tmp_path)
    out = tmp_path / "ws"
    argv = outcome_argv(server, skills, out, "--trials", "1", "--jobs", "1", "--yes")
    # A real process: the subject is its SIGINT.
    code, err = interrupted(
        argv, lambda: any("TASK-NOLOAD" in json.dumps(r.body) for r in server.completions)
    )
    assert code == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert len(list((out / ".results").glob("*.json"))) == 6  # three tasks, both arms
    del server.rules[0]
    before = len(server.completions)
    done = run_outcome(server, skills, out, "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    rerun = [json.dumps(r.body) for r in server.completions[before:]]
    assert rerun and all("TASK-NOLOAD" in body for body in rerun)
    assert "6 already done, kept" in done.stderr
    [model] = json.loads(done.stdout)["models"]
    assert [t["task"] for t in model["tasks"]] == ["worse", "noload", "answer", "report"]


def test_without_yes_and_no_terminal_it_refuses_in_one_line(
    server: ScriptedServer, tmp_path: Path
) -> None:
    skills = demo_skill(tmp_path)
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1")
    assert done.returncode == 2, done.stderr
    assert "8 trial(s) to run" in done.stderr
    assert "not confirmed: add --yes" in done.stderr and "Traceback" not in done.stderr
    assert server.completions == []


def test_a_flag_of_the_other_eval_is_one_line(server: ScriptedServer, tmp_path: Path) -> None:
    skills = demo_skill(tmp_path)
    gate = run_outcome(server, skills, tmp_path / "ws", "--min-trigger-rate", "0.5")
    assert "--min-trigger-rate are for trigger evals" in one_line_error(gate, 2)
    argv = outcome_argv(server, skills, tmp_path / "ws", "--min-delta", "0.1")
    argv.remove("--outcome")
    assert "are for --outcome evals" in one_line_error(skillchat(*argv), 2)
    assert server.completions == []


def test_a_real_skill_with_a_real_script_runs_end_to_end_in_the_sandbox(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """openai's skill-creator from the shared corpus: with it, the agent runs its
    stdlib script `init_skill.py` in the sandbox and a verifier checks the skill it
    made; without it, the agent has no script to run."""
    require_sandbox()
    source = REAL_SKILLS_SCRIPTS / "openai-skills" / "skills" / ".system" / "skill-creator"
    if not source.is_dir():
        pytest.skip(NO_SHARED)
    skills = tmp_path / "skills"
    writable_copy(source, skills / "skill-creator")
    task = {
        "id": "init",
        "prompt": "TASK-INIT: start a skill named hello-world here",
        "verifier": "evals/made_skill.py",
        "files_exist": ["hello-world/SKILL.md"],
    }
    write_files(
        skills / "skill-creator" / "evals",
        {
            "evals.json": json.dumps({"skill_name": "skill-creator", "evals": [task]}),
            "made_skill.py": "import pathlib, sys\n"
            "text = (pathlib.Path(sys.argv[1]) / 'hello-world' / 'SKILL.md').read_text()\n"
            "sys.exit(0 if text.startswith('---\\nname: hello-world\\n') else 1)\n",
        },
    )
    script = "python /skills/skill-creator/scripts/init_skill.py hello-world --path ."
    with_skill = '"name": "skill-creator"'
    server.when(
        "TASK-INIT",
        reply(calls=[call("get_skill", {"skill_name": "skill-creator"})]),
        reply(calls=[call("run_command", {"command": script})]),
        reply("made hello-world"),
        system=with_skill,
    )
    server.when("TASK-INIT", reply(calls=[call("run_command", {"command": script})]), reply("?"))
    argv = outcome_argv(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    argv[argv.index(str(evals_json(skills)))] = str(skills / "skill-creator/evals/evals.json")
    done = skillchat(*argv)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["models"][0]["tasks"]
    assert row["delta"] == 1.0, row
    made = tmp_path / "ws/iteration-1/eval-init/with_skill/run-1/outputs/hello-world/SKILL.md"
    assert made.read_text().startswith("---\nname: hello-world\n")


def test_on_a_terminal_it_asks_before_any_request(server: ScriptedServer, tmp_path: Path) -> None:
    """The estimate and the question come first; no says no request went out, yes
    runs the trials and draws the table."""
    require_sandbox()  # its commands and verifier
    script_agent(server)
    skills = demo_skill(tmp_path)
    argv = outcome_argv(server, skills, tmp_path / "ws", "--trials", "1")
    refused = PtySession(*argv)
    try:
        refused.expect("8 trial(s) to run")
        refused.expect("Run them? [y/N]:")
        refused.line("n")
        refused.expect("not run")
        assert refused.wait() == 2
    finally:
        refused.close()
    assert server.completions == []
    agreed = PtySession(*argv)
    try:
        agreed.expect("Run them? [y/N]:")
        agreed.line("y")
        agreed.expect("mean paired delta")
        assert agreed.wait() == 0
    finally:
        agreed.close()
    assert len(server.completions) > 0


def test_models_are_a_second_axis_and_a_slash_prompt_counts_as_loaded(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Two models, each its own summary and guide workspace; a task that starts with
    `/demo-skill` loads it by injection (measured, though no get_skill is called),
    and the without arm is asked the rest of the message."""
    inject = {"id": "inject", "prompt": f"/{SKILL} TASK-INJECT go", "output_contains": "CODE-42"}
    unjudged = {"id": "judged", "prompt": "TASK-JUDGE", "expectations": ["is kind"]}
    server.when("TASK-INJECT", reply("CODE-42"), system=WITH)
    server.when("TASK-INJECT", reply("no code"))
    server.when("TASK-JUDGE", reply("kind words"))
    skills = demo_skill(tmp_path, [inject, unjudged])
    out = tmp_path / "ws"
    argv = outcome_argv(server, skills, out, "--trials", "2", "--yes", "--json")
    done = skillchat(*argv, "-m", "openai/second-model")
    assert done.returncode == 0, done.stderr
    assert (
        "task judged: nothing deterministic grades it (its expectations need the LLM judge"
        in done.stderr
    )
    models = json.loads(done.stdout)["models"]
    assert [m["model"] for m in models] == ["openai/test-model", "openai/second-model"]
    for m in models:
        by = {t["task"]: t for t in m["tasks"]}
        assert by["inject"]["delta"] == 1.0 and by["inject"]["with_skill"]["not_measured"] == 0
        assert by["judged"]["delta"] is None and by["judged"]["with_skill"]["graded"] == 0
    sent = {r.body["model"] for r in server.completions}
    assert sent == {"test-model", "second-model"}
    without = [
        r.body["messages"][1]["content"]
        for r in server.completions
        if WITH not in r.body["messages"][0]["content"] and "INJECT" in json.dumps(r.body)
    ]
    assert without and all(text == "TASK-INJECT go" for text in without)
    for slug in ("openai_test-model", "openai_second-model"):
        bench = json.loads((out / slug / "iteration-1" / "benchmark.json").read_text())
        assert bench["metadata"]["executor_model"] == slug.replace("_", "/", 1)
        assert len(bench["runs"]) == 8


def test_the_estimate_is_made_again_from_the_first_trials_real_usage(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Before any request: the estimate from the catalog and prompts. Then the first
    trial runs alone (`answer` with the skill: a get_skill and the answer, 15 tokens
    a scripted reply) and the other seven are estimated again from its real usage."""
    require_sandbox()  # its commands and verifier
    script_agent(server)
    skills = demo_skill(tmp_path)
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    err = " ".join(done.stderr.split())
    planned = re.search(r"8 trial\(s\) to run: about ([\d,]+) tokens", err)
    first = re.search(
        r"first trial: 30 tokens \(estimated ([\d,]+)\); the other 7 trial\(s\): "
        r"about ([\d,]+) tokens, cost unknown \(from the first trial's usage",
        err,
    )
    assert planned and first, err
    total, estimated, rest = (int(n.replace(",", "")) for n in (*planned.groups(), *first.groups()))
    assert rest == round((total - estimated) * 30 / estimated)
    assert err.index("to run:") < err.index("first trial:")
