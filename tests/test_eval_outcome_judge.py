"""`skillchat eval --outcome`'s LLM judge, `--pairwise` and `--html`, as a user runs
them: the scripted server plays both the agent and the judge (told apart by the
judge's own system prompt and model name), and the HTML report is opened in a real
headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from browser import dump_dom, screenshot
from helpers import one_line_error
from openai_server import ScriptedServer, reply
from outcome_fixture import (
    SECRET,
    demo_skill,
    interrupted,
    outcome_argv,
    run_outcome,
    script_agent,
)
from sandbox_helpers import require_sandbox

GRADER = "strict grader"  # in the judge's system prompt only
COMPARER = "You compare two answers"  # in the pairwise judge's only
JUDGE = "openai/judge-model"
REFERENCE = "REFERENCE-ANSWER-c9d1"  # the task's expected_output: the graders' only
JUDGED = {
    "id": "judged",
    "prompt": "TASK-ANSWER: what is the demo code?",
    "expected_output": f"the code, as {REFERENCE}",
    "expectations": ["names the code", f"does not leak {SECRET}"],
}
MIXED = {
    "id": "mixed",
    "prompt": "TASK-WORSE: say it plainly",
    "output_matches": "^plain",
    "expectations": ["is plain"],
}

# Two tasks whose answers differ between the arms: one pair each per trial.
PAIRED = [
    {
        "id": "answer",
        "prompt": "TASK-ANSWER: what is the demo code?",
        "expected_output": f"the code, as {REFERENCE}",
        "output_contains": "x",
    },
    {"id": "worse", "prompt": "TASK-WORSE: say it plainly", "output_matches": "^plain"},
]


def verdicts(*passed: tuple[bool, str]) -> str:
    return json.dumps(
        {
            "verdicts": [
                {"expectation": n, "passed": ok, "evidence": quote}
                for n, (ok, quote) in enumerate(passed, 1)
            ]
        }
    )


def judge_usage(text: str) -> dict[str, Any]:
    return reply(text, usage={"prompt_tokens": 100, "completion_tokens": 20})


def script_judge(server: ScriptedServer) -> None:
    """Passes the answer that names CODE-42, fails the one that does not; the
    plain answer of `mixed` is plain."""
    server.when(
        "the code is CODE-42",
        judge_usage(verdicts((True, "the code is CODE-42"), (True, "CODE-42"))),
        system=GRADER,
    )
    server.when(
        "no idea", judge_usage(verdicts((False, "no code"), (True, "no idea"))), system=GRADER
    )
    server.when("plain answer", judge_usage(verdicts((True, "plain answer"))), system=GRADER)


def models(done: Any) -> dict[str, Any]:
    [model] = json.loads(done.stdout)["models"]
    return model


def test_the_judge_grades_expectations_and_is_counted_apart(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`judged` has only expectations: the judge grades it in both arms. `mixed`
    fails its deterministic check with the skill, so the judge is not asked there."""
    require_sandbox()
    script_judge(server)
    script_agent(server)
    skills = demo_skill(tmp_path, [JUDGED, MIXED])
    out = tmp_path / "ws"
    done = run_outcome(
        server, skills, out, "--trials", "1", "--yes", "--json", "--judge-model", JUDGE
    )
    assert done.returncode == 0, done.stderr
    assert f"judge {JUDGE}: up to 4 request(s) to grade expectations" in done.stderr
    model = models(done)
    by = {t["task"]: t for t in model["tasks"]}
    assert by["judged"]["delta"] == 1.0 and by["mixed"]["delta"] == -1.0
    judged = [r for r in server.completions if r.body["model"] == "judge-model"]
    assert len(judged) == 3  # judged in both arms, mixed without only
    assert all("tools" not in r.body for r in judged)
    assert all(GRADER in r.body["messages"][0]["content"] for r in judged)
    # The judged task's expected output is the judge's reference, between markers
    # (the mixed task has none).
    marked = rf"\[expected output [0-9a-f]+\]\nthe code, as {REFERENCE}\n"
    asked = [r.body["messages"][1]["content"] for r in judged]
    assert len([a for a in asked if re.search(marked, a)]) == 2
    agent = [r for r in server.completions if r.body["model"] == "test-model"]
    assert not any(SECRET in json.dumps(r.body) for r in agent)  # expectations: judge only
    assert not any(REFERENCE in json.dumps(r.body) for r in agent)  # expected output too
    assert model["judge"] == {
        "model": JUDGE,
        "verdicts": 5,
        "not_graded": 0,
        "pairs_compared": 0,
        "tokens": 360,
        "cost": None,
    }
    # The arms' usage is the agent's alone: 15 tokens a scripted reply.
    assert model["usage"]["without"]["tokens"]["mean"] == 15
    grading = json.loads(
        (out / "iteration-1/eval-judged/with_skill/run-1/grading.json").read_text()
    )
    assert grading["expectations"] == [
        {"text": "names the code", "passed": True, "evidence": "judge: the code is CODE-42"},
        {"text": JUDGED["expectations"][1], "passed": True, "evidence": "judge: CODE-42"},
    ]
    mixed = json.loads((out / "iteration-1/eval-mixed/with_skill/run-1/grading.json").read_text())
    assert [e["text"] for e in mixed["expectations"]] == ["output matches '^plain'"]
    terminal = run_outcome(server, skills, out, "--trials", "1", "--yes", "--judge-model", JUDGE)
    assert terminal.returncode == 0, terminal.stderr
    assert (
        f"judge {JUDGE} on openai/test-model: 5 verdict(s), 0 trial(s) not graded, 0 pair(s) "
        "compared; 360 tokens, cost unknown (not in the arms' usage)"
    ) in " ".join(terminal.stdout.split())


