"""The embedded local model against the same model behind `start-real-model.sh`.

Both sides start llama.cpp's server from cold with SmolLM2-135M (same xllamacpp, same
GGUF, same template, context 2048, threads = CPUs), then run one `skillchat ask`:

- embedded: `skillchat ask --gguf FILE PROMPT`, timed from the command's start to its
  first answer byte on stdout (the server's start is inside that time);
- external: `start-real-model.sh` (timed until it reports healthy) plus
  `skillchat ask --api-base URL PROMPT` to its first byte.

Tokens per second: completion tokens (the usage line) over the time from the first
byte to the end of the answer. Usage:

    python benchmarks/bench_local_model.py GGUF_FILE [RUNS]
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Beside the repository (a clone), or beside one of its parents (a worktree).
SCRIPT = next(
    (
        p / "shared" / "real-model" / "start-real-model.sh"
        for p in Path(__file__).resolve().parents
        if (p / "shared" / "real-model" / "start-real-model.sh").is_file()
    ),
    Path("start-real-model.sh"),
)
PROMPT = "Write three sentences about the sea."
CTX = 2048


def timed_ask(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first stdout byte, tokens per second after it)."""
    begun = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "skillchat", "ask", *args, PROMPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(1)
    first = time.monotonic() - begun
    process.stdout.read()
    errors = process.stderr.read().decode()
    process.wait()
    end = time.monotonic() - begun
    found = re.search(r"\+ ([\d,]+) out", errors)
    tokens = int(found.group(1).replace(",", "")) if found else 0
    return first, tokens / max(end - first, 1e-6)


def main() -> None:
    gguf = Path(sys.argv[1]).resolve()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cache = Path(os.environ.get("REAL_MODEL_DIR", Path.home() / ".cache" / "real-model"))
    with tempfile.TemporaryDirectory() as home:
        config = Path(home) / "config.toml"
        config.write_text(f"[local]\ncontext_max = {CTX}\n")
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home}
        embedded, external = [], []
        for _ in range(runs):
            embedded.append(timed_ask(["--gguf", str(gguf), "--config", str(config)], env))
            port = "8471"
            begun = time.monotonic()
            started = subprocess.run(
                [str(SCRIPT), "--port", port, "--ctx", str(CTX), "--dir", str(cache)],
                capture_output=True,
                text=True,
                check=True,
            )
            startup = time.monotonic() - begun
            base = started.stdout.strip().splitlines()[-1]
            try:
                first, rate = timed_ask(
                    ["--api-base", base, "--model", "smollm2-135m", "--config", str(config)],
                    env,
                )
            finally:
                subprocess.run([str(SCRIPT), "stop", "--port", port, "--dir", str(cache)],
                               capture_output=True)  # fmt: skip
            external.append((startup + first, rate))
    for name, rows in (("embedded (--gguf)", embedded), ("external (script + ask)", external)):
        first = statistics.median(r[0] for r in rows)
        rate = statistics.median(r[1] for r in rows)
        print(f"{name:26} first token {first:5.2f} s   {rate:5.1f} tokens/s   (median of {runs})")
    ratio = statistics.median(r[0] for r in embedded) / statistics.median(r[0] for r in external)
    print(f"embedded / external time to first token: {ratio:.2f}")


if __name__ == "__main__":
    main()
