"""Outcome evals (`skillchat eval --outcome`) fed bad input: a tasks file that is not
one, an entry that reaches outside the skill, a verifier that hangs, floods its
output, writes gigabytes or tampers with what it grades. Each is one line, bounded
by the sandbox's limits, and the other tasks are graded (docs/security.md,
"Outcome evals")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from git_repos import commit, make_repo
from helpers import one_line_error, skillchat, write_files
from openai_server import ScriptedServer, reply
from outcome_fixture import SKILL, demo_skill, evals_json, run_outcome, script_agent
from sandbox_helpers import require_sandbox

GOOD = {
    "id": "answer",
    "prompt": "TASK-ANSWER: what is the demo code?",
    "output_contains": "CODE-42",
}


def with_verifier(tmp_path: Path, name: str, code: str) -> Path:
    """The demo skill with one good task and one graded by the verifier `code`."""
    task = {"id": "bad", "prompt": "TASK-WORSE: hostile", "verifier": f"evals/{name}"}
    skills = demo_skill(tmp_path, [GOOD, task])
    write_files(skills / SKILL / "evals", {name: code})
    return skills


def trials(done: Any) -> dict[str, Any]:
    [model] = json.loads(done.stdout)["models"]
    return {t["task"]: t for t in model["tasks"]}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not JSON"),
        ('{"skill_name": "demo-skill"}', 'a list "evals"'),
        ('{"skill_name": "nope", "evals": [{"prompt": "x"}]}', "no usable skill named 'nope'"),
        ('{"skill_name": "demo-skill", "evals": [{"id": "../x", "prompt": "x"}]}', '"id" must be'),
    ],
)
def test_a_bad_tasks_file_is_one_line_before_any_request(
    server: ScriptedServer, tmp_path: Path, content: str, says: str
) -> None:
    skills = demo_skill(tmp_path)
    evals_json(skills).write_text(content)
    done = run_outcome(server, skills, tmp_path / "ws", "--yes")
    assert says in one_line_error(done, 2)
    assert server.completions == []


def test_an_entry_reaching_outside_the_skill_is_left_out_and_the_rest_runs(
    server: ScriptedServer, tmp_path: Path
) -> None:
    script_agent(server)
    outside = [
        {"id": "v", "prompt": "x", "verifier": "../../../../bin/true"},
        {"id": "f", "prompt": "x", "files": ["/etc/passwd"], "output_contains": "x"},
        {"id": "r", "prompt": "x", "output_matches": "(unclosed"},
        {"id": "e", "prompt": "x", "files_exist": ["../../outside"]},
        {"id": "q", "prompt": "x", "files": ["evals/queue"], "output_contains": "x"},
        {"id": "o", "prompt": "x", "expected_output": {"not": "text"}, "output_contains": "x"},
    ]
    linked = {
        "id": "answer",
        "prompt": GOOD["prompt"],
        "output_contains": "CODE-42",
        "files": ["evals/files"],
    }
    skills = demo_skill(tmp_path, [*outside, linked])
    secret = write_files(tmp_path / "home", {".env": "KEY=host-secret\n"}) / ".env"
    (skills / SKILL / "evals" / "files" / "env").symlink_to(secret)
    os.mkfifo(skills / SKILL / "evals" / "queue")  # copied, it would hang every trial
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 6 and all(line.endswith("left out") for line in warnings)
    assert "must be a path inside the skill folder" in warnings[0]
    assert "evals/queue cannot be used" in warnings[4]
    assert '"expected_output" must be a string' in warnings[5]
    assert list(trials(done)) == ["answer"] and trials(done)["answer"]["delta"] == 1.0
    copies = list((tmp_path / "ws").rglob("outputs/files"))
    assert len(copies) == 2 and all((c / "input.txt").is_file() for c in copies)
    assert not any((c / "env").exists() or (c / "env").is_symlink() for c in copies)


def test_a_hanging_verifier_is_stopped_at_its_timeout_and_the_rest_is_graded(
    server: ScriptedServer, tmp_path: Path
) -> None:
    require_sandbox()
    script_agent(server)
    skills = with_verifier(tmp_path, "hang.sh", "while :; do :; done\n")
    done = run_outcome(
        server,
        skills,
        tmp_path / "ws",
        "--trials",
        "1",
        "--yes",
        "--json",
        "--verifier-timeout",
        "2",
    )
    assert done.returncode == 1, done.stderr  # a trial failed: said, and counted nowhere
    lines = [line for line in done.stderr.splitlines() if "hang.sh" in line]
    assert len(lines) == 2 and all("timed out after 2 s" in line for line in lines)
    assert "Traceback" not in done.stderr
    by = trials(done)
    assert by["answer"]["delta"] == 1.0
    assert by["bad"]["delta"] is None and by["bad"]["with_skill"]["errors"] == 1


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("flood.sh", "yes 'a flood of output'\n"),
        (
            "disk.sh",
            "head -c 3G /dev/zero > /scratch/big && head -c 3G /dev/zero > /tmp/big\n",
        ),
        ("tamper.sh", 'echo PASS > "$1/answer.md" && exit 0; exit 1\n'),
    ],
)
def test_a_verifier_that_floods_fills_or_tampers_is_bounded(
    server: ScriptedServer, tmp_path: Path, name: str, code: str
) -> None:
    """Output past the cap stops it (one line); its writable folders are RAM of a
    fixed size, so 3 GB stop at 64 MB and nothing lands on disk; the outputs it grades
    are read-only. The other task is graded either way."""
    require_sandbox()
    script_agent(server)
    skills = with_verifier(tmp_path, name, code)
    out = tmp_path / "ws"
    done = run_outcome(server, skills, out, "--trials", "1", "--yes", "--json")
    assert "Traceback" not in done.stderr
    by = trials(done)
    assert by["answer"]["delta"] == 1.0
    bad = by["bad"]["with_skill"]
    if name == "flood.sh":
        assert done.returncode == 1 and "stopped (output limit)" in done.stderr
        assert bad["errors"] == 1
    else:  # graded, and failed: the write did not get through
        assert done.returncode == 0, done.stderr
        assert (bad["graded"], bad["passed"]) == (1, 0)
    biggest = max(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert biggest < 1_000_000
    answers = {p.read_text() for p in out.rglob("answer.md")}
    assert "PASS\n" not in answers


def test_a_baseline_that_is_or_holds_a_link_out_is_one_line(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """A snapshot is files: a baseline folder that is a link (a PR can make
    `.baseline/skill` point at `~/.ssh`), or holds one to a host file, is refused
    before anything is read into a trial."""
    skills = demo_skill(tmp_path, [GOOD])
    secret = write_files(tmp_path / "home", {".env": "KEY=host-secret\n"})
    old = write_files(
        tmp_path / "old" / SKILL, {"SKILL.md": (skills / SKILL / "SKILL.md").read_text()}
    )
    linked = tmp_path / "linked"
    linked.symlink_to(old)
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--baseline", str(linked))
    assert "is a link; give the folder itself" in one_line_error(done, 2)
    (old / "notes.md").symlink_to(secret / ".env")
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--baseline", str(old))
    assert "notes.md is a link; a snapshot holds files only" in one_line_error(done, 2)
    assert "host-secret" not in done.stdout + done.stderr
    assert server.completions == []


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("no-such-tag", "--baseline-ref no-such-tag: no such commit in"),
        ("--output=/tmp/x", "no such commit in"),  # an option, never read as one
        ("HEAD~5", "no such commit in"),
        ("first", "the skill's folder demo-skill is not in that commit"),
        ("linked", "SKILL.md is a link or submodule; a snapshot holds files only"),
    ],
)
def test_a_baseline_ref_that_is_no_snapshot_is_one_line(
    server: ScriptedServer, tmp_path: Path, ref: str, says: str
) -> None:
    make_repo(tmp_path / "skills", {"README": "before the skill\n"}, tag="first")
    skills = demo_skill(tmp_path, [GOOD])
    secret = write_files(tmp_path / "home", {".env": "KEY=host-secret\n"}) / ".env"
    md = skills / SKILL / "SKILL.md"
    text = md.read_text()
    md.unlink()
    md.symlink_to(secret)
    commit(skills, {}, tag="linked")
    md.unlink()
    commit(skills, {f"{SKILL}/SKILL.md": text})
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--baseline-ref", ref)
    assert says in one_line_error(done, 2)
    assert "host-secret" not in done.stderr and not Path("/tmp/x").exists()
    assert server.completions == []


@pytest.mark.parametrize("spec", ["3/2", "0/0", "0/3", "a/b", "1/0", "-1/2", "1/2/3"])
def test_a_shard_spec_out_of_range_is_one_line(
    server: ScriptedServer, tmp_path: Path, spec: str
) -> None:
    skills = demo_skill(tmp_path, [GOOD])
    done = run_outcome(server, skills, tmp_path / "ws", "--yes", "--shard", spec)
    assert f"--shard {spec}: expected I/N" in one_line_error(done, 2)
    assert server.completions == []


def test_merging_shards_of_different_runs_is_refused(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Shards of another tasks file, other arms or other settings, a shard missing
    or given twice, a folder that is no shard: one line each, nothing merged."""
    server.when("TASK-ANSWER", reply("CODE-42"))
    server.when("TASK-OTHER", reply("CODE-42"))
    skills = demo_skill(tmp_path, [GOOD])
    old = write_files(
        tmp_path / "old" / SKILL, {"SKILL.md": (skills / SKILL / "SKILL.md").read_text()}
    )

    def shard(name: str, spec: str, *args: str) -> Path:
        out = tmp_path / name
        done = run_outcome(server, skills, out, "--trials", "1", "--yes", "--shard", spec, *args)
        assert done.returncode in (0, 1), done.stderr
        return out

    one, two = shard("one", "1/2"), shard("two", "2/2")
    old_arm = shard("oldarm", "2/2", "--baseline", str(old))
    settings = shard("tokens", "2/2", "--max-tokens", "50")
    other = {"id": "answer", "prompt": "TASK-OTHER", "output_contains": "CODE-42"}
    evals_json(skills).write_text(json.dumps({"skill_name": SKILL, "evals": [other]}))
    tasks = shard("tasks", "2/2")
    cases = [
        ([one, tasks], "differs from"),
        ([one, tasks], "in its tasks (another tasks file"),
        ([one, old_arm], "in its arms (a --baseline, or none)"),
        ([one, settings], "in its conditions"),
        ([one], "shard 2/2 is missing"),
        ([one, one, two], "a shard is given twice"),
        ([one, tmp_path / "old"], "no outcome eval was run there"),
    ]
    for folders, says in cases:
        done = skillchat("eval", "merge", *map(str, folders), "--out", str(tmp_path / "m"))
        assert says in one_line_error(done, 2)
    done = skillchat("eval", "merge", str(one), str(two), "--out", str(one))
    assert "cannot merge into a shard's folder" in one_line_error(done, 2)
    # A stored result edited to count elsewhere (another arm) or not typed as one.
    stored = min([*(one / ".results").glob("*.json"), *(two / ".results").glob("*.json")])
    text = stored.read_text()
    result = json.loads(text)
    flipped = {**result, "arm": "without" if result["arm"] == "with" else "with"}
    for edit in (json.dumps(flipped), json.dumps({**result, "passed": "yes"}), '{"checks": [1]}'):
        stored.write_text(edit)
        done = skillchat("eval", "merge", str(one), str(two), "--out", str(tmp_path / "m"))
        assert "is damaged; run that shard again" in one_line_error(done, 2)
    assert not (tmp_path / "m" / ".results").exists()
    stored.write_text(text)
    whole = skillchat("eval", "merge", str(two), str(one), "--out", str(tmp_path / "m"), "--json")
    assert whole.returncode == 0, whole.stderr


