"""What `ask --output-format stream-json` costs beside text and json.

Run: `python benchmarks/bench_stream_json.py [--runs N]`. Not part of pytest:
timings depend on the machine. The same question, answered by the same local
server (tests/openai_server.py, in this process: the request's arrival and the
process start are read on one clock) in 40 deltas, asked with each format in turn
(runs interleaved, so drift in load hits all alike). Printed: the medians of the
time to the first request, of the whole process's CPU (user + system) and of its
wall time, and each format's ratio to text's. The stream writes and flushes a line
per delta where text writes the answer through the terminal view (on a pipe: once,
at the end).
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
sys.path.insert(0, str(REPO / "tests"))

from openai_server import ScriptedServer, reply  # noqa: E402

FORMATS = ("text", "json", "stream-json")


def one(server: ScriptedServer, fmt: str, env: dict[str, str]) -> tuple[float, float, float]:
    """(seconds to the first request, CPU seconds, wall seconds) of one `ask`."""
    before = len(server.completions)
    server.script(reply("word " * 40, chunks=40))
    argv = [sys.executable, "-m", "skillchat", "ask", "--output-format", fmt, "--no-workspace",
            "--model", "openai/test-model", "--api-base", server.base_url, "hi"]  # fmt: skip
    start = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    assert os.waitstatus_to_exitcode(status) == 0, fmt
    first = server.completions[before].at - start
    return first, usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as server:
        folders = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
                   "XDG_CACHE_HOME": ".cache"}  # fmt: skip
        env = {**os.environ, "HOME": home, **{k: f"{home}/{v}" for k, v in folders.items()}}
        for fmt in FORMATS:  # warm: the sandbox probe is cached, files are in the page cache
            one(server, fmt, env)
        seen: dict[str, list[tuple[float, float, float]]] = {fmt: [] for fmt in FORMATS}
        for _ in range(runs):
            for fmt in FORMATS:
                seen[fmt].append(one(server, fmt, env))
    medians = {f: [statistics.median(x[i] for x in seen[f]) for i in range(3)] for f in FORMATS}
    print(f"{runs} runs each, load {os.getloadavg()[0]:.1f}")
    print(f"{'format':<12} {'first request':>14} {'cpu':>8} {'wall':>8}   ratios to text")
    for fmt, (first, cpu, wall) in medians.items():
        base = medians["text"]
        ratios = f"{first / base[0]:.2f}x {cpu / base[1]:.2f}x {wall / base[2]:.2f}x"
        print(f"{fmt:<12} {first * 1000:>11.0f} ms {cpu * 1000:>5.0f} ms {wall * 1000:>5.0f} ms"
              f"   {ratios}")  # fmt: skip


if __name__ == "__main__":
    main()
