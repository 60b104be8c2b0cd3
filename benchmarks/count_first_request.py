"""Instructions each command executes up to its first request: a count, not a time.

Run: `python benchmarks/count_first_request.py [--before PATH]` (needs valgrind).
On a shared machine the CPU times of bench_first_request.py move 5-10% between
runs, more than most single changes to `ask`'s start; valgrind's instruction count
(callgrind's `Ir`) of the same command moves by about 0.05%. Each command runs once
to warm the caches (bytecode, the sandbox probe, the frontmatter cache), then once
under callgrind, stopped at the moment its request to the server leaves:

- `skillchat ask` (the bundled skills), from the checkout on PYTHONPATH, and from
  `--before PATH`;
- the raw SDK floor of bench_first_request.py.

The stop is an audit hook (`sys.addaudithook`, in a sitecustomize on PYTHONPATH)
that ends the process at its first `socket.connect` once `openai` is imported:
`ask` probes the server's `/props` before it imports the SDK, the floor not at all.
An instruction is not a unit of time (cache misses, system calls and waits are not
in it), so the ratio here is a floor for the ratio of times, and the tool to tell
whether a change made the start cheaper.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from bench_first_request import FLOOR, REPO, served_home

STOP = """import os, sys
def _stop(event, args):
    if event == "socket.connect" and "openai" in sys.modules:
        os._exit(0)
sys.addaudithook(_stop)
"""


def count(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """Callgrind's instruction count of `argv`, after a warm-up run of it."""
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
    out = cwd / "callgrind.out"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
        env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind failed on {argv[0]}: {done.stderr[-500:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another checkout of skillchat, to compare")
    args = parser.parse_args()
    with served_home() as (server, home, env):
        hook = home / "stop"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(STOP)
        python = sys.executable
        ask = [python, "-m", "skillchat", "ask", "--api-base", server.base_url,
               "--skills-dir", str(REPO / "skillchat" / "bundled_skills"),
               "--model", "openai/test-model", "hi"]  # fmt: skip
        here = env.get("PYTHONPATH", "")
        floor = [python, "-c", FLOOR, server.base_url]
        runs = {"skillchat ask": (ask, here), "SDK floor": (floor, "")}
        if args.before:
            runs["skillchat ask (before)"] = (ask, args.before)
        counts = {}
        for name, (argv, path) in runs.items():
            paths = ":".join(filter(None, (str(hook), path)))
            counts[name] = count(argv, {**env, "PYTHONPATH": paths}, home)
    print("instructions up to the first request (callgrind Ir)")
    for name, n in counts.items():
        print(f"  {name:24} {n / 1e6:9.1f} M   {n / counts['SDK floor']:.3f}x the floor")


if __name__ == "__main__":
    main()
