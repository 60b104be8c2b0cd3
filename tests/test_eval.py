"""`skillchat eval` as a user runs it: a subprocess against the scripted server, whose
rules answer each query by its content (runs go out in parallel, so no queue order
holds), and the engine's parts where a test needs to see inside a run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import one_line_error, skill_folder, skillchat, wait_for, write_files
from openai_server import ScriptedServer, call, error, reply

from skillchat.errors import UsageError
from skillchat.evals.queries import EvalQuery, load_queries
from skillchat.evals.runner import Evaluation, Job, RunOutcome, catalog_state, plan_runs
from skillchat.prompt import Catalog
from skillchat.skills.registry import discover

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"
EXAMPLE = REPO / "examples" / "eval_queries.json"


def activates(skill: str, answer: str = "done", **usage: int) -> list[dict[str, Any]]:
    """The moves of a model that loads `skill`, then answers."""
    first = reply(calls=[call("get_skill", {"skill_name": skill})], usage=usage or None)
    return [first, reply(answer, usage=usage or None)]


def queries_file(tmp_path: Path, entries: list[dict[str, Any]] | Any) -> Path:
    path = tmp_path / "eval_queries.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def run_eval(server: ScriptedServer, queries: Path, *args: str, **options: Any) -> Any:
    argv = ["eval", str(queries), "--model", "openai/test-model", "--api-base", server.base_url]
    if "--skills-dir" not in args:
        argv += ["--skills-dir", str(SKILLS)]
    return skillchat(*argv, *args, stdin=subprocess.DEVNULL, **options)


QUERIES = [
    {"skill": "calculator", "query": "17% of 230?", "should_trigger": True},
    {"skill": "calculator", "query": "split the tip", "should_trigger": True},
    {"skill": "calculator", "query": "who proved it?", "should_trigger": False},
    {"skill": "commit-message", "query": "a commit message please", "should_trigger": True},
    {"skill": "commit-message", "query": "undo my last commit", "should_trigger": False},
]


def script_models_moves(server: ScriptedServer) -> None:
    """calculator: triggers on one of two queries; commit-message: also fires on the
    should-not query; the tip query loads commit-message instead of calculator."""
    server.when("17%", *activates("calculator", "39.1", prompt_tokens=100, completion_tokens=20))
    server.when("split the tip", *activates("commit-message"))
    server.when("a commit message", *activates("commit-message"))
    server.when("undo my last", *activates("commit-message"))
    server.when("", reply("an answer with no skill"))


def test_json_report_per_skill_with_failed_queries_and_what_was_activated(
    server: ScriptedServer, tmp_path: Path
) -> None:
    script_models_moves(server)
    done = run_eval(server, queries_file(tmp_path, QUERIES), "--runs", "2", "--json")
    assert done.returncode == 0, done.stderr  # misses, but no minimum was asked for
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["finished_runs"] == report["planned_runs"] == 10
    calc, commit = report["skills"]
    assert (calc["skill"], calc["model"]) == ("calculator", "openai/test-model")
    assert calc["trigger_rate"] == 0.5 and calc["triggered_runs"] == 2
    assert calc["should_trigger_runs"] == 4
    assert calc["false_trigger_rate"] == 0.0 and calc["should_not_trigger_runs"] == 2
    assert calc["catalog"] == "full" and calc["errors"] == 0
    [missed] = calc["failed"]
    assert missed["query"] == "split the tip" and missed["wrong_runs"] == 2
    assert missed["activated_instead"] == ["commit-message"]
    assert commit["trigger_rate"] == 1.0 and commit["false_trigger_rate"] == 1.0
    assert [f["query"] for f in commit["failed"]] == ["undo my last commit"]
    # 17%: two requests of 120 tokens; the tip query: two of the default 15
    assert calc["mean_tokens"] == pytest.approx((240 * 2 + 30 * 2 + 15 * 2) / 6)
    runs = {q["query"]: q["runs"] for q in report["queries"]}
    assert [r["activated"] for r in runs["17% of 230?"]] == [["calculator"], ["calculator"]]
    assert runs["who proved it?"][0] == {
        "run": 1,
        "triggered": False,
        "correct": True,
        "activated": [],
        "files_read": [],
        "tokens": 15,
        "cost": None,
        "catalog": "full",
        "error": None,
    }
    assert len(server.completions) == 2 * (2 + 2 + 1 + 2 + 2)


def test_exit_code_follows_min_trigger_rate(server: ScriptedServer, tmp_path: Path) -> None:
    script_models_moves(server)
    path = queries_file(tmp_path, QUERIES)
    met = run_eval(server, path, "--runs", "1", "--min-trigger-rate", "0.5", "--json")
    assert met.returncode == 0, met.stderr
    assert json.loads(met.stdout)["ok"] is True
    missed = run_eval(server, path, "--runs", "1", "--min-trigger-rate", "0.75")
    assert missed.returncode == 1, missed.stderr
    assert "under --min-trigger-rate 75%: calculator on openai/test-model" in missed.stdout
    bad = run_eval(server, path, "--min-trigger-rate", "1.5")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_the_real_prompt_and_tools_go_out_and_nothing_is_saved(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.when("", *activates("calculator"))
    path = queries_file(tmp_path, QUERIES[:1])
    done = run_eval(server, path, "--runs", "1")
    assert done.returncode == 0, done.stderr
    body = server.completions[0].body
    system = body["messages"][0]["content"]
    assert '"name": "calculator"' in system and '"name": "commit-message"' in system
    assert body["messages"][1] == {"role": "user", "content": "17% of 230?"}
    assert "get_skill" in [t["function"]["name"] for t in body["tools"]]
    listed = skillchat("chats", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []


def test_files_read_are_recorded(server: ScriptedServer, tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    folder = skill_folder(skills, "pdf", "name: pdf\ndescription: Fill PDF forms.\n")
    write_files(folder, {"references/forms.md": "# Forms\n"})
    server.when(
        "fill",
        reply(calls=[call("get_skill", {"skill_name": "pdf"})]),
        reply(
            calls=[
                call(
                    "read_file_in_skill", {"skill_name": "pdf", "file_path": "references/forms.md"}
                )
            ]
        ),
        reply("filled"),
    )
    entries = [{"query": "fill my form", "should_trigger": True}]
    done = run_eval(
        server,
        queries_file(tmp_path, entries),
        "--skill",
        "pdf",
        "--skills-dir",
        str(skills),
        "--runs",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["queries"][0]["runs"]
    assert run["activated"] == ["pdf"] and run["files_read"] == ["pdf/references/forms.md"]


def test_a_skill_with_paths_is_in_the_catalog_though_eval_has_no_workspace(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """eval measures descriptions: `paths` does not hide a skill in its catalog (in
    `ask` with no workspace it would be left out)."""
    skills = tmp_path / "skills"
    skill_folder(skills, "pyfmt", "name: pyfmt\ndescription: Formats Python.\npaths: ['*.py']\n")
    server.when("", *activates("pyfmt"))
    entries = [{"query": "format my code", "should_trigger": True}]
    path = queries_file(tmp_path, entries)
    done = run_eval(server, path, "--skill", "pyfmt", "--skills-dir", str(skills), "--runs", "1")
    assert done.returncode == 0, done.stderr
    assert '"name": "pyfmt"' in server.completions[0].body["messages"][0]["content"]
    [run] = json.loads(
        run_eval(
            server, path, "--skill", "pyfmt", "--skills-dir", str(skills), "--runs", "1", "--json"
        ).stdout
    )["queries"][0]["runs"]
    assert run["activated"] == ["pyfmt"]


def test_a_failed_run_is_reported_and_counts_toward_no_rate(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.when("17%", error(401))
    server.when("", reply("no skill"))
    done = run_eval(server, queries_file(tmp_path, QUERIES[:3]), "--runs", "1", "--json")
    assert done.returncode == 1, done.stderr
    calc = json.loads(done.stdout)["skills"][0]
    assert calc["errors"] == 1 and calc["should_trigger_runs"] == 1
    assert "authentication failed (401)" in calc["failed"][0]["errors"][0]


@pytest.mark.parametrize(
    ("budget", "state", "said"),
    [
        (400, "shortened", "description was shortened in the catalog"),
        (60, "cut", "left out of the catalog"),
    ],
)
def test_a_skill_shortened_or_cut_in_the_catalog_is_said(
    server: ScriptedServer, tmp_path: Path, budget: int, state: str, said: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[skills]\ncatalog_max_chars = {budget}\n")
    server.when("", reply("no skill"))
    entries = [{"skill": "skills-system-validation", "query": "validate", "should_trigger": True}]
    path = queries_file(tmp_path, entries)
    done = run_eval(server, path, "--runs", "1", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert said in " ".join(done.stdout.split())
    done = run_eval(server, path, "--runs", "1", "--config", str(config), "--json")
    assert json.loads(done.stdout)["skills"][0]["catalog"] == state


def test_catalog_state_tells_whole_shortened_and_cut() -> None:
    registry = discover([SKILLS])
    full = registry.skills["calculator"].description
    entries = [
        {"name": "calculator", "description": full},
        {"name": "commit-message", "description": "Write commit messages."},
        {"name": "skills-system-validation"},  # names only: shortened to nothing
    ]
    catalog = Catalog(json.dumps({"available_skills": entries}), 3, 3, 1000)
    assert catalog_state(catalog, registry, "calculator") == "full"
    assert catalog_state(catalog, registry, "commit-message") == "shortened"
    assert catalog_state(catalog, registry, "skills-system-validation") == "shortened"
    cut = Catalog(json.dumps({"available_skills": entries[:1]}), 1, 3, 1000)
    assert catalog_state(cut, registry, "commit-message") == "cut"
    assert catalog_state(None, registry, "calculator") == "cut"


def test_hostile_query_and_skill_text_is_neutralised_on_the_table(
    server: ScriptedServer, tmp_path: Path
) -> None:
    server.when("", reply("no skill"))
    entries = [
        {"skill": "calculator", "query": "\x1b]52;c;aGk=\x07 \x1b[2J sum", "should_trigger": True}
    ]
    done = run_eval(server, queries_file(tmp_path, entries), "--runs", "1")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "␛]52;c;aGk=␇ ␛[2J sum" in done.stdout


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"queries": []}, "expected a list of {query, should_trigger} objects"),
        ([{"query": "x"}], 'entry 1: "should_trigger" must be true or false'),
        ([{"query": "x", "should_trigger": "yes"}], '"should_trigger" must be true or false'),
        ([{"should_trigger": True}], 'entry 1: "query" is missing'),
        ([{"query": "x", "should_trigger": True}], 'no skill named: add "skill"'),
        ([{"query": "x", "should_trigger": True, "skill": "nope"}], "no usable skill named 'nope'"),
        ([], "no queries in it"),
        ({"skill_name": "calculator", "evals": [{"id": 1}]}, 'evals[0]: "prompt" is missing'),
        ({"evals": []}, '"skill_name" is missing'),
        ({"skill_name": "calculator", "evals": {}}, '"evals" must be a list'),
    ],
)
def test_a_bad_query_file_is_one_line_naming_the_field(
    tmp_path: Path, document: Any, message: str
) -> None:
    path = queries_file(tmp_path, document)
    done = skillchat("eval", str(path), "--skills-dir", str(SKILLS), "--model", "openai/m")
    assert message in one_line_error(done, 2)


def test_unreadable_query_files(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("[{")
    done = skillchat("eval", str(tmp_path / "broken.json"), "--skills-dir", str(SKILLS))
    assert "broken.json: not JSON" in one_line_error(done, 2)
    done = skillchat("eval", str(tmp_path / "missing.json"), "--skills-dir", str(SKILLS))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_task_evals_of_a_skill_folder(server: ScriptedServer, tmp_path: Path) -> None:
    """skill-creator's evals/evals.json: every prompt should trigger the skill."""
    document = {
        "skill_name": "calculator",
        "evals": [
            {
                "id": 7,
                "prompt": "compound 5% over 3 years on 1000",
                "expected_output": "1157.63",
                "files": [],
                "expectations": ["uses the formula"],
            },
            {"id": 8, "prompt": "what is 2+2", "expectations": []},
        ],
    }
    path = tmp_path / "evals.json"
    path.write_text(json.dumps(document))
    server.when("compound", *activates("calculator"))
    server.when("", reply("4"))
    done = run_eval(server, path, "--runs", "1", "--json")
    assert done.returncode == 0, done.stderr
    [calc] = json.loads(done.stdout)["skills"]
    assert calc["trigger_rate"] == 0.5 and calc["should_not_trigger_runs"] == 0
    assert calc["failed"][0]["id"] == "8"


