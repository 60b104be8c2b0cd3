"""`skillchat eval --outcome` beyond with/without: the `old` arm (a snapshot folder
or a git ref of an edited skill), drift between arms or runs refused, and shards
run as separate processes merged into the report one run prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from git_repos import commit, make_repo
from helpers import one_line_error, skillchat, write_files
from openai_server import ScriptedServer, reply
from outcome_fixture import (
    SKILL,
    TASKS,
    demo_skill,
    loads,
    outcome_argv,
    run_outcome,
    script_agent,
)
from sandbox_helpers import require_sandbox

OLD_MD = (
    f"---\nname: {SKILL}\ndescription: Answers the demo tasks, the old way.\n---\nSay CODE-41.\n"
)
ANSWER = TASKS[0]  # graded by "CODE-42" in the answer


def script_old_and_new(server: ScriptedServer) -> None:
    """The old version (told by its description in the catalog) leads the agent to
    the old code; the current one to the right one."""
    server.when("TASK-ANSWER", loads(), reply("the code is CODE-41"), system="the old way")
    server.when("TASK-ANSWER", loads(), reply("the code is CODE-42"), system=f'"{SKILL}"')


def skill_results(body: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in body["messages"] if m.get("role") == "tool")


def test_the_old_arm_from_a_folder_and_from_a_git_ref(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`--baseline DIR` and `--baseline-ref REF` each put the old version in the
    skill's place: the agent loads it (its body, not the current one), the report
    compares with against old, and no without-skill trial runs."""
    script_old_and_new(server)
    skills = demo_skill(tmp_path, [ANSWER])
    old = write_files(tmp_path / "old" / SKILL, {"SKILL.md": OLD_MD})
    out = tmp_path / "ws"
    done = run_outcome(
        server, skills, out, "--trials", "2", "--yes", "--json", "--baseline", str(old)
    )
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["models"][0]["tasks"]
    assert row["delta"] == 1.0 and "without_skill" not in row
    assert row["old_skill"]["graded"] == 2 and row["old_skill"]["passed"] == 0
    assert row["with_skill"]["passed"] == 2
    bodies = {skill_results(r.body) for r in server.completions if skill_results(r.body)}
    assert any("Say CODE-41" in b for b in bodies) and any("Say CODE-42" in b for b in bodies)
    assert (out / "iteration-1/eval-answer/old_skill/run-2/grading.json").is_file()
    bench = json.loads((out / "iteration-1/benchmark.json").read_text())
    assert set(bench["run_summary"]) == {"with_skill", "old_skill", "delta"}

    # The same old version from git: the skills folder is a repository, v1 the old one.
    repo = make_repo(tmp_path / "repo", {f"{SKILL}/SKILL.md": OLD_MD}, tag="v1")
    now = {p.relative_to(skills).as_posix(): p.read_text() for p in skills.rglob("*.*")}
    commit(repo, now)
    before = len(server.completions)
    argv = outcome_argv(server, repo, tmp_path / "ws-git", "--trials", "2", "--yes", "--json")
    done = skillchat(*argv, "--baseline-ref", "v1")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["models"][0]["tasks"]
    assert (row["delta"], row["old_skill"]["passed"], row["with_skill"]["passed"]) == (1.0, 0, 2)
    assert any("Say CODE-41" in skill_results(r.body) for r in server.completions[before:])
    # The same keys as the folder's run: v1's folder is that snapshot, byte for byte.
    keys = {p.name for p in (tmp_path / "ws-git/.results").glob("*.json")}
    assert len(keys) == 4 and keys == {p.name for p in (out / ".results").glob("*.json")}