CONFINED = """import pathlib, socket, sys
skill = pathlib.Path("/opt/skillchat/verifier")
ok = (skill / "evals" / "files" / "input.txt").read_text() == "ok from input\\n"
try:
    (skill / "evals" / "planted").write_text("x")
    ok = False
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=5)
    ok = False
except OSError:
    pass
sys.exit(0 if ok and (pathlib.Path(sys.argv[1]) / "answer.md").is_file() else 1)
"""


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("confined.py", CONFINED),
        (
            "check.js",
            "process.exit(require('fs').existsSync(process.argv[2] + '/answer.md') ? 0 : 1)\n",
        ),
    ],
)
def test_a_verifier_reads_its_skill_read_only_has_no_network_and_js_runs_with_node(
    server: ScriptedServer, tmp_path: Path, name: str, code: str
) -> None:
    """docs/eval.md: the verifier sees the skill's folder read-only at
    /opt/skillchat/verifier and has no network (the scripted server, listening on the
    host's loopback, cannot be reached); a `.js` verifier runs with node. Each exits 0
    only when all of that holds, in both arms."""
    require_sandbox()
    script_agent(server)
    skills = with_verifier(tmp_path, name, code.replace("PORT", str(server.server_address[1])))
    done = run_outcome(server, skills, tmp_path / "ws", "--trials", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    bad = trials(done)["bad"]
    assert bad["with_skill"]["passed"] == 1 and bad["without_skill"]["passed"] == 1, bad
    assert not (skills / SKILL / "evals" / "planted").exists()
