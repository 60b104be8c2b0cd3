"""Time `skillchat skills cost` over the 236 real skills, beside `skills list`.

Run: `python benchmarks/bench_skills_cost.py [--runs N]`. Not part of pytest:
timings depend on the machine. Both commands run as whole processes over every
skills folder of ../shared/real-skills, interleaved (one of each, then again) so
load drift hits both; medians are printed. `cost` does what `list` does, then reads
every SKILL.md and the files it points to and counts tokens with tiktoken; the
ratio is the price of that. Target: under 2 s for the corpus.
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
CORPUS = REPO.parent / "shared" / "real-skills"
TARGET_SECONDS = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    folders = sorted({str(p.parent.parent) for p in CORPUS.rglob("SKILL.md")})
    dirs = [a for d in folders for a in ("--skills-dir", d)]
    commands = {
        "skills list": ["skills", "list", *dirs],
        "skills cost": ["skills", "cost", *dirs],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="skillchat-bench-") as home:
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home}
        for _ in range(args.runs):
            for name, argv in commands.items():
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "skillchat", *argv], capture_output=True, env=env
                )
                times[name].append(time.perf_counter() - start)
                assert done.returncode == 0, done.stderr.decode()
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{len(folders)} skills folders of {CORPUS}, {args.runs} interleaved runs")
    for name, median in medians.items():
        print(f"{name:12} {median:6.2f} s median, {min(times[name]):.2f} s best")
    print(f"cost / list: {medians['skills cost'] / medians['skills list']:.1f}x")
    verdict = "OK" if medians["skills cost"] <= TARGET_SECONDS else "OVER TARGET"
    print(f"target <= {TARGET_SECONDS:.0f} s for skills cost: {verdict}")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main())
