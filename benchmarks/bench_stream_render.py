"""CPU spent rendering a streamed answer, per 1k tokens, as the answer grows.

Run: `python benchmarks/bench_stream_render.py [--sizes 1000,5000,20000,50000]
[--llm PATH]`. Not part of pytest: timings depend on the machine. The scripted
server (tests/openai_server.py, in this process) streams a Markdown answer of N
tokens (one delta per ~4-character token: headings, paragraphs, lists, fenced
code) as fast as it can; each command runs on a 40x120 pseudo-terminal whose
output is read and thrown away, and its CPU time (user + system, from the kernel's
accounting of reaped children) is measured:

- `skillchat ask` on the pty (Markdown rendered as it streams);
- `skillchat ask` with stdout piped (raw text, the floor for the same process);
- `llm` (PyPI `llm`, raw text), when given: `--llm PATH` (install it in a venv of its
  own, see bench_first_request.py).

Per-1k-token cost is (CPU at N - CPU of a one-word answer) / N * 1000, so process
start-up is not counted; the bytes each command wrote to the terminal are counted
too. Targets: per-token cost flat from 1k to 50k tokens; at 20k at most 0.6x llm's
CPU and at most 2x the bytes llm writes.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import resource
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_first_request import SKILLCHAT, environment  # noqa: E402
from openai_server import ScriptedServer, reply  # noqa: E402

ROWS, COLUMNS = 40, 120


def section(n: int) -> str:
    """About 260 tokens of the Markdown a model writes."""
    words = " ".join(f"word{(n * 7 + i) % 97}" for i in range(60))
    items = "".join(f"- item {i} of section {n}, with `code` and **bold**\n" for i in range(5))
    code = "".join(f"    total_{i} = compute({i}, {n})  # step {i}\n" for i in range(10))
    return f"## Section {n}\n\n{words}.\n\n{items}\n```python\ndef f_{n}():\n{code}```\n\n"


def answer(tokens: int) -> str:
    text, n = "", 0
    while len(text) < tokens * 4:
        text += section(n)
        n += 1
    return text[: tokens * 4]


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path, piped: bool) -> tuple[float, int]:
    """CPU seconds (user + system) of `argv` run on a pty (stdout piped if asked), and
    the bytes it wrote to the terminal."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    proc = subprocess.Popen(
        argv, env={**env, "TERM": "xterm-256color"}, cwd=cwd, stdin=slave,
        stdout=subprocess.DEVNULL if piped else slave, stderr=slave, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    written = 0
    while True:  # drain the terminal as a terminal would
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 1 << 16)
                if not data:
                    break
                written += len(data)
            except OSError:
                break
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(master)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode})")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,20000,50000")
    parser.add_argument("--llm", default=shutil.which("llm"), help="path of the llm CLI")
    parser.add_argument("--runs", type=int, default=1, help="interleaved runs; medians kept")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with ScriptedServer() as server, tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = environment(home, server.base_url)
        ask = [str(SKILLCHAT), "ask", "--api-base", server.base_url]
        ask += [
            "--skills-dir",
            str(REPO / "skillchat" / "bundled_skills"),
            "--model",
            "openai/test-model",
            "go",
        ]
        commands = {"skillchat (pty)": (ask, False), "skillchat (piped)": (ask, True)}
        if args.llm:
            commands["llm (pty)"] = ([args.llm, "-m", "bench", "go"], False)
        runs: dict[tuple[str, int], list[tuple[float, int]]] = {}
        for _ in range(args.runs):
            for tokens in [1, *sizes]:
                text = answer(tokens) if tokens > 1 else "Hello."
                for name, (argv, piped) in commands.items():
                    server.script(reply(text, chunks=max(1, len(text) // 4)))
                    runs.setdefault((name, tokens), []).append(cpu_of(argv, env, home, piped))
    results: dict[str, dict[int, float]] = {name: {} for name in commands}
    written: dict[str, dict[int, int]] = {name: {} for name in commands}
    for (name, tokens), measured in runs.items():
        results[name][tokens] = statistics.median(cpu for cpu, _ in measured)
        written[name][tokens] = int(statistics.median(size for _, size in measured))
    print(
        f"CPU per 1k tokens (start-up of a one-word answer subtracted), {ROWS}x{COLUMNS} pty, "
        f"medians of {args.runs} interleaved runs"
    )
    print(f"  {'tokens':>8}" + "".join(f"  {name:>18}" for name in commands))
    for tokens in sizes:
        row = ""
        for name in commands:
            total = results[name][tokens]
            per_k = (total - results[name][1]) / tokens * 1000
            row += f"  {per_k * 1000:8.0f} ms ({total:5.1f}s)"
        print(f"  {tokens:>8}{row}")
    if args.llm and 20000 in sizes:
        ours = results["skillchat (pty)"][20000] - results["skillchat (pty)"][1]
        theirs = results["llm (pty)"][20000] - results["llm (pty)"][1]
        verdict = "met" if ours <= 0.6 * theirs else "MISSED"
        print(f"target: at most 0.6x llm's CPU at 20k -> {ours / theirs:.2f}x: {verdict}")
        ours_b, theirs_b = written["skillchat (pty)"][20000], written["llm (pty)"][20000]
        verdict = "met" if ours_b <= 2 * theirs_b else "MISSED"
        print(
            f"target: at most 2x llm's bytes at 20k -> {ours_b:,} vs {theirs_b:,} bytes, "
            f"{ours_b / theirs_b:.2f}x: {verdict}"
        )
    first, last = sizes[0], sizes[-1]
    per_k = {t: (results["skillchat (pty)"][t] - results["skillchat (pty)"][1]) / t for t in sizes}
    print(f"per-token cost {last // 1000}k vs {first // 1000}k: {per_k[last] / per_k[first]:.2f}x")


if __name__ == "__main__":
    main()
