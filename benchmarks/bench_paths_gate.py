"""Time `paths` gating per turn over a 20,000-file workspace.

Run: `python benchmarks/bench_paths_gate.py [--files N] [--runs R]`. Not part of
pytest: timings depend on the machine. Target: under 20 ms per turn when nothing
changed, with three skills that declare `paths` (engine/steps/paths.py).

The workspace is generated under `benchmarks/.work/paths-workspace` (git-ignored): N
small files in 40 x 25 nested folders (about 20 files a folder), a `.gitignore` in
each top folder, and a git-ignored `build/` of 2,000 more. One Chat over a registry
of three gated skills is driven through its steps' `after_message` (what runs every
turn before the system prompt is built) without a model: the first turn (the
index is built: one walk), then R turns with nothing changed, then R turns that
each add or remove one matching file (the gate flips every time). Medians of R.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WORK = ROOT / "benchmarks" / ".work" / "paths-workspace"
TARGET_MS = 20.0


def make_workspace(count: int) -> Path:
    marker = WORK / ".bench-files"
    if marker.exists() and marker.read_text() == str(count):
        return WORK
    shutil.rmtree(WORK, ignore_errors=True)
    for i in range(count):
        folder = WORK / f"pkg{i % 40:02d}" / f"mod{i % 1000 // 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:05d}.js").write_text("x\n")
    for i in range(40):
        (WORK / f"pkg{i:02d}" / ".gitignore").write_text("*.log\n")
    build = WORK / "build"
    build.mkdir()
    for i in range(2000):
        (build / f"gen{i}.py").write_text("")
    (WORK / ".gitignore").write_text("build/\n")
    marker.write_text(str(count))
    return WORK


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    workspace_root = make_workspace(args.files)

    from skillchat.config import Settings
    from skillchat.engine.loop import Chat
    from skillchat.engine.steps.paths import PathsGate
    from skillchat.engine.turn import Turn, TurnResult
    from skillchat.skills.model import Skill
    from skillchat.skills.registry import Registry
    from skillchat.workspace.files import Workspace

    globs = {"py-lint": ["*.py"], "docs": ["docs/**"], "react": ["src/**/*.{ts,tsx}"]}
    skills = {
        name: Skill(name, f"{name} skill", ROOT, ROOT / "SKILL.md", ROOT, {"paths": paths})
        for name, paths in globs.items()
    }
    chat = Chat(  # no backend: only the catalog and the gate are driven
        Settings(model="openai/x"),
        Registry(skills),
        None,  # type: ignore[arg-type]
        workspace=Workspace.open(workspace_root),
    )
    gate = next(step for step in chat.steps if isinstance(step, PathsGate))

    def turn() -> float:
        start = time.perf_counter()
        gate.after_message(chat, Turn("x", "x", TurnResult("")))
        return (time.perf_counter() - start) * 1000

    first = turn()
    unchanged = [turn() for _ in range(args.runs)]
    flip = workspace_root / "pkg07" / "mod03" / "flip.py"
    flipping = []
    for i in range(args.runs):
        if i % 2 == 0:
            flip.write_text("")
        else:
            flip.unlink()
        flipping.append(turn())
        assert ("py-lint" in chat.unlisted) == (i % 2 == 1)
    folders = sum(1 for _ in os.walk(workspace_root))
    print(f"workspace: {args.files:,} files (+2,000 ignored), {folders:,} folders")
    print(f"first turn (index built):      {first:8.1f} ms")
    print(f"turn, nothing changed:         {statistics.median(unchanged):8.2f} ms (median)")
    print(f"turn, a matching file flips:   {statistics.median(flipping):8.2f} ms (median)")
    verdict = "ok" if statistics.median(unchanged) < TARGET_MS else "OVER"
    print(f"target: < {TARGET_MS:.0f} ms per turn: {verdict}")


if __name__ == "__main__":
    main()
