"""Time the per-turn live-reload check (skills/changes.py) over the real skills.

Run: `python benchmarks/bench_live_reload.py [--corpus DIR] [--runs R]`. Not part
of pytest: timings depend on the machine. Every turn starts with
`Registry.changed()`, a stat of each skill folder and its SKILL.md; the target is
under 5 ms when nothing changed, over the real corpus (`../shared/real-skills`,
236 skills in the folders that hold them). It also times the rebuild a change costs (discovery
again), which only a turn after an edit pays.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillchat.skills.registry import discover

REPO = Path(__file__).resolve().parents[1]

TARGET_SECONDS = 0.005
CORPUS = next(
    (p / "shared" / "real-skills" for p in REPO.parents if (p / "shared").is_dir()),
    REPO.parent / "shared" / "real-skills",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    # Every skills folder of the corpus: the parents of its skill folders.
    directories = sorted({p.parent.parent for p in args.corpus.rglob("SKILL.md")})
    registry = discover(directories)
    checks = []
    for _ in range(args.runs):
        start = time.perf_counter()
        changed = registry.changed()
        checks.append(time.perf_counter() - start)
        assert not changed
    rebuilds = []
    for _ in range(5):
        start = time.perf_counter()
        discover(directories)
        rebuilds.append(time.perf_counter() - start)
    median = statistics.median(checks)
    found = len(registry.skills) + len(registry.excluded)
    print(f"{found} skills ({len(registry.skills)} usable) in {len(directories)} folders")
    print(
        f"check, nothing changed: median {median * 1000:.2f} ms, best {min(checks) * 1000:.2f} ms"
    )
    print(f"rebuild after a change: median {statistics.median(rebuilds) * 1000:.1f} ms")
    met = median < TARGET_SECONDS
    print(f"target < {TARGET_SECONDS * 1000:.0f} ms: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