def test_pairwise_asks_both_orders_blind_and_counts_splits(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A judge that prefers the answer naming the code wherever it stands picks the
    with-skill answer of `answer` in both orders: a win. On `worse` it always picks
    A, whatever A is: each order picks its first answer, a split, not a win."""
    require_sandbox()
    code = r"\[answer A [0-9a-f]+\]\n"
    server.when(
        "",
        reply(json.dumps({"better": "A", "reason": "names the code"})),
        system=COMPARER,
        pattern=code + "the code is CODE-42",
    )
    server.when(
        "TASK-ANSWER",
        reply(json.dumps({"better": "B", "reason": "names the code"})),
        system=COMPARER,
    )
    server.when(
        "TASK-WORSE", reply(json.dumps({"better": "A", "reason": "first"})), system=COMPARER
    )
    script_agent(server)
    skills = demo_skill(tmp_path, PAIRED)
    out = tmp_path / "ws"
    argv = ("--trials", "2", "--yes", "--json", "--pairwise", "--judge-model", JUDGE)
    done = run_outcome(server, skills, out, *argv)
    assert done.returncode == 0, done.stderr
    assert "up to 8 to compare with/without pairs (both orders)" in done.stderr
    by = {t["task"]: t for t in models(done)["tasks"]}
    assert by["answer"]["pairwise"] == {
        "with": 2, "without": 0, "tie": 0, "split": 0, "not_compared": 0
    }  # fmt: skip
    assert by["worse"]["pairwise"] == {
        "with": 0, "without": 0, "tie": 0, "split": 2, "not_compared": 0
    }  # fmt: skip
    compared = [r for r in server.completions if COMPARER in r.body["messages"][0]["content"]]
    assert len(compared) == 8
    blind = [r.body["messages"][1]["content"] for r in compared]
    assert not any("with_skill" in text or "without" in text.lower() for text in blind)
    # The task's expected output is the comparer's reference too.
    assert sum(f"\nthe code, as {REFERENCE}\n" in text for text in blind) == 4
    assert models(done)["judge"]["pairs_compared"] == 4
    # Stored by what was compared: the same run again asks the judge nothing.
    sent = len(server.completions)
    again = run_outcome(server, skills, out, *argv)
    assert again.returncode == 0, again.stderr
    assert len(server.completions) == sent
    assert {t["task"]: t["pairwise"] for t in models(again)["tasks"]} == {
        t: by[t]["pairwise"] for t in by
    }


def test_the_html_report_shows_the_chart_in_a_real_browser(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Chromium draws the chart: the negative task's red bar and the positive
    tasks' green ones are on the screen; the page names the tasks negative first,
    with pass@k, not-measured counts, the judge's verdicts and costs."""
    require_sandbox()
    # The fixture's `answer` has one expectation, judged where its check passed.
    server.when("CODE-42", reply(verdicts((True, "CODE-42"))), system=GRADER)
    script_agent(server)
    skills = demo_skill(tmp_path)
    page = tmp_path / "report.html"
    done = run_outcome(
        server,
        skills,
        tmp_path / "ws",
        "--trials",
        "2",
        "--yes",
        "--html",
        str(page),
        "--judge-model",
        JUDGE,
    )
    assert done.returncode == 0, done.stderr
    assert f"report: {page}" in done.stdout
    text = page.read_text()
    assert "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    profile = tmp_path / "browser"
    profile.mkdir()
    dom = dump_dom(page, profile)
    order = ("worse", "noload", "answer", "report", "mean of tasks")
    rows = [dom.index(f">{task}</text>") for task in order]
    assert rows == sorted(rows)  # the chart's rows: the negative task first, the mean last
    assert "not measured" in dom and "pass@2 w/wo" in dom and "-100 pts" in dom
    assert f"judge {JUDGE}" in dom and "names the code" in dom and "2/2" in dom
    pixels = screenshot(page, profile, 900, 700)
    red, green = pixels.count((0xC6, 0x28, 0x28)), pixels.count((0x2E, 0x7D, 0x32))
    assert red > 500 and green > 1000, (red, green)  # bars, not just coloured text


def test_without_a_judge_model_expectations_are_said_not_graded(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """The judge is the user's choice (it costs requests): without --judge-model no
    judge request goes out, and a line per task says what is not graded."""
    require_sandbox()
    script_judge(server)
    script_agent(server)
    skills = demo_skill(tmp_path, [JUDGED, MIXED])
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())
    assert (
        "task judged: nothing deterministic grades it (its expectations need the LLM judge: "
        "--judge-model MODEL); run, not graded" in said
    )
    assert "task mixed: its expectations are not graded (the LLM judge" in said
    assert not any(GRADER in json.dumps(r.body) for r in server.completions)
    model = models(done)
    assert model["judge"] is None
    by = {t["task"]: t for t in model["tasks"]}
    assert by["judged"]["delta"] is None and by["mixed"]["delta"] == -1.0
    sent = len(server.completions)
    pairwise = run_outcome(server, skills, tmp_path / "ws", "--pairwise", "--yes")
    assert "--pairwise needs --judge-model MODEL" in one_line_error(pairwise, 2)
    nowhere = tmp_path / "no-such-folder" / "report.html"
    html = run_outcome(server, skills, tmp_path / "ws2", "--html", str(nowhere), "--yes")
    assert f"no folder {nowhere.parent} to write it in" in one_line_error(html, 2)
    assert len(server.completions) == sent  # both before any request


def test_ctrl_c_while_pairs_are_compared_keeps_what_was_compared(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Every trial and every pair compared before Ctrl-C is kept: the same command
    again asks only about the pair that was in flight."""
    require_sandbox()
    first = reply(json.dumps({"better": "A", "reason": "first"}))
    server.rules.append({"when": "TASK-WORSE", "then": [reply("", delay=120)], "system": COMPARER})
    server.when("TASK-ANSWER", first, system=COMPARER)
    script_agent(server)
    skills = demo_skill(tmp_path, PAIRED)
    out = tmp_path / "ws"
    args = ("--trials", "1", "--jobs", "1", "--yes", "--pairwise", "--judge-model", JUDGE)
    held = lambda: any(  # noqa: E731
        COMPARER in r.body["messages"][0]["content"] and "TASK-WORSE" in json.dumps(r.body)
        for r in server.completions
    )
    code, err = interrupted(outcome_argv(server, skills, out, *args), held)
    assert code == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert len(list((out / ".results" / "pairwise").glob("*.json"))) == 1  # answer's pair
    server.rules[0] = {"when": "TASK-WORSE", "then": [first], "system": COMPARER}
    before = len(server.completions)
    done = run_outcome(server, skills, out, *args, "--json")
    assert done.returncode == 0, done.stderr
    again = [json.dumps(r.body) for r in server.completions[before:]]
    assert len(again) == 2 and all("TASK-WORSE" in body for body in again)  # both orders
    by = {t["task"]: t["pairwise"] for t in models(done)["tasks"]}
    assert by["answer"]["split"] == 1 and by["worse"]["split"] == 1
