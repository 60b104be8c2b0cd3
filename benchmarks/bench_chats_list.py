"""Time `skillchat chats list` over 10,000 saved chats, as a whole process.

Run: `python benchmarks/bench_chats_list.py [--chats N] [--runs R]`. Not part of
pytest: timings depend on the machine. The target is `chats list` <= 0.5 s (median,
warm page cache) with 10,000 chats, because listing is what a user does before
resuming one. `skillchat --version` is timed beside it as the floor (interpreter +
CLI import), and `skillchat config path` as a command that parses options (Typer
validates them with pydantic, ~0.1 s) but does no work: the difference between it
and `chats list` is what the store and the listing cost.

The database is filled through the public store API (one transaction per message,
as a chat writes it), in a temporary XDG_DATA_HOME, so nothing of the user's is read.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillchat.chats.store import ChatStore

TARGET_SECONDS = 0.5
ANSWER = "Here is what I found: " + "a fairly ordinary sentence of an answer. " * 12


def fill(db: Path, chats: int) -> float:
    """`chats` chats of 3-5 messages each; returns the seconds it took."""
    start = time.perf_counter()
    with ChatStore.open(db) as store:
        for i in range(chats):
            chat = store.create_chat("gpt-4.1-mini" if i % 3 else "anthropic/claude-sonnet-4")
            store.append_message(chat.id, {"role": "user", "content": f"Question {i}: widgets?"})
            store.append_message(chat.id, {"role": "assistant", "content": ANSWER})
            for extra in range(i % 3):
                role = "user" if extra % 2 == 0 else "assistant"
                store.append_message(chat.id, {"role": role, "content": f"more {extra}"})
    return time.perf_counter() - start


def command() -> list[str]:
    exe = Path(sys.executable).parent / "skillchat"
    found = shutil.which("skillchat") if not exe.exists() else str(exe)
    return [found] if found else [sys.executable, "-m", "skillchat"]


def time_process(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    """Wall time of `runs` runs (after one warm-up), stdout piped and read in full."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
        if i:
            times.append(elapsed)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="skillchat-bench-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLCHAT_")}
        for var in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            (root / var).mkdir()
            env[var] = str(root / var)
        db = root / "XDG_DATA_HOME" / "skillchat" / "chats.db"
        seconds = fill(db, args.chats)
        print(f"filled {args.chats} chats in {seconds:.1f} s ({db.stat().st_size // 1024} KiB)")

        base = command()
        rows = [
            ("skillchat --version (floor)", [*base, "--version"]),
            ("skillchat config path", [*base, "config", "path"]),
            ("skillchat chats list", [*base, "chats", "list"]),
            ("skillchat chats list --json", [*base, "chats", "list", "--json"]),
        ]
        results = {label: time_process(argv, env, args.runs) for label, argv in rows}

    print(f"\n{'command':<30} {'median':>8} {'min':>8} {'max':>8}   ({args.runs} runs)")
    for label, times in results.items():
        print(
            f"{label:<30} {statistics.median(times):>7.3f}s {min(times):>7.3f}s {max(times):>7.3f}s"
        )
    floor = statistics.median(results[rows[0][0]])
    command_floor = statistics.median(results[rows[1][0]])
    listing = statistics.median(results[rows[2][0]])
    verdict = "OK" if listing <= TARGET_SECONDS else "TOO SLOW"
    print(
        f"\nchats list: {listing:.3f} s median, {listing - floor:+.3f} s over --version,"
        f" {listing - command_floor:+.3f} s over config path; target <= {TARGET_SECONDS} s:"
        f" {verdict}"
    )
    return 0 if listing <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
