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

Runs are interleaved (one of each, then again) so drift in machine load hits all
alike; medians are printed. Target: a usable prompt within 0.4 s on either backend.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import pexpect  # noqa: E402
from openai_server import ScriptedServer, reply  # noqa: E402
from pty_session import CPR_QUERY, PROMPT  # noqa: E402

TARGET = 0.4
BARE_PROMPT = "from prompt_toolkit import PromptSession; PromptSession().prompt('❯ ')"


def commands(base_url: str) -> dict[str, list[str]]:
    skillchat = ["-m", "skillchat", "--api-base", base_url, "--model", "openai/test-model"]
    skillchat += ["--skills-dir", str(REPO / "skillchat" / "bundled_skills")]
    return {
        "python -c print (floor)": ["-c", "print('❯')"],
        "bare prompt-toolkit prompt": ["-c", BARE_PROMPT],
        "skillchat --backend openai": [*skillchat, "--backend", "openai"],
        "skillchat --backend litellm": [*skillchat, "--backend", "litellm"],
    }


def wait_for(child: pexpect.spawn, text: str) -> None:
    """Read until `text`, answering cursor-position queries as a terminal would."""
    while child.expect_exact([CPR_QUERY, text], timeout=60) == 0:
        child.send("\x1b[1;1R")


def one_run(argv: list[str], env: dict[str, str], server: ScriptedServer | None) -> tuple:
    """(seconds to the prompt, seconds to the first request or None) for one launch."""
    started = time.monotonic()
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", dimensions=(40, 120))
    wait_for(child, PROMPT)
    shown = time.monotonic() - started
    first_request = None
    if server is not None:
        before = len(server.completions)
        child.send("hi\r")
        while len(server.completions) == before:
            time.sleep(0.001)
        first_request = server.completions[-1].at - started
    child.terminate(force=True)
    return shown, first_request


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-repl-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SKILLCHAT_"))}
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data")):
        (home / sub).mkdir()
        env[var] = str(home / sub)
    env.update(HOME=str(home), TERM="xterm-256color", LITELLM_LOCAL_MODEL_COST_MAP="True")
    with ScriptedServer([reply("ok")], loop=True) as server:
        runs = commands(server.base_url)
        prompt: dict[str, list[float]] = {name: [] for name in runs}
        request: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, argv in runs.items():
                shown, first = one_run(argv, env, server if "skillchat" in name else None)
                prompt[name].append(shown)
                if first is not None:
                    request[name].append(first)
    print(f"median of {args.runs} interleaved runs, seconds from launch")
    print(f"{'command':30} {'prompt':>8} {'1st request':>12}")
    for name in runs:
        asked = f"{statistics.median(request[name]):12.3f}" if request[name] else f"{'':12}"
        print(f"{name:30} {statistics.median(prompt[name]):8.3f} {asked}")
    worst = max(statistics.median(prompt[n]) for n in runs if n.startswith("skillchat"))
    verdict = "meets" if worst <= TARGET else "misses"
    print(f"slowest skillchat prompt: {worst:.3f} s ({verdict} the {TARGET} s target)")


if __name__ == "__main__":
    main()