def test_an_old_version_declaring_another_environment_is_refused(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """What varies between arms is the skill's instructions and files; what it
    declares about its environment (allowed tools, packages) is held equal."""
    skills = demo_skill(tmp_path, [ANSWER])
    tools = OLD_MD.replace("---\nSay", "allowed-tools: Bash(python:*)\n---\nSay")
    old = write_files(tmp_path / "tools" / SKILL, {"SKILL.md": tools})
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--baseline", str(old))
    assert "differs from 'demo-skill' in its frontmatter's `allowed-tools`" in one_line_error(
        done, 2
    )
    write_files(skills / SKILL / "scripts", {"requirements.txt": "pyyaml==6.0.2\n"})
    old = write_files(
        tmp_path / "pkgs" / SKILL, {"SKILL.md": OLD_MD, "scripts/requirements.txt": "pyyaml\n"}
    )
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--baseline", str(old))
    assert "in the packages it declares (scripts/requirements.txt)" in one_line_error(done, 2)
    assert server.completions == []


def test_resuming_under_other_settings_is_refused(server: ScriptedServer, tmp_path: Path) -> None:
    """A results store's trials were run under one set of conditions: adding
    trials under others would mix two experiments in one report."""
    server.when("TASK-ANSWER", loads(), reply("CODE-42"), system=f'"{SKILL}"')
    server.when("TASK-ANSWER", reply("no"))
    skills = demo_skill(tmp_path, [ANSWER])
    out = tmp_path / "ws"
    assert run_outcome(server, skills, out, "--trials", "1", "--yes").returncode == 0
    sent = len(server.completions)
    done = run_outcome(server, skills, out, "--trials", "2", "--yes", "--max-tokens", "50")
    line = one_line_error(done, 2)
    assert "were run with other settings (max_tokens: null then, 50 now)" in line
    assert len(server.completions) == sent
    assert run_outcome(server, skills, out, "--trials", "2", "--yes").returncode == 0


def without_timing(document: dict[str, Any]) -> dict[str, Any]:
    """The report without what no two runs share: seconds and folder paths."""
    document = json.loads(json.dumps(document))
    document.pop("workspaces")
    for model in document["models"]:
        for arm in model["usage"].values():
            arm.pop("seconds")
        model["usage_delta"].pop("seconds")
    return document


def test_three_shards_as_processes_merged_equal_one_run(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """The same command with `--shard I/3` in three processes at once, then `eval
    merge`: the same trials (the same store keys, each run once) and the same
    report as one run of all of them, time aside; the merged report gates."""
    require_sandbox()  # the report task's command and verifier
    script_agent(server)
    skills = demo_skill(tmp_path)
    whole = run_outcome(server, skills, tmp_path / "all", "--trials", "2", "--yes", "--json")
    assert whole.returncode == 0, whole.stderr
    shards = [tmp_path / f"shard{i}" for i in (1, 2, 3)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skillchat",
                *outcome_argv(server, skills, folder, "--trials", "2", "--yes", "--json"),
                "--shard",
                f"{i}/3",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for i, folder in enumerate(shards, 1)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    keys = [{p.name for p in (f / ".results").glob("*.json")} for f in shards]
    assert all(keys) and sum(len(k) for k in keys) == len(set().union(*keys)) == 16
    assert set().union(*keys) == {p.name for p in (tmp_path / "all/.results").glob("*.json")}
    merged = skillchat("eval", "merge", *map(str, shards), "--out", str(tmp_path / "m"), "--json")
    assert merged.returncode == 0, merged.stderr
    assert without_timing(json.loads(merged.stdout)) == without_timing(json.loads(whole.stdout))
    runs = [
        json.loads((tmp_path / f / "iteration-1/benchmark.json").read_text())["runs"]
        for f in ("all", "m")
    ]
    for run in runs:
        for r in run:
            r["result"].pop("time_seconds")
    assert runs[0] == runs[1]
    assert (tmp_path / "m/iteration-1/eval-report/with_skill/run-2/outputs/report.txt").is_file()
    gated = skillchat(
        "eval", "merge", *map(str, shards), "--out", str(tmp_path / "m2"), "--min-delta", "0.5"
    )
    assert gated.returncode == 1 and "under --min-delta +0.50" in gated.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--baseline", "x", "--baseline-ref", "v1"], "give one old version, not two"),
        (["--shard", "1/2", "--min-delta", "0"], "--min-delta gates the whole run"),
        (["--baseline", "x", "--html", "r.html"], "not with a baseline yet"),
        (["--baseline", "x", "--judge-model", "openai/j", "--pairwise"], "not with a baseline"),
    ],
)
def test_flags_that_do_not_combine_are_one_line(
    server: ScriptedServer, tmp_path: Path, args: list[str], says: str
) -> None:
    skills = demo_skill(tmp_path, [ANSWER])
    assert says in one_line_error(run_outcome(server, skills, tmp_path / "ws", *args), 2)
    plain = outcome_argv(server, skills, tmp_path / "ws", "--shard", "1/2")
    plain.remove("--outcome")
    assert "are for --outcome evals" in one_line_error(skillchat(*plain), 2)
    assert server.completions == []
