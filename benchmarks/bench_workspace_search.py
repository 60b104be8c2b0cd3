"""Time `search_files` and `list_files` over a ~20,000-file workspace, beside git grep.

Run: `python benchmarks/bench_workspace_search.py [--files N] [--runs R]`. Not part of
pytest: timings depend on the machine. Targets: `search_files` for a literal under 1 s
cold, `list_files` with a `**` glob under 0.5 s. "Cold" is a fresh process (no
Python-level cache, every `.gitignore` read again), with the OS page cache warm as
it is for `git grep` and `rg`: dropping the page cache would time the disk, not us.

The workspace is generated under `benchmarks/.work/` (git-ignored): N Python-like
files of 2-6 KB in nested folders, a `.gitignore` that drops a `build/` folder of
2,000 more files, and a git repository with everything added, so `git grep` searches
the same files; and a workspace whose one folder holds 100,000 empty files, listed
beside `ls -l`. Each run spawns one process per tool, interleaved (ours, git grep,
rg when installed), and reports medians and ratios. Our time is measured inside the
process (the tool call alone, as the model waits for it), the others' as wall time
of the whole process; the process start of ours is printed too, and the CPU time
(user + system) of each, which a busy shared machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work" / "search-workspace"
BIG = ROOT / "benchmarks" / ".work" / "big-folder"  # one folder of 100,000 files
SEARCH_TARGET = 1.0
LIST_TARGET = 0.5
NEEDLE = "apply_discount_twice("  # in about 1 file of 1,000

WORDS = [
    *("total", "price", "item", "cart", "order", "tax", "round", "amount", "value"),
    *("count", "index", "result", "data", "user", "name", "path", "file", "line"),
    *("text", "token", "parse", "load", "save", "check", "update", "compute"),
]

CHILD = """
import json, sys, time
start = time.perf_counter()
from skillchat.workspace.files import Workspace
from skillchat.workspace.listing import list_files
from skillchat.workspace.search import search_files
ws = Workspace.open(sys.argv[1])
imported = time.perf_counter()
cpu_start = time.process_time()
if sys.argv[2] == "search":
    found = search_files(ws, sys.argv[3], max_bytes=2_000_000)
    count = found.matched_files
elif sys.argv[2] == "folder":
    count = list_files(ws, path=sys.argv[3]).total
else:
    count = list_files(ws, glob=sys.argv[3]).total
done = time.perf_counter()
out = {"call": done - imported, "imports": imported - start, "count": count}
print(json.dumps({**out, "cpu": time.process_time() - cpu_start}))
"""


def make_workspace(count: int) -> Path:
    """The generated workspace (re-used when it already has `count` files)."""
    marker = WORK / ".bench-files"
    if marker.exists() and marker.read_text() == str(count):
        return WORK
    shutil.rmtree(WORK, ignore_errors=True)
    rng = random.Random(12)
    for i in range(count):
        folder = WORK / f"pkg{i % 40:02d}" / f"mod{i % 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for j in range(rng.randint(40, 120)):
            a, b, c = rng.sample(WORDS, 3)
            lines.append(f"def {a}_{b}_{j}({c}):\n    return {c} * {j} + {a}_{c}({b})\n")
        if i % 1000 == 7:
            lines.insert(len(lines) // 2, f"    {NEEDLE}cart, 0.1)\n")
        (folder / f"file{i:05d}.py").write_text("".join(lines))
    build = WORK / "build"
    build.mkdir()
    for i in range(2000):
        (build / f"gen{i:04d}.py").write_text(f"{NEEDLE}generated_{i})\n")
    (WORK / ".gitignore").write_text("build/\n")
    git = ["git", "-C", str(WORK), "-c", "user.email=b@b", "-c", "user.name=b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    marker.write_text(str(count))
    return WORK


def make_big_folder() -> Path:
    """A workspace whose folder `big` holds 100,000 empty files."""
    folder = BIG / "big"
    if not (BIG / ".bench-files").exists():
        shutil.rmtree(BIG, ignore_errors=True)
        folder.mkdir(parents=True)
        for n in range(100_000):
            os.close(os.open(folder / f"f{n:06d}", os.O_CREAT | os.O_WRONLY, 0o644))
        (BIG / ".bench-files").write_text("100000")
    return BIG


def ours(workspace: Path, what: str, arg: str) -> tuple[float, float, int, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(workspace), what, arg],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    out = json.loads(done.stdout)
    return out["call"], out["imports"], out["count"], out["cpu"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command: list[str], cwd: Path) -> tuple[float, int, float]:
    """Wall time, lines printed and CPU time (user + system) of one process."""
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    elapsed = time.perf_counter() - start
    return elapsed, len(done.stdout.splitlines()), children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    workspace = make_workspace(args.files)
    big = make_big_folder()
    rg = shutil.which("rg")
    times: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    counts: dict[str, int] = {}

    def note(key: str, seconds: float, count: int, cpu: float) -> None:
        times.setdefault(key, []).append(seconds)
        cpus.setdefault(key, []).append(cpu)
        counts[key] = count

    for _ in range(args.runs):
        call, imports, count, cpu = ours(workspace, "search", NEEDLE)
        note("search_files", call, count, cpu)
        note("git grep -F -l", *wall(["git", "grep", "-F", "-l", NEEDLE], workspace))
        if rg:
            note("rg -F -l", *wall([rg, "-F", "-l", NEEDLE], workspace))
        call, imports, count, cpu = ours(workspace, "list", "**/*.py")
        note("list_files **/*.py", call, count, cpu)
        note("(our process start+imports)", imports, 0, 0.0)
        note("git ls-files '*.py' (index)", *wall(["git", "ls-files", "*.py"], workspace))
        note("find -name '*.py' (a walk)", *wall(["find", ".", "-name", "*.py"], workspace))
        call, _, count, cpu = ours(big, "folder", "big")
        note("list_files path=big (100,000)", call, count, cpu)
        note("ls -l big (100,000)", *wall(["ls", "-l", "big"], big))
        if rg:
            note("rg --files -g '*.py'", *wall([rg, "--files", "-g", "*.py"], workspace))
    load = os.getloadavg()[0]
    print(
        f"{args.files:,} files (+2,000 ignored), {args.runs} interleaved runs, medians "
        f"(load average {load:.1f} on {os.cpu_count()} CPUs):"
    )
    medians = {key: statistics.median(values) for key, values in times.items()}
    for key, value in medians.items():
        cpu = statistics.median(cpus[key]) * 1000
        print(f"  {key:30} {value * 1000:8.1f} ms wall {cpu:8.1f} ms CPU  ({counts[key]} found)")
    cpu = {key: statistics.median(values) for key, values in cpus.items()}
    for ours_key, theirs in (
        ("search_files", "git grep -F -l"),
        ("search_files", "rg -F -l"),
        ("list_files **/*.py", "find -name '*.py' (a walk)"),
        ("list_files **/*.py", "rg --files -g '*.py'"),
        ("list_files path=big (100,000)", "ls -l big (100,000)"),
    ):
        if theirs in medians:
            print(
                f"{ours_key} / {theirs}: {medians[ours_key] / medians[theirs]:.1f}x wall, "
                f"{cpu[ours_key] / cpu[theirs]:.1f}x CPU"
            )
    for key, target in (("search_files", SEARCH_TARGET), ("list_files **/*.py", LIST_TARGET)):
        verdict = "meets" if medians[key] <= target else "MISSES"
        print(f"{key} {verdict} <= {target} s wall ({medians[key]:.3f} s)")


if __name__ == "__main__":
    main()
