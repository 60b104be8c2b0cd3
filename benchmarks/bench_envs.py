"""Skill environments on the same packages (Pillow + numpy, from the configured index):

1. a cold install (empty uv cache) in its sandbox, against `python -m venv` +
   `pip install` of the same set (pip's cache off); target: at most half pip's time;
2. a second skill declaring the same set: the environment is found, not installed;
   target: under 1 s;
3. a command's overhead with the environment mounted against without (median of N
   `python3 -c pass` runs in the sandbox); target: under 5 ms more;
4. the same with a skill's top-level entries shown in /scratch (what a skill's
   command gets without a workspace: skillchat/sandbox/skill_here.py).

    python benchmarks/bench_envs.py [N] [overhead]   (overhead: skip pip's side)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillchat.sandbox.detect import probe
from skillchat.sandbox.envs.install import ENV_MOUNT, ensure
from skillchat.sandbox.envs.store import EnvStore
from skillchat.sandbox.layout import PATH, SandboxSpec
from skillchat.sandbox.protect import remove_mount_points
from skillchat.sandbox.runner import run_in_sandbox
from skillchat.sandbox.skill_here import skill_entries

PACKAGES = ("pillow", "numpy")


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def paired_ms(runs: list[object], n: int) -> list[float]:
    """Medians of each of `runs`, taken in turn (A B C A B C ...), so a machine
    whose load drifts weighs on every side alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(n):
        for i, fn in enumerate(runs):
            times[i].append(timed(fn) * 1000)
    return [statistics.median(t) for t in times]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    tools = probe().tools
    assert tools is not None, "no sandbox here"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        venv = base / "venv"

        def pip() -> None:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run(
                [str(venv / "bin/pip"), "install", "-q", "--no-cache-dir", *PACKAGES], check=True
            )

        store = EnvStore(base / "envs")
        record = None

        def cold() -> None:
            nonlocal record
            record, made = ensure(store, PACKAGES, tools)
            assert made

        pip_s = timed(pip) if "overhead" not in sys.argv else float("nan")
        cold_s = timed(cold)
        second_s = timed(lambda: ensure(store, PACKAGES, tools))
        assert record is not None
        spec = SandboxSpec(scratch=base / "scratch")
        with_env = SandboxSpec(
            scratch=base / "scratch", binds=((store.path(record.key), ENV_MOUNT, False),)
        )
        env = {"PATH": f"{ENV_MOUNT}/bin:{PATH}"}
        skill = base / "skill"  # a skill of 8 top-level entries, shown in /scratch
        for name in ("SKILL.md", "LICENSE.txt", "requirements.txt", "README.md"):
            (skill / name).parent.mkdir(parents=True, exist_ok=True)
            (skill / name).write_text("x")
        for name in ("scripts", "core", "references", "assets"):
            (skill / name).mkdir()
        binds, made = skill_entries("demo", skill, base / "scratch")
        here = SandboxSpec(scratch=base / "scratch", binds=binds)
        bare_ms, env_ms, here_ms = paired_ms(
            [
                lambda: run_in_sandbox(tools, spec, "python3 -c pass"),
                lambda: run_in_sandbox(tools, with_env, "python3 -c pass", extra_env=env),
                lambda: run_in_sandbox(tools, here, "python3 -c pass"),
            ],
            n,
        )
        remove_mount_points(made)
        print(f"packages: {', '.join(PACKAGES)}; {record.summary()}")
        print(f"python -m venv + pip install:     {pip_s:6.2f} s")
        print(f"cold install (uv, sandboxed):     {cold_s:6.2f} s  ({cold_s / pip_s:.0%} of pip)")
        print(f"second skill, same set:           {second_s * 1000:6.1f} ms")
        print(f"python3 -c pass, no environment:  {bare_ms:6.1f} ms (median of {n})")
        print(f"python3 -c pass, environment:     {env_ms:6.1f} ms (+{env_ms - bare_ms:.1f} ms)")
        print(f"environment size: {record.size_bytes / 1e6:.0f} MB")
        print(
            f"python3 -c pass, skill's 8 entries in /scratch: {here_ms:6.1f} ms "
            f"(+{here_ms - bare_ms:.1f} ms)"
        )


if __name__ == "__main__":
    main()
