"""What two configured MCP servers that nothing uses cost `ask` and `skills list`.

Run: `python benchmarks/bench_mcp_unused.py [--runs N] [--before DIR]`. Not part of
pytest: timings depend on the machine. Each command is run with a config naming no
MCP server and with one naming two stdio servers (tests/mcp_servers.py `basic`,
FastMCP servers of the official SDK, each about a second of CPU to start), whose
tools the model never calls; runs are interleaved so that drift in machine load hits
all alike, and the medians compared:

- `skillchat ask "hi"` to the scripted model server: the whole command (start to
  exit) and its first request (bench_first_request.py's clock);
- `skillchat skills list`, start to exit;

and for each, the CPU time of the whole process (its servers' too, when it starts
them): on a shared machine the steadier figure.

The warm-up runs keep each server's tool list (mcp/listing.py), as any earlier
session would have: from then on neither command starts a server. `--before DIR`
times another checkout of skillchat (its package folder's parent) the same way:
there, both commands started the two servers and waited for them.

Target: each command within 1.1x of the same with no server.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_first_request import SKILLCHAT, served_home  # noqa: E402

SERVER = [sys.executable, str(REPO / "tests" / "mcp_servers.py"), "basic"]
SKILLS = REPO / "skillchat" / "bundled_skills"


def configs(home: Path) -> dict[str, Path]:
    """A config with no MCP server, and one with two stdio servers."""
    none, two = home / "none.toml", home / "two.toml"
    none.write_text("")
    command, *args = SERVER
    table = f"command = {command!r}\nargs = {args!r}\n".replace("'", '"')
    two.write_text(f"[mcp.first]\n{table}\n[mcp.second]\n{table}")
    return {"no server": none, "two servers": two}


def commands(base_url: str, home: Path, before: str | None) -> dict[str, list[str]]:
    """Each command under each config (and under `before`'s checkout)."""
    ask = ["ask", "--api-base", base_url, "--model", "openai/test-model", "hi"]
    listing = ["skills", "list"]
    found: dict[str, list[str]] = {}
    prefixes = {"": [str(SKILLCHAT)]}
    if before:
        prefixes["before, "] = ["env", f"PYTHONPATH={before}", str(SKILLCHAT)]
    for prefix, start in prefixes.items():
        for which, config in configs(home).items():
            options = ["--config", str(config), "--skills-dir", str(SKILLS)]
            found[f"{prefix}ask, {which}"] = [*start, ask[0], *options, *ask[1:]]
            found[f"{prefix}skills list, {which}"] = [*start, *listing, *options]
    return found


def run_one(
    server, argv: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, float, float | None]:  # type: ignore[no-untyped-def]
    """Seconds from spawning `argv` to its exit, the CPU seconds it took (its servers'
    included: skillchat waits for them), and seconds to its first chat request
    (None for a command that sends none)."""
    before = len(server.completions)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, timeout=300)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    first = server.completions[before].at - start if len(server.completions) > before else None
    return wall, cpu, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", help="another checkout of skillchat, to compare")
    args = parser.parse_args()
    with served_home() as (server, home, env):
        env = {**env, "XDG_CACHE_HOME": str(home / ".cache")}
        cmds = commands(server.base_url, home, args.before)
        for argv in cmds.values():  # warm the page cache and .pyc files; keep the lists
            run_one(server, argv, env, home)
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        firsts: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, argv in cmds.items():
                wall, cpu, first = run_one(server, argv, env, home)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if first is not None:
                    firsts[name].append(first)
    load = os.getloadavg()[0]
    print(f"medians of {args.runs} interleaved runs (python {sys.version.split()[0]}, "
          f"load {load:.1f})")  # fmt: skip
    wall_of = {name: statistics.median(values) for name, values in walls.items()}
    cpu_of = {name: statistics.median(values) for name, values in cpus.items()}
    first_of = {name: statistics.median(v) for name, v in firsts.items() if v}
    for name in cmds:
        first = f", first request {first_of[name] * 1000:5.0f} ms" if name in first_of else ""
        cpu = f", CPU {cpu_of[name] * 1000:5.0f} ms"
        print(f"  {name:34} {wall_of[name] * 1000:6.0f} ms to exit{cpu}{first}")
    prefixes = ["", "before, "] if args.before else [""]
    for prefix in prefixes:
        for command in ("ask", "skills list"):
            base, two = f"{prefix}{command}, no server", f"{prefix}{command}, two servers"
            ratio = wall_of[two] / wall_of[base]
            verdict = "met" if ratio <= 1.1 else "MISSED"
            line = f"{prefix}{command}: two unused servers / none = {ratio:.2f}x to exit"
            line += f", {cpu_of[two] / cpu_of[base]:.2f}x CPU"
            if base in first_of:
                line += f", {first_of[two] / first_of[base]:.2f}x to the first request"
            print(line + ("" if prefix else f" (target <= 1.10x: {verdict})"))


if __name__ == "__main__":
    main()
