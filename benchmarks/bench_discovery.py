"""Time discovery of 10,000 synthetic skills, against skills-ref's `read_properties`.

Run: `python benchmarks/bench_discovery.py [--skills N] [--runs R]`. Not part of
pytest: timings depend on the machine. The target is `discover()` <= 1 s for
10,000 skills (warm page cache, best of the runs), because discovery runs at
every start. skills-ref reads and parses the whole SKILL.md with strictyaml; the
ratio shows what reading only the frontmatter with libyaml buys.

It also times the default limit (`max_skills` 1,000) over the same 10,000 skills
against a directory of 1,000: folders past the limit are not read, so the target is
at most 1.2x.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillchat.skills.registry import discover

TARGET_SECONDS = 1.0
LIMIT, LIMIT_RATIO = 1000, 1.2
BODY = "\n".join(f"Step {i}: do the thing carefully, then check the result." for i in range(60))


def make_corpus(root: Path, count: int) -> Path:
    """`count` skills in one directory: realistic frontmatter, a ~3.5 KB body."""
    skills = root / "skills"
    skills.mkdir(parents=True)
    for i in range(count):
        name = f"skill-{i:05d}"
        folder = skills / name
        folder.mkdir()
        extra = f"metadata:\n  author: bench\n  version: '{i % 7}.0'\n" if i % 3 == 0 else ""
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\n"
            f"description: Use this skill to handle task number {i}, when the user asks for "
            f"it or mentions *widgets* and gadgets.\nlicense: MIT\n{extra}---\n\n"
            f"# Skill {i}\n\n{BODY}\n",
            encoding="utf-8",
        )
    return skills


def time_runs(fn: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def skills_ref_all(skills: Path) -> None:
    from skills_ref import read_properties

    for folder in sorted(skills.iterdir()):
        read_properties(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillchat-bench-") as tmp:
        skills = make_corpus(Path(tmp), args.skills)
        registry = discover([skills], max_skills=args.skills)
        assert len(registry.skills) == args.skills, registry.excluded[:3]
        ours = time_runs(lambda: discover([skills], max_skills=args.skills), args.runs)
        small = make_corpus(Path(tmp) / "small", LIMIT)
        capped = time_runs(lambda: discover([skills], max_skills=LIMIT), args.runs)
        thousand = time_runs(lambda: discover([small], max_skills=LIMIT), args.runs)
        try:
            theirs = time_runs(lambda: skills_ref_all(skills), max(1, args.runs // 2))
        except ImportError:
            theirs = []
    rows = [("skillchat discover()", ours)]
    if theirs:
        rows.append(("skills-ref read_properties()", theirs))
    print(f"{args.skills:,} skills, {args.runs} runs (warm cache)\n")
    print(f"{'':30} {'best':>9} {'median':>9} {'per skill':>10}")
    for label, times in rows:
        best, median = min(times), statistics.median(times)
        per = best / args.skills * 1e6
        print(f"{label:30} {best:8.3f}s {median:8.3f}s {per:8.1f}us")
    if theirs:
        print(f"\nskills-ref / skillchat (best): {min(theirs) / min(ours):.1f}x")
    ratio = statistics.median(capped) / statistics.median(thousand)
    print(
        f"\nmax_skills={LIMIT}: {args.skills:,} skills {statistics.median(capped):.3f}s vs "
        f"{LIMIT:,} skills {statistics.median(thousand):.3f}s (medians): {ratio:.2f}x, "
        f"target <= {LIMIT_RATIO}x: {'OK' if ratio <= LIMIT_RATIO else 'OVER TARGET'}"
    )
    verdict = "OK" if min(ours) <= TARGET_SECONDS else "OVER TARGET"
    print(f"target <= {TARGET_SECONDS:.1f}s for discover(): {verdict}")
    return 0 if min(ours) <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
