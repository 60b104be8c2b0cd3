"""What the lock check adds to `skillchat skills list` (skills/lock.py).

Run: `python benchmarks/bench_lock_check.py [--runs R] [--count N]`. Not part of
pytest: timings depend on the (shared, noisy) machine, so every figure is a median of
interleaved runs. N skills of the real corpus (`../shared/real-skills`) are copied
into one folder, then listed three ways:

- no lock (the floor);
- every skill locked, nothing changed: the stat fingerprint matches the cached one
  (target: at most 10% over the floor);
- every skill locked, the stat cache removed before each run: every folder hashed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = next(p / "shared" / "real-skills" for p in REPO.parents if (p / "shared").is_dir())

from skillchat.errors import TrustError  # noqa: E402
from skillchat.skills.lock import Lock, lock_path, record_for  # noqa: E402


def copy_corpus(skills: Path, count: int) -> int:
    skills.mkdir(parents=True)
    copied = 0
    for skill_md in sorted(CORPUS.rglob("SKILL.md")):
        folder = skill_md.parent
        if copied == count or (skills / folder.name).exists():
            continue
        shutil.copytree(folder, skills / folder.name, symlinks=True)
        copied += 1
    return copied


def lock_all(skills: Path) -> None:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    lock = Lock(lock_path(skills), {})
    for folder in sorted(skills.iterdir()):
        try:
            lock.skills[folder.name] = record_for(
                folder, source=str(folder), ref=None, commit=None, path="", installed_at=now
            )
        except TrustError:  # a corpus skill trust cannot hash: left unlocked
            continue
    lock.save()


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plain, locked = work / "plain" / "skills", work / "locked" / "skills"
        n = copy_corpus(plain, args.count)
        shutil.copytree(plain, locked, symlinks=True)
        lock_all(locked)
        cache = work / "cache"
        env = dict(
            os.environ,
            HOME=str(work),
            XDG_CONFIG_HOME=str(work / "cfg"),
            XDG_DATA_HOME=str(work / "data"),
            XDG_CACHE_HOME=str(cache),
            NO_COLOR="1",
        )
        base = [sys.executable, "-m", "skillchat", "skills", "list", "--skills-dir"]
        cases = {
            "no lock": [*base, str(plain)],
            "locked, unchanged": [*base, str(locked)],
            "locked, full re-hash": [*base, str(locked)],
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for argv in cases.values():
            timed(argv, env)  # warm the page cache, .pyc files and the stat cache
        for _ in range(args.runs):
            for name, argv in cases.items():
                if name == "locked, full re-hash":
                    shutil.rmtree(cache / "skillchat", ignore_errors=True)
                times[name].append(timed(argv, env))
        floor = statistics.median(times["no lock"])
        print(f"skills list with {n} real skills, median of {args.runs} interleaved runs")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"  {name:24} {med:.3f} s  ({(med / floor - 1) * 100:+.1f}% over no lock)")


if __name__ == "__main__":
    main()
