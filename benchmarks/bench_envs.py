"""Skill environments on the same packages (Pillow + numpy, from the configured index):

1. a cold install (empty uv cache) in its sandbox, against `python -m venv` +
   `pip install` of the same set (pip's cache off); target: at most half pip's time;
2. a second skill declaring the same set: the environment is found, not installed;
   target: under 1 s;
3. a command's overhead with the environment mounted against without (median of N
   `python3 -c pass` runs through SandboxCommands); target: under 5 ms more.

    python benchmarks/bench_envs.py [N]
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
from skillchat.sandbox.runner import run_in_sandbox

PACKAGES = ("pillow", "numpy")


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def median_ms(fn: object, n: int) -> float:
    return statistics.median(timed(fn) * 1000 for _ in range(n))


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

        pip_s = timed(pip)
        cold_s = timed(cold)
        second_s = timed(lambda: ensure(store, PACKAGES, tools))
        assert record is not None
        spec = SandboxSpec(scratch=base / "scratch")
        with_env = SandboxSpec(
            scratch=base / "scratch", binds=((store.path(record.key), ENV_MOUNT, False),)
        )
        env = {"PATH": f"{ENV_MOUNT}/bin:{PATH}"}
        bare_ms = median_ms(lambda: run_in_sandbox(tools, spec, "python3 -c pass"), n)
        env_ms = median_ms(
            lambda: run_in_sandbox(tools, with_env, "python3 -c pass", extra_env=env), n
        )
        print(f"packages: {', '.join(PACKAGES)}; {record.summary()}")
        print(f"python -m venv + pip install:     {pip_s:6.2f} s")
        print(f"cold install (uv, sandboxed):     {cold_s:6.2f} s  ({cold_s / pip_s:.0%} of pip)")
        print(f"second skill, same set:           {second_s * 1000:6.1f} ms")
        print(f"python3 -c pass, no environment:  {bare_ms:6.1f} ms (median of {n})")
        print(f"python3 -c pass, environment:     {env_ms:6.1f} ms (+{env_ms - bare_ms:.1f} ms)")
        print(f"environment size: {record.size_bytes / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