def test_eval_queries_in_a_skill_folder_name_their_skill(tmp_path: Path) -> None:
    folder = skill_folder(tmp_path, "pdf", "name: pdf\ndescription: PDFs.\n")
    path = write_files(
        folder, {"evals/eval_queries.json": '[{"query": "q", "should_trigger": false}]'}
    )
    assert load_queries(path / "evals" / "eval_queries.json") == [EvalQuery("pdf", "q", False, "1")]
    with pytest.raises(UsageError, match="no skill named"):
        load_queries(queries_file(tmp_path, [{"query": "q", "should_trigger": True}]))


def test_the_shipped_example_runs_as_shipped(server: ScriptedServer, tmp_path: Path) -> None:
    """As a fresh install runs it: the default skill directories, no fixtures shown."""
    queries = load_queries(EXAMPLE)
    assert any(q.should_trigger for q in queries) and any(not q.should_trigger for q in queries)
    server.when("", reply("an answer with no skill"))
    argv = ["eval", str(EXAMPLE), "--runs", "1", "--json", "--model", "openai/test-model"]
    done = skillchat(*argv, "--api-base", server.base_url, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert {s["skill"] for s in json.loads(done.stdout)["skills"]} == {q.skill for q in queries}


def test_a_hidden_fixture_named_says_how_to_show_it(server: ScriptedServer, tmp_path: Path) -> None:
    entries = [{"skill": "skills-system-validation", "query": "validate", "should_trigger": True}]
    path = queries_file(tmp_path, entries)
    argv = ["eval", str(path), "--model", "openai/test-model", "--api-base", server.base_url]
    done = skillchat(*argv, cwd=tmp_path, stdin=subprocess.DEVNULL)
    line = one_line_error(done, 2)
    assert "no usable skill named 'skills-system-validation'" in line
    assert "[skills] fixtures = true" in line and "--skills-dir" in line


# ------------------------------------------------------------------ parallel runs


def _outcome(job: Job) -> RunOutcome:
    return RunOutcome(job, (), (), None, "full")


def test_runs_go_out_together_up_to_jobs() -> None:
    """Three runs can only pass a three-party barrier if they are in flight at once."""
    plan = plan_runs([EvalQuery("s", f"q{n}", True, str(n)) for n in range(6)], ["m"], 1)
    barrier = threading.Barrier(3, timeout=30)

    def run(job: Job) -> RunOutcome:
        barrier.wait()
        return _outcome(job)

    outcomes = Evaluation(plan, 3, run).run()
    assert sorted(o.job.query.id for o in outcomes) == [str(n) for n in range(6)]


def test_never_more_than_jobs_in_flight() -> None:
    plan = plan_runs([EvalQuery("s", f"q{n}", True, str(n)) for n in range(8)], ["a", "b"], 2)
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def run(job: Job) -> RunOutcome:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        with lock:
            state["now"] -= 1
        return _outcome(job)

    assert len(Evaluation(plan, 2, run).run()) == 32
    assert state["most"] <= 2


def test_runs_finished_before_a_ctrl_c_count_even_if_not_yet_read() -> None:
    """One worker runs both jobs while the main thread is still on the first outcome;
    a Ctrl-C there must not lose the second, already finished."""
    plan = plan_runs([EvalQuery("s", f"q{n}", True, str(n)) for n in range(2)], ["m"], 1)
    workers: list[threading.Thread] = []

    def run(job: Job) -> RunOutcome:
        workers.append(threading.current_thread())
        return _outcome(job)

    def interrupted(outcome: RunOutcome) -> None:
        assert wait_for(lambda: not workers[0].is_alive())
        raise KeyboardInterrupt  # the worker is gone: both outcomes are in the queue

    evaluation = Evaluation(plan, 1, run)

    with pytest.raises(KeyboardInterrupt):
        evaluation.run(interrupted)
    assert sorted(o.job.query.id for o in evaluation.outcomes) == ["0", "1"]


def test_runs_are_planned_in_passes() -> None:
    queries = [EvalQuery("s", "a", True, "1"), EvalQuery("s", "b", False, "2")]
    plan = plan_runs(queries, ["m1", "m2"], 2)
    assert [(j.run, j.model, j.query.query) for j in plan[:4]] == [
        (1, "m1", "a"),
        (1, "m1", "b"),
        (1, "m2", "a"),
        (1, "m2", "b"),
    ]
    assert len(plan) == 8


# ------------------------------------------------------------------ Ctrl-C


def held_request_arrived(server: ScriptedServer) -> bool:
    """One job at a time, in file order: the third query's request (held by the
    server) means the first two runs are finished."""
    return any("who proved" in json.dumps(r.body) for r in server.completions)


def three_queries_argv(path: Path, server: ScriptedServer) -> list[str]:
    """`eval` of `path`, one run of each query, one job at a time."""
    return [
        "eval",
        str(path),
        "--model",
        "openai/test-model",
        "--api-base",
        server.base_url,
        "--skills-dir",
        str(SKILLS),
        "--runs",
        "1",
        "--jobs",
        "1",
    ]


@pytest.mark.parametrize("json_out", [True, False])
def test_ctrl_c_prints_the_partial_report(
    server: ScriptedServer, tmp_path: Path, json_out: bool
) -> None:
    server.when("17%", *activates("calculator"))
    server.when("split the tip", *activates("calculator"))
    server.when("who proved", reply("never sent back", delay=120))  # held until SIGINT
    path = queries_file(tmp_path, QUERIES[:3])
    argv = three_queries_argv(path, server)
    # A real process: the subject is its SIGINT and what it prints as it stops.
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillchat", *argv, *(["--json"] if json_out else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert wait_for(lambda: held_request_arrived(server)), "timed out waiting"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    if json_out:
        report = json.loads(out)
        assert report["interrupted"] is True and report["ok"] is True
        assert (report["finished_runs"], report["planned_runs"]) == (2, 3)
        assert report["skills"][0]["trigger_rate"] == 1.0
        assert report["skills"][0]["should_not_trigger_runs"] == 0
    else:
        assert "interrupted: 2 of 3 runs finished" in out


def test_a_key_echoed_in_a_provider_error_is_masked(server: ScriptedServer, tmp_path: Path) -> None:
    key = "sk-evaltest-0123456789abcdefghij"
    server.when("17%", error(400, message=f"bad request for key {key}"))
    path = queries_file(tmp_path, QUERIES[:1])
    env = {**os.environ, "OPENAI_API_KEY": key}
    for extra in ([], ["--json"]):
        done = run_eval(server, path, "--runs", "1", *extra, env=env)
        assert done.returncode == 1, done.stderr
        assert "bad request for key" in done.stdout
        assert key not in done.stdout + done.stderr


def test_on_a_terminal_ctrl_c_leaves_the_table_of_what_finished(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Any
) -> None:
    """In a pty: a progress bar while runs go out, then (Ctrl-C) the table of the runs
    that finished and no bar left on the screen, as pyte draws it."""
    import pyte

    server.when("17%", *activates("calculator"))
    server.when("split the tip", *activates("commit-message"))
    server.when("who proved", reply("never sent back", delay=120))
    path = queries_file(tmp_path, QUERIES[:3])
    session = pty_sessions(*three_queries_argv(path, server))
    session.expect("eval")  # the progress bar
    assert wait_for(lambda: held_request_arrived(server)), "timed out waiting"
    session.interrupt()
    assert session.wait() == 130
    screen = pyte.Screen(120, 60)
    pyte.Stream(screen).feed("".join(session.output))
    lines = [line.rstrip() for line in screen.display]
    text = "\n".join(lines)
    assert "model: openai/test-model" in text
    assert any("calculator" in line and "50% 1/2" in line for line in lines), text
    assert "activated instead: commit-message" in text
    assert "interrupted: 2 of 3 runs finished" in text
    assert not any(line.startswith("eval ") for line in lines), text  # the bar is gone


# ------------------------------------------------------------------ a real model


def test_against_a_real_model_every_run_is_recorded(real_model: Any, tmp_path: Path) -> None:
    """The real llama.cpp server rarely triggers anything on its own: what is checked
    is that each run is recorded (tokens, activations, no lost run), not a rate. A
    `/calculator` query activates the skill whatever the model does. run_command is
    off (the calculator has no scripts): the prompt is then the one the real-model
    tests of tool calls send, which the server reads once for all of them. Eight
    tokens a reply: the runs are recorded whatever the model writes, and each token
    costs the server a pass of the model."""
    config = tmp_path / "config.toml"
    config.write_text("max_tokens = 8\nmax_retries = 0\n[run]\nenabled = false\n")
    entries = [
        {"skill": "calculator", "query": "/calculator what is 2+2", "should_trigger": True},
        {"skill": "calculator", "query": "Say hi", "should_trigger": False},
    ]
    done = skillchat(
        "eval",
        str(queries_file(tmp_path, entries)),
        "--model",
        real_model.model,
        "--api-base",
        real_model.base_url,
        "--skills-dir",
        str(SKILLS),
        "--config",
        str(config),
        "--runs",
        "2",
        "--jobs",
        "2",
        "--json",
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["finished_runs"] == report["planned_runs"] == 4
    assert report["interrupted"] is False
    invoked, plain = report["queries"]
    for run in invoked["runs"] + plain["runs"]:
        assert run["error"] is None or isinstance(run["error"], str)
        assert set(run["activated"]) <= {"calculator", "commit-message", "skills-system-validation"}
        assert run["catalog"] == "full"
    for run in invoked["runs"]:
        assert run["activated"][0] == "calculator" and run["triggered"] is True
        if run["error"] is None:
            assert run["tokens"] > 0 and run["cost"] is None  # a local server has no price
    [calc] = report["skills"]
    assert calc["should_trigger_runs"] + calc["should_not_trigger_runs"] + calc["errors"] == 4


@pytest.mark.parametrize("allow", [False, True])
def test_run_command_is_offered_but_refused_without_allow_run(
    server: ScriptedServer, tmp_path: Path, allow: bool
) -> None:
    server.when(
        "17%",
        reply(calls=[call("run_command", {"command": "echo ran-it", "skill_name": "calculator"})]),
        reply("done"),
    )
    path = queries_file(tmp_path, QUERIES[:1])
    done = run_eval(server, path, "--runs", "1", "--json", *(["--allow-run"] if allow else []))
    assert done.returncode == 0, done.stderr
    first, second = server.completions
    assert "run_command" in [t["function"]["name"] for t in first.body["tools"]]
    result = second.body["messages"][-1]["content"]
    if allow:
        assert "ran-it" in result and "NOT_ALLOWED" not in result
    else:
        assert "NOT_ALLOWED" in result and "skillchat eval --allow-run" in result
