"""What per-skill overrides cost each start and each catalog: the 234 real skills.

Run: `python benchmarks/bench_overrides.py [--runs R]`. Not part of pytest: timings
depend on the machine. In a temporary HOME, `load_registry` (discovery, the lock
check, the overrides read and applied) with no overrides file, and with a user's
file and a project's of 20 entries each, interleaved; and `build_catalog` plain vs with two
pinned skills and one name-only (the real corpus's catalog is shortened to fit, so
the pins change the search for the common length). Medians, and the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = REPO.parent / "shared" / "real-skills"


def medians_ms(runs: int, *calls: Callable[[], object]) -> list[float]:
    """The median time of each call, the calls interleaved run by run (load moves)."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for spent, call in zip(times, calls, strict=True):
            begin = time.perf_counter()
            call()
            spent.append(time.perf_counter() - begin)
    return [statistics.median(spent) * 1000 for spent in times]


def place(home: Path) -> Path:
    """`home` as the user's home (the XDG folders in it), its `project` the cwd."""
    os.environ["HOME"] = str(home)
    for name, folder in (("CONFIG", "config"), ("CACHE", "cache"), ("DATA", "data")):
        os.environ[f"XDG_{name}_HOME"] = str(home / folder)
    os.chdir(home / "project")
    return home / "project"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-overrides-"))
    bare_home, kept_home = root / "bare", root / "kept"
    for home in (bare_home, kept_home):
        (home / "project" / ".git").mkdir(parents=True)
    place(kept_home)
    from skillchat.config import load_settings
    from skillchat.prompt import build_catalog
    from skillchat.session_settings import load_registry
    from skillchat.skills.overrides import project_file, user_file

    folders = tuple(str(p) for p in sorted({p.parent.parent for p in CORPUS.rglob("SKILL.md")}))
    settings = replace(load_settings(), skill_dirs=folders)
    plain = load_registry(settings)
    names = plain.names()
    for path, kind in ((user_file(), "name-only"), (project_file(place(kept_home)), "pin")):
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f'{n} = "{kind}"' for n in names[:: len(names) // 20][:20]]
        path.write_text("[overrides]\n" + "\n".join(lines) + "\n")
    bare, kept = medians_ms(
        args.runs,
        lambda: place(bare_home) and load_registry(settings),
        lambda: place(kept_home) and load_registry(settings),
    )
    print(f"load_registry, {len(names)} skills: no overrides {bare:.2f} ms, "
          f"2 files of 20 entries {kept:.2f} ms: {kept / bare:.3f}x")  # fmt: skip
    pins = '[overrides]\nclaude-api = "pin"\nmentoring-juniors = "pin"\n'
    user_file().write_text(pins + 'doc-and-modernize = "name-only"\n')
    project_file(place(kept_home)).write_text(pins)
    pinned = load_registry(settings)
    before, after = medians_ms(
        args.runs, lambda: build_catalog(plain, 30_000), lambda: build_catalog(pinned, 30_000)
    )
    print(f"build_catalog at 30,000: plain {before:.2f} ms, 2 pinned + 1 name-only "
          f"{after:.2f} ms: {after / before:.3f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
