"""Overhead of run_command over the bare command: `true` and `python3 -c pass`, run
bare (subprocess, bash -c, the sandbox's PATH) and through the run_command tool (consent given, a
scratch folder, one skill mounted), medians of N runs side by side. Target: the
sandbox adds at most 50 ms.

    python benchmarks/bench_run_command.py [N]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillchat.config import Settings
from skillchat.sandbox.command_tool import SandboxCommands, Verdict
from skillchat.sandbox.detect import probe
from skillchat.sandbox.layout import PATH, SandboxSpec
from skillchat.skills.registry import Registry
from skillchat.tools.base import ToolContext
from skillchat.tools.run_command import RunCommand

REPO = Path(__file__).resolve().parents[1]
SHELL = "/usr/bin/bash"


def median_ms(fn: object, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    status = probe()
    if not status.available:
        sys.exit(f"no sandbox: {status.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        skills = {"calculator": REPO / "skillchat" / "bundled_skills" / "calculator"}
        runner = SandboxCommands(
            status,
            lambda: SandboxSpec(scratch=Path(tmp) / "scratch", skills=skills),
            lambda request: Verdict("approved"),
        )
        context = ToolContext(Settings(), Registry(skills={}), commands=runner)
        tool = RunCommand()
        env = {"PATH": PATH}  # the same system python3 as inside, not this virtualenv's
        print(f"{'command':<22}{'bare ms':>10}{'sandboxed ms':>15}{'overhead ms':>14}")
        for command in ("true", "python3 -c pass"):
            bare = median_ms(lambda c=command: subprocess.run([SHELL, "-c", c], env=env), n)
            args = json.dumps({"command": command})
            boxed = median_ms(lambda a=args: tool.run(a, context), n)
            print(f"{command:<22}{bare:>10.1f}{boxed:>15.1f}{boxed - bare:>14.1f}")


if __name__ == "__main__":
    main()
