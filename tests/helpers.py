"""Shared pieces for the tests: files and skill folders on disk, and `skillchat` run as
a user runs it (a subprocess, pointed at the scripted server)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openai_server import ScriptedServer

REPO = Path(__file__).resolve().parents[1]
# The test data kept beside the repository: next to a CI clone, or above a worktree
# made under a checkout's folder. None when absent (the `shared` fixture then skips).
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "real-skills").is_dir()), None)
# Where its parts are (paths that do not exist when it is absent).
REAL_SKILLS = (SHARED or REPO.parent / "shared") / "real-skills"
REAL_SKILLS_SCRIPTS = (SHARED or REPO.parent / "shared") / "real-skills-scripts"


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Each `relative path: text` of `files` written under `root` (folders made as
    needed); `root` itself."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def skill_folder(parent: Path, dir_name: str, frontmatter: str, body: str = "# Body\n") -> Path:
    """`parent/dir_name` with a SKILL.md: `frontmatter` (raw YAML lines, each ending in a
    newline) between the `---` fences, then `body`."""
    return write_files(parent / dir_name, {"SKILL.md": f"---\n{frontmatter}---\n{body}"})


def closed_port() -> int:
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skillchat(*args: str, timeout: float = 60, **options: Any) -> subprocess.CompletedProcess[str]:
    """`python -m skillchat ARGS` to the end, its output captured as text; `options`
    (cwd, env, input, stdin) go to `subprocess.run` as they are. Without `input` or
    `stdin`, stdin is /dev/null: whatever the test runner's own stdin is (a pipe, in
    some CI), `ask` must not read it."""
    if "input" not in options and "stdin" not in options:
        options["stdin"] = subprocess.DEVNULL
    return subprocess.run(
        [sys.executable, "-m", "skillchat", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **options,
    )


def one_line_error(done: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The one `skillchat: error:` line of a run that exited with `code`, no traceback."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("skillchat: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def session_options(server: ScriptedServer, skills_dir: Path | str) -> list[str]:
    """The options that point a skillchat session at the scripted server and a skills folder."""
    return [
        "--model",
        "openai/test-model",
        "--api-base",
        server.base_url,
        "--skills-dir",
        str(skills_dir),
    ]


def wait_for(condition: Callable[[], bool], timeout: float = 30) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; its last answer.
    The tests wait on a state this way, never with a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
