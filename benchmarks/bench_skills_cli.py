"""Whole-process and file-access budgets of the skills core.

Run: `python benchmarks/bench_skills_cli.py [--runs R]`. Not part of pytest: timings
depend on the (shared, noisy) machine, so every figure is a median of interleaved
runs, printed beside a floor measured in the same loop.

- `skillchat skills list` with 1,000 skills, as a whole process: target <= 0.5 s.
  Floor: `python -c pass` (the interpreter alone) and `skillchat --version`.
  Once more with all 1,000 trusted: the worst case of the trust column, where every
  skill folder is hashed to check it has not changed.
- Reading a 1 MB resource through the file-access layer: target <= 20 ms.
- Asking for a 1 GB file: peak memory stays flat (the cap holds), in a fresh process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skillchat.safe_io.read import Container, read_contained  # noqa: E402


def make_skills(root: Path, count: int) -> Path:
    skills = root / "skills"
    for i in range(count):
        folder = skills / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Handles task {i} when the user asks.\n"
            f"---\n# Skill {i}\n\n" + "Body line.\n" * 200
        )
    return skills


def time_process(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def bench_list(work: Path, runs: int) -> None:
    skills = make_skills(work, 1000)
    trusted = make_skills(work / "trusted", 1000)
    env = dict(os.environ, HOME=str(work), XDG_CONFIG_HOME=str(work / "cfg"),
               XDG_DATA_HOME=str(work / "data"), NO_COLOR="1")  # fmt: skip
    py = sys.executable
    trust_all = [py, "-m", "skillchat", "skills", "trust", "--all", "--skills-dir", str(trusted)]
    subprocess.run(trust_all, env=env, stdout=subprocess.DEVNULL, check=True)
    commands = {
        "python -c pass (floor)": [py, "-c", "pass"],
        "skillchat --version": [py, "-m", "skillchat", "--version"],
        "skillchat skills list (1,000)": [
            py, "-m", "skillchat", "skills", "list", "--skills-dir", str(skills),
        ],
        "skillchat skills list --json (1,000)": [
            py, "-m", "skillchat", "skills", "list", "--json", "--skills-dir", str(skills),
        ],
        "skillchat skills list (1,000 trusted)": [
            py, "-m", "skillchat", "skills", "list", "--skills-dir", str(trusted),
        ],
    }  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache and .pyc files
        time_process(argv, env)
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(time_process(argv, env))
    floor = statistics.median(times["python -c pass (floor)"])
    print(f"\nwhole process, median of {runs} interleaved runs (target for list: <= 0.500 s)")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:<40} {med:6.3f} s  min {min(values):.3f}  ({med / floor:4.1f}x floor)")


def bench_read(work: Path, runs: int) -> None:
    folder = work / "res"
    folder.mkdir()
    line = "The quick brown fox jumps over the lazy dog, 0123456789.\n"
    (folder / "one-mb.md").write_text(line * (1_000_000 // len(line) + 1))
    container = Container(folder, "skill 'res'", "skill folder")
    times = []
    for _ in range(max(runs, 20)):
        start = time.perf_counter()
        got = read_contained(container, "one-mb.md", limit=2_000_000)
        times.append(time.perf_counter() - start)
    assert not got.truncated and got.size >= 1_000_000
    med = statistics.median(times) * 1000
    print(f"\nread a 1 MB resource (target <= 20 ms): median {med:.2f} ms, "
          f"min {min(times) * 1000:.2f} ms over {len(times)} reads")  # fmt: skip


def bench_gigabyte(work: Path) -> None:
    folder = work / "huge"
    folder.mkdir()
    with open(folder / "huge.txt", "wb") as fh:  # sparse: a 1 GB file costing no disk
        fh.truncate(1024**3)
    probe = (
        "import time\nfrom pathlib import Path\n"
        "from skillchat.errors import FileAccessError\n"
        "from skillchat.safe_io.read import Container, read_contained\n"
        "def hwm():\n"
        "    return int([l.split()[1] for l in open('/proc/self/status')"
        " if l.startswith('VmHWM')][0])\n"
        f"c = Container(Path({str(folder)!r}), 'skill x', 'skill folder')\n"
        "before = hwm(); t = time.perf_counter()\n"
        "try:\n    read_contained(c, 'huge.txt', limit=2_000_000)\n"
        "except FileAccessError as e:\n    outcome = e.code\n"
        "print(before, hwm(), (time.perf_counter() - t) * 1000, outcome)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    before, after, ms = int(out[0]), int(out[1]), float(out[2])
    print(f"\nask for a 1 GB file: peak RSS {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB "
          f"(+{(after - before) / 1024:.1f} MiB), {ms:.1f} ms, refused as {out[3]}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench_list(work, args.runs)
        bench_read(work, args.runs)
        bench_gigabyte(work)


if __name__ == "__main__":
    main()
