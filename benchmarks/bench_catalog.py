"""Time building the skill catalog for 2,000 skills made from the real corpus.

Run: `python benchmarks/bench_catalog.py [--skills N] [--runs R] [--budget CHARS]`.
Not part of pytest: timings depend on the machine. The skills are copies of the
real skills' frontmatter (../shared/real-skills, cycled with numbered names), so the
descriptions have their real lengths and punctuation. Discovery is timed apart from
`build_catalog`, which runs once per chat (and after `/reload`): the fair catalog
searches for the common description length that fits `catalog_max_chars`, so its
cost grows with the number of skills; the target is under 50 ms for 2,000 skills.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skillchat.prompt import build_catalog  # noqa: E402
from skillchat.skills.registry import discover  # noqa: E402

CORPUS = REPO.parent / "shared" / "real-skills"
TARGET_SECONDS = 0.050


def real_descriptions() -> list[str]:
    """The descriptions of the real corpus's usable skills, in name order."""
    folders = sorted({p.parent.parent for p in CORPUS.rglob("SKILL.md")})
    registry = discover(folders)
    return [registry.skills[name].description for name in registry.names()]


def make_library(root: Path, count: int, descriptions: list[str]) -> Path:
    """`count` skills whose descriptions cycle through the real ones."""
    for i in range(count):
        name = f"skill-{i:05d}"
        folder = root / name
        folder.mkdir(parents=True)
        description = json.dumps(descriptions[i % len(descriptions)])
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n# Skill {i}\n",
            encoding="utf-8",
        )
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--budget", type=int, nargs="+", default=[30_000, 200_000], help="catalog_max_chars"
    )
    args = parser.parse_args()
    descriptions = real_descriptions()
    with tempfile.TemporaryDirectory(prefix="skillchat-bench-") as tmp:
        library = make_library(Path(tmp) / "skills", args.skills, descriptions)
        start = time.perf_counter()
        registry = discover([library], max_skills=args.skills)
        discovery = time.perf_counter() - start
    assert len(registry.skills) == args.skills, registry.excluded[:3]
    print(f"{args.skills:,} skills ({len(descriptions)} real descriptions cycled)")
    print(f"discover(): {discovery * 1000:.1f} ms (one run)")
    worst = 0.0
    for budget in args.budget:
        times, catalog = [], None
        for _ in range(args.runs):
            start = time.perf_counter()
            catalog = build_catalog(registry, budget)
            times.append(time.perf_counter() - start)
        assert catalog is not None
        median = statistics.median(times)
        worst = max(worst, median)
        print(
            f"build_catalog(), catalog_max_chars = {budget:,}: {min(times) * 1000:.1f} ms "
            f"best, {median * 1000:.1f} ms median\n  {catalog.warning() or 'all whole'}"
        )
    verdict = "OK" if worst <= TARGET_SECONDS else "OVER TARGET"
    print(f"target <= {TARGET_SECONDS * 1000:.0f} ms for build_catalog (median): {verdict}")
    return 0 if worst <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
