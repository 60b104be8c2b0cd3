"""`skillchat eval --outcome --save-chats`: each finished trial's chat is kept in the
user's chat store, titled with the eval, task, arm, model and trial it came from,
and read back with `skillchat chats`; the trials send the same requests as without
it; a Ctrl-C saves no chat of a trial it cut short, and a re-run (which runs only
what is missing) saves each trial's chat once. Without the flag nothing is saved
(test_eval_outcome_bundled.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from helpers import one_line_error, skillchat
from openai_server import ScriptedServer, reply
from outcome_fixture import (
    SECRET,
    SKILL,
    TASKS,
    demo_skill,
    interrupted,
    outcome_argv,
    run_outcome,
    script_agent,
)

# The tasks that need no sandbox: no command, no verifier.
PLAIN = [t for t in TASKS if t["id"] != "report"]


def title(task: str, arm: str, trial: int) -> str:
    return f"eval {SKILL}: eval-{task} {arm}_skill openai/test-model run-{trial}"


def saved() -> list[dict[str, Any]]:
    listed = skillchat("chats", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    chats: list[dict[str, Any]] = json.loads(listed.stdout)
    return chats


def bodies(server: ScriptedServer, since: int = 0) -> list[str]:
    """The requests sent, but for the server's own numbering of its tool calls."""
    sent = (json.dumps(r.body, sort_keys=True) for r in server.completions[since:])
    return sorted(re.sub(r"call_\d+_\d+", "call", body) for body in sent)


def test_each_trials_chat_is_saved_titled_readable_and_a_rerun_saves_only_the_new(
    server: ScriptedServer, tmp_path: Path
) -> None:
    script_agent(server)
    skills = demo_skill(tmp_path, PLAIN)
    out = tmp_path / "ws"
    plain = run_outcome(server, skills, out, "--trials", "1", "--jobs", "1", "--yes", "--json")
    assert plain.returncode == 0, plain.stderr
    assert saved() == []
    unsaved = bodies(server)
    shutil.rmtree(out)
    before = len(server.completions)
    done = run_outcome(
        server, skills, out, "--trials", "1", "--jobs", "1", "--yes", "--json", "--save-chats"
    )
    assert done.returncode == 0, done.stderr
    # The same requests, to the byte, as the run that saved nothing.
    assert bodies(server, before) == unsaved
    chats = saved()
    titles = sorted(c["title"] for c in chats)
    arms = ("with", "without")
    assert titles == sorted(title(t["id"], arm, 1) for t in PLAIN for arm in arms)
    by_title = {c["title"]: c["id"] for c in chats}
    shown = skillchat("chats", "show", by_title[title("answer", "with", 1)])
    assert shown.returncode == 0, shown.stderr
    assert "TASK-ANSWER" in shown.stdout and "the code is CODE-42" in shown.stdout
    whole = skillchat("chats", "show", "--json", by_title[title("answer", "without", 1)])
    assert whole.returncode == 0, whole.stderr
    assert "no idea" in whole.stdout
    for chat in chats:  # the agent never saw an expected output
        assert SECRET not in skillchat("chats", "export", "-f", "json", chat["id"]).stdout
    # `-c` goes on with the user's own chat of this folder, never an eval's.
    server.script(reply("a chat of my own"))
    own = skillchat("ask", "-c", "hello", "--model", "openai/test-model",
                    "--api-base", server.base_url, "--skills-dir", str(skills))  # fmt: skip
    assert own.returncode == 0, own.stderr
    assert "no saved chat of this folder to continue" in own.stderr
    # A second run adds trial 2: the first trials' chats are not saved again.
    again = run_outcome(server, skills, out, "--trials", "2", "--yes", "--json", "--save-chats")
    assert again.returncode == 0, again.stderr
    titles = sorted(c["title"] for c in saved() if c["title"] != "hello")
    assert titles == sorted(title(t["id"], a, n) for t in PLAIN for a in arms for n in (1, 2))


def test_ctrl_c_saves_no_chat_of_a_cut_trial_and_the_rerun_saves_it_once(
    server: ScriptedServer, tmp_path: Path
) -> None:
    script_agent(server)
    server.rules.insert(0, {"when": "TASK-NOLOAD", "then": [reply("never", delay=120)]})
    skills = demo_skill(tmp_path, PLAIN)
    out = tmp_path / "ws"
    argv = outcome_argv(server, skills, out, "--trials", "1", "--jobs", "1", "--yes")
    code, err = interrupted(
        [*argv, "--save-chats"],
        lambda: any("TASK-NOLOAD" in json.dumps(r.body) for r in server.completions),
    )
    assert code == 130, err
    first = sorted(c["title"] for c in saved())
    assert first == sorted(title(t, a, 1) for t in ("answer", "worse") for a in ("with", "without"))
    del server.rules[0]
    done = run_outcome(server, skills, out, "--trials", "1", "--yes", "--json", "--save-chats")
    assert done.returncode == 0, done.stderr
    titles = sorted(c["title"] for c in saved())
    arms = ("with", "without")
    assert titles == sorted(title(t["id"], a, 1) for t in PLAIN for a in arms)


def test_save_chats_is_for_outcome_evals(server: ScriptedServer, tmp_path: Path) -> None:
    skills = demo_skill(tmp_path, PLAIN)
    argv = outcome_argv(server, skills, tmp_path / "ws", "--save-chats")
    at = argv.index("--out")
    del argv[at : at + 2]
    argv.remove("--outcome")
    assert "--save-chats is for --outcome evals" in one_line_error(skillchat(*argv), 2)
    assert server.completions == [] and saved() == []
