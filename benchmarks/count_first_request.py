"""Instructions each command executes up to its first request: a count, not a time.

Run: `python benchmarks/count_first_request.py [--before PATH]` (needs valgrind).
On a shared machine the CPU times of bench_first_request.py move 5-10% between
runs, more than most single changes to `ask`'s start; valgrind's instruction count
(callgrind's `Ir`) of the same command moves by about 0.05%. Each command runs once
to warm the caches (bytecode, the sandbox probe, the frontmatter cache), then once
under callgrind, stopped at the moment its request to the server leaves:

- `skillchat ask` (the bundled skills), from the checkout on PYTHONPATH, and from
  `--before PATH`;
- the raw SDK floor and the standard-library floor of bench_first_request.py.

`--real` counts instead what bench_peers.py times: `skillchat ask` with the 234 real
skills of `../shared/real-skills` in `~/.agents/skills`, beside floor_request.py
reading the same skills (the target there: ask at most 3x the floor).

The stop is an audit hook (`sys.addaudithook`, in a sitecustomize on PYTHONPATH)
that ends the process as its chat request leaves: at the first `http.client.send`
of a POST (skillchat's own client, engine/backends/wire.py, and the stdlib floor
send through `http.client`; a start-up `/props` probe is a GET), or, for the SDK
(httpx, no `http.client`), at its first `socket.connect` once `openai` is imported
(a checkout from before wire.py, passed as `--before`, stops there too).
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

from bench_first_request import FLOOR, REPO, STDLIB_FLOOR, served_home
from bench_peers import PROMPT, install_skills

STOP = """import os, sys
def _stop(event, args):
    data = args[1] if event == "http.client.send" else None
    if isinstance(data, bytes) and data.startswith(b"POST "):
        os._exit(0)
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
    parser.add_argument("--real", action="store_true", help="the 234 real skills, floor_request.py")
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
        stdlib = [python, "-c", STDLIB_FLOOR, server.base_url]
        runs = {
            "skillchat ask": (ask, here),
            "SDK floor": (floor, ""),
            "stdlib floor": (stdlib, ""),
        }
        if args.real:
            install_skills(home / ".agents" / "skills")
            ask = [*ask[:6], *ask[8:-1], PROMPT]  # the user's skills, not the bundled dir
            script = Path(__file__).resolve().parent / "floor_request.py"
            floor = [python, str(script), server.base_url, str(home / ".agents" / "skills"), PROMPT]
            runs = {"skillchat ask": (ask, here), "stdlib floor": (floor, "")}
        if args.before:
            runs["skillchat ask (before)"] = (ask, args.before)
        counts = {}
        for name, (argv, path) in runs.items():
            paths = ":".join(filter(None, (str(hook), path)))
            counts[name] = count(argv, {**env, "PYTHONPATH": paths}, home)
    print("instructions up to the first request (callgrind Ir)")
    base = "stdlib floor" if args.real else "SDK floor"
    for name, n in counts.items():
        print(f"  {name:24} {n / 1e6:9.1f} M   {n / counts[base]:.3f}x the {base}")


if __name__ == "__main__":
    main()
