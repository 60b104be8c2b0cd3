"""Time from launching `skillchat` to a usable prompt, per backend, beside two floors.

Run: `python benchmarks/bench_repl_start.py [--runs N]`. Not part of pytest: timings
depend on the machine. Each command runs in a real pseudo-terminal (pexpect, as in
tests/test_repl.py, answering prompt-toolkit's cursor-position query as a terminal
does); the clock stops when the prompt character is drawn. Commands:

- `python -c print(...)`: the interpreter's own start, the floor of any Python CLI;
- a bare prompt-toolkit `PromptSession().prompt()`: the floor of any prompt-toolkit REPL;
- `skillchat` on the openai and on the litellm backend (bundled skills, a local server).

A second figure, for the two skillchat rows: the message is sent the moment the
prompt shows, and the clock stops when its request reaches the server. It shows
what the background load of the model library leaves for the first message to wait.

Two CPU figures (user + system of the child, its threads and subprocesses): to the
prompt, read from /proc when it is drawn; and of a whole session, once with that one
message and Ctrl-D, once with Ctrl-D as soon as the prompt shows (a second launch).
On a loaded machine CPU is what compares: wall times spread 2-5x between runs.
`--before PATH` adds `skillchat` (openai backend) run from another checkout
(PYTHONPATH=PATH); run the script with `PYTHONPATH=` the checkout to time a worktree.

Runs are interleaved (one of each, then again) so drift in machine load hits all
alike; medians are printed. Target: a usable prompt within 0.4 s on either backend.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import pexpect  # noqa: E402
from openai_server import ScriptedServer, reply  # noqa: E402
from pty_session import CPR_QUERY, PROMPT, PROMPT_START  # noqa: E402

TARGET = 0.4
BARE_PROMPT = "from prompt_toolkit import PromptSession; PromptSession().prompt('❯ ')"


def commands(base_url: str, before: str | None) -> dict[str, list[str]]:
    skillchat = ["-m", "skillchat", "--api-base", base_url, "--model", "openai/test-model"]
    skillchat += ["--skills-dir", str(REPO / "skillchat" / "bundled_skills")]
    found = {
        "python -c print (floor)": ["-c", "print('❯')"],
        "bare prompt-toolkit prompt": ["-c", BARE_PROMPT],
        "skillchat --backend openai": [*skillchat, "--backend", "openai"],
        "skillchat --backend litellm": [*skillchat, "--backend", "litellm"],
    }
    if before:  # the interpreter is the same; its first path entry is the other checkout
        found["skillchat openai (before)"] = [
            "-c",
            f"import runpy, sys; sys.path.insert(0, {before!r}); "
            "runpy.run_module('skillchat', run_name='__main__', alter_sys=True)",
            *skillchat[2:],
            "--backend",
            "openai",
        ]
    return found


def wait_for(child: pexpect.spawn, text: Any) -> None:
    """Read until `text`, answering cursor-position queries as a terminal would."""
    while child.expect_exact([CPR_QUERY, text], timeout=60) == 0:
        child.send("\x1b[1;1R")


def cpu_now(pid: int) -> float:
    """User + system seconds of a running process, its threads included (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(
    argv: list[str], env: dict[str, str], server: ScriptedServer | None
) -> dict[str, float]:
    """One launch: seconds to the prompt and CPU by then; with a server, seconds to the
    first request; the CPU of the whole session, ended by Ctrl-D."""
    spent = children_cpu()
    started = time.monotonic()
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", dimensions=(40, 120))
    wait_for(child, PROMPT)
    shown = time.monotonic() - started
    run = {"prompt": shown, "cpu prompt": cpu_now(child.pid)}
    if server is not None:
        before = len(server.completions)
        child.send("hi\r")
        while len(server.completions) == before:
            time.sleep(0.001)
        run["1st request"] = server.completions[-1].at - started
        wait_for(child, PROMPT_START)  # the next prompt, after the reply: a Ctrl-D typed
        wait_for(child, PROMPT)  # during it would be the terminal's end of input, not a key
    child.sendeof()
    wait_for(child, pexpect.EOF)
    child.close()
    run["cpu session"] = children_cpu() - spent
    return run


def quit_at_once(argv: list[str], env: dict[str, str]) -> float:
    """CPU of a launch that is left with Ctrl-D as soon as its prompt shows."""
    spent = children_cpu()
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", dimensions=(40, 120))
    wait_for(child, PROMPT)
    child.sendeof()
    wait_for(child, pexpect.EOF)
    child.close()
    return children_cpu() - spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", help="another checkout of skillchat, to compare")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-repl-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SKILLCHAT_"))}
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data")):
        (home / sub).mkdir()
        env[var] = str(home / sub)
    env.update(HOME=str(home), TERM="xterm-256color", LITELLM_LOCAL_MODEL_COST_MAP="True")
    # Bytecode as an installed package has it, kept out of the trees compared (as in
    # bench_first_request.py); the warm-up run below fills it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home / "pycache")
    with ScriptedServer([reply("ok")], loop=True) as server:
        runs = commands(server.base_url, args.before)
        for argv in runs.values():
            quit_at_once(argv, env)
        rows: dict[str, dict[str, list[float]]] = {name: {} for name in runs}
        for _ in range(args.runs):
            for name, argv in runs.items():
                run = one_run(argv, env, server if "skillchat" in name else None)
                run["cpu quit"] = quit_at_once(argv, env)
                for key, value in run.items():
                    rows[name].setdefault(key, []).append(value)
    columns = ["prompt", "cpu prompt", "1st request", "cpu session", "cpu quit"]
    print(f"median of {args.runs} interleaved runs, seconds (load {os.getloadavg()[0]:.1f})")
    print(f"{'command':30}" + "".join(f"{c:>13}" for c in columns))
    for name, row in rows.items():
        cells = [f"{statistics.median(row[c]):13.3f}" if c in row else f"{'':13}" for c in columns]
        print(f"{name:30}" + "".join(cells))
    worst = max(statistics.median(rows[n]["prompt"]) for n in runs if n.startswith("skillchat --"))
    verdict = "meets" if worst <= TARGET else "misses"
    print(f"slowest skillchat prompt: {worst:.3f} s ({verdict} the {TARGET} s target)")


if __name__ == "__main__":
    main()
