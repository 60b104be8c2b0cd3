"""`skillchat ask` as a user runs it, against the scripted server: in process, and as a
real process where that is the subject (a terminal, a signal, what it imports).

Checks what reaches stdout (only the answer, or one JSON object), stderr (cards,
usage, one-line errors, never a traceback) and the exit code, for each fault.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chat_helpers import sent, system_text, tool_messages, tool_names
from helpers import (
    BOTH_PROTOCOLS,
    closed_port,
    model_for,
    one_line_error,
    session_options,
    skillchat,
)
from openai_server import ScriptedServer, call, error, reply
from request_probe import REQUEST_PROBE

from skillchat.sandbox.detect import probe

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skillchat" / "bundled_skills"


def ask(
    server: ScriptedServer | None,
    *args: str,
    stdin: str | None = None,
    config: str | None = None,
    tmp: Path | None = None,
    model: str | None = None,
) -> subprocess.CompletedProcess[str]:
    argv = ["ask", "--model", model or model_for(server)]
    if server is not None:
        argv += ["--api-base", server.base_url]
    if config is not None:
        assert tmp is not None
        (tmp / "config.toml").write_text(config)
        argv += ["--config", str(tmp / "config.toml")]
    argv += ["--skills-dir", str(SKILLS), *args]
    return skillchat(*argv, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


@BOTH_PROTOCOLS
def test_pipe_gets_only_the_answer(server: ScriptedServer) -> None:
    server.script(
        reply("Let me load the skill.", calls=[call("get_skill", {"skill_name": "calculator"})]),
        reply("**39.1**"),
    )
    done = ask(server, "what is 17% of 230?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "**39.1**\n"
    assert "Let me load the skill." in done.stderr  # narration: stderr, with the cards
    assert "get_skill" in done.stderr and 'skill_name="calculator"' in done.stderr
    assert "tokens: 20 in + 10 out = 30" in done.stderr
    # run_command is offered wherever a sandbox works (without --allow-run it refuses)
    offered = ["run_command"] if probe().available else []
    assert tool_names(server, 0) == [
        "list_skills",
        "get_skill",
        "read_file_in_skill",
        *offered,
    ]
    assert '"name": "calculator"' in (system_text(server, 0) or "")


@BOTH_PROTOCOLS
def test_json_output_shape(server: ScriptedServer) -> None:
    server.script(
        reply(
            calls=[call("read_file_in_skill", {"skill_name": "calculator", "file_path": "../x"})]
        ),
        reply("done"),
    )
    done = ask(server, "--json", "/calculator 2+2")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {
        "answer", "tool_calls", "usage", "model", "chat_id", "forks", "usage_by_model"
    }  # fmt: skip
    assert report["forks"] == [] and set(report["usage_by_model"]) == {model_for(server)}
    assert re.fullmatch(r"[0-9a-f]{8}", report["chat_id"])
    assert report["answer"] == "done" and report["model"] == model_for(server)
    invoked, traversal = report["tool_calls"]
    assert invoked["name"] == "get_skill" and invoked["arguments"] == {"skill_name": "calculator"}
    assert invoked["is_error"] is False
    assert "2+2" in json.loads(invoked["result"])["documentation"]
    assert traversal == {
        "name": "read_file_in_skill",
        "arguments": {"skill_name": "calculator", "file_path": "../x"},
        "result": "ERROR: Path traversal detected: cannot access files outside skill folder",
        "is_error": True,
    }
    assert report["usage"] == {
        "prompt_tokens": 20,
        "completion_tokens": 10,
        "total_tokens": 30,
        "cost": None,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
    }
    assert sent(server, 0)[1] == {"role": "user", "content": "2+2"}


@BOTH_PROTOCOLS
def test_prompt_from_stdin(server: ScriptedServer) -> None:
    server.script(reply("from dash"), reply("from pipe"))
    assert ask(server, "-", stdin="question one\n").stdout == "from dash\n"
    assert sent(server)[-1] == {"role": "user", "content": "question one\n"}
    assert ask(server, stdin="question two").stdout == "from pipe\n"
    assert sent(server)[-1]["content"] == "question two"


@BOTH_PROTOCOLS
def test_empty_prompt_is_a_usage_error(server: ScriptedServer) -> None:
    done = ask(server, "-", stdin="  \n")
    assert done.returncode == 2 and "the prompt is empty" in done.stderr
    assert not server.completions


@BOTH_PROTOCOLS
def test_no_tools_and_disabled_skills(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(reply("a"), reply("b"))
    assert ask(server, "--no-tools", "/calculator 1+1").returncode == 0
    first = sent(server, 0)
    assert "tools" not in server.completions[0].body
    assert "The question to answer: 1+1" in first[0]["content"]
    done = ask(server, "/calculator 1+1", config="[skills]\nenabled = false\n", tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tools" not in server.completions[1].body
    assert sent(server, 1) == [{"role": "user", "content": "/calculator 1+1"}]


FAULTS = {
    "401": ([error(401)], "authentication failed (401)"),
    "404-model": ([error(404)], "model '{model}' not found (404)"),
    "429": ([error(429, retry_after="0"), error(429, retry_after="0")], "rate limited (429)"),
    "500": ([error(500), error(500)], "server error (500)"),
    "timeout": ([reply("late", delay=60)], "timed out after 0.5s"),
    "stream-cut": ([reply("a long reply " * 10, chunks=8, cut_after=4)], "cut off mid-reply"),
}


@BOTH_PROTOCOLS
@pytest.mark.parametrize("fault", list(FAULTS))
def test_provider_faults_end_in_one_line(server: ScriptedServer, tmp_path: Path, fault: str):
    moves, expected = FAULTS[fault]
    expected = expected.format(model=model_for(server))
    server.script(*moves)
    # The short timeout only where it is the fault: an error or a cut stream must not
    # race it on a loaded machine.
    config = "max_retries = 1\n" + ("timeout = 0.5\n" if fault == "timeout" else "")
    done = ask(server, "hi", config=config, tmp=tmp_path)
    assert expected in one_line_error(done)
    if fault in ("429", "500"):
        assert len(server.completions) == 2  # retried once, then gave up
        assert "gave up after 1 retry" in done.stderr
        assert "retrying in" in done.stderr
    if fault == "timeout":  # `timeout` is the whole wait: not waited again
        assert len(server.completions) == 1 and "retrying" not in done.stderr


def test_refused_connection_and_missing_key(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = ask(None, "--api-base", url, "hi", config="max_retries = 1\n", tmp=tmp_path)
    line = one_line_error(done)
    assert "connection refused — is the server running?" in line
    assert "retry" not in line and "retrying" not in done.stderr  # at once, on 127.0.0.1
    done = ask(None, "hi", model="gpt-4.1-mini")
    assert "OPENAI_API_KEY is not set" in one_line_error(done)


@BOTH_PROTOCOLS
def test_tool_round_limit_exits_1(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(*[reply(calls=[call("list_skills")])] * 3)
    done = ask(server, "go", config="max_tool_rounds = 2\n", tmp=tmp_path)
    assert "after 2 tool rounds" in one_line_error(done)
    assert len(tool_messages(server)) == 2


def read_until(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    """What `proc` has written on stdout, read as it comes until `text` is in it (or
    `timeout` seconds pass): a state the user sees, for a test to wait on."""
    assert proc.stdout is not None
    fd, seen = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            if not (data := os.read(fd, 65536)):
                break
            seen += data
    return seen.decode()


@BOTH_PROTOCOLS
def test_ctrl_c_keeps_what_was_shown_and_exits_130(server: ScriptedServer) -> None:
    # Ten words, then the stream goes silent. Without tools the words go to stdout as
    # they come: Ctrl-C comes once they are there. (A reply that may call tools is
    # held until it ends: nothing says when ask has read it. Written out on a signal
    # all the same: tests/test_stream_render.py.)
    server.script(reply("word " * 40, chunks=40, stall_after=11))
    argv = [sys.executable, "-m", "skillchat", "ask", *session_options(server, SKILLS)]
    # A real process: the subject is its SIGINT and the exit code it dies with.
    proc = subprocess.Popen(
        [*argv, "--no-tools", "count"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    shown = read_until(proc, "word " * 10)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert shown + out == "word " * 10 + "\n"


@pytest.mark.parametrize("scenario", ["answer", "401"])
def test_litellm_backend_from_the_command_line(server: ScriptedServer, scenario: str) -> None:
    if scenario == "answer":
        server.script(reply(calls=[call("get_skill", {"skill_name": "calculator"})]), reply("42"))
        done = ask(server, "--backend", "litellm", "/calculator 6*7")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "42\n"
        assert sent(server, 0)[1] == {"role": "user", "content": "6*7"}
        assert json.loads(tool_messages(server)[-1]["content"])["error_code"] == (
            "ALREADY_IN_CONTEXT"
        )
    else:
        server.script(error(401))
        done = ask(server, "--backend", "litellm", "hi")
        assert "authentication failed (401)" in one_line_error(done)


def test_terminal_renders_markdown_as_it_streams(server: ScriptedServer) -> None:
    pexpect = pytest.importorskip("pexpect")
    pyte = pytest.importorskip("pyte")
    text = "# Result\n\nThe answer is **39.1**.\n\n```\ncode = 1\n```\n\n- one\n- two\n"
    server.script(reply(text, chunks=10, chunk_delay=0.02))
    argv = ["-m", "skillchat", "ask", *session_options(server, SKILLS), "hi"]
    # A real process on a pty: the subject is what a terminal (not a pipe) gets.
    child = pexpect.spawn(sys.executable, argv, encoding="utf-8", timeout=30, dimensions=(40, 80))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    # What the terminal finally shows: while the reply streams, a line may be drawn
    # raw ("**39") and redrawn rendered; how often depends on the machine's load.
    term = pyte.Screen(80, 40)
    pyte.Stream(term).feed(child.before)
    screen = "\n".join(term.display)
    assert "The answer is 39.1." in screen  # bold rendered, not raw asterisks
    assert "**" not in screen and "```" not in screen
    assert "• one" in screen and "code = 1" in screen


# What a plain answer on a pipe never needs, so `ask` must not import it: each one
# was on its path once (docs/performance.md). Beside litellm's and the MCP SDK's
# every module (no MCP server is configured here).
NOT_ON_ASK_PATH = (
    "rich.markdown",  # the Markdown stream: a terminal's
    "click",  # httpx's own command line (with pygments), kept out by cli/app.py
    "pygments",
    "skillchat.mcp_config",  # MCP servers: a config file's [mcp.NAME] tables
    "skillchat.engine.parallel_forks",  # forked skills at once: a reply's tool calls
    "skillchat.safe_io.images",  # an image read or attached
    "skillchat.sandbox.layout",  # a command's sandbox: its first command (or the probe)
    "skillchat.engine.steps.hooks",  # hooks: only where a source could hold one
    "skillchat.hooks.dispatch",
    "skillchat.skills.overrides",  # per-skill overrides: only where a file could be
    "difflib",  # the near miss of a `/name`: only for a `/name` that is not one
    "skillchat.redact",  # secrets masked: for a line said (a warning), or `keys set`
    "secrets",  # (and hmac) ids are os.urandom's hex, as secrets.token_hex makes them
)
PROBE = f"""
import sys
from skillchat.cli.app import run
code = run(sys.argv[1:])
lazy = ('litellm', 'mcp', 'mcp_types')
sdk = ('openai', 'httpx', 'httpcore')  # httpx._main: cli/app.py's stand-in, not httpx
heavy = sorted(m for m in sys.modules if m.split('.')[0] in lazy or m in {NOT_ON_ASK_PATH} + sdk)
print(code, heavy, file=sys.stderr)
"""


def test_openai_path_imports_no_litellm_mcp_or_markdown_on_a_pipe(server: ScriptedServer) -> None:
    """Nor the MCP SDK with no server configured, nor any model SDK or its HTTP
    client (`openai`, `httpx`: the request goes over engine/backends/wire.py), nor
    httpx's own command line (click, pygments), kept out by cli/app.py."""
    server.script(reply("ok"), reply("ok"))
    argv = ["ask", *session_options(server, SKILLS), "hi"]
    loaded = []
    for _ in range(2):  # the first start probes the sandbox (its layout) and caches it
        # A fresh interpreter: the subject is what `ask` imports, which this one has all.
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *argv],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.stdout == "ok\n"
        loaded.append(done.stderr.strip().splitlines()[-1])
    probed = "0 ['skillchat.sandbox.layout']"  # a probe that failed is not cached
    assert loaded[0] in ("0 []", probed)
    assert loaded[1] == "0 []" or (loaded[1] == probed and not probe().available)


GC_PROBE = """
import gc, json, sys
port = int(sys.argv.pop(1))
seen = []
def connect(event, args):
    if event == "socket.connect" and args[1][1:2] == (port,):
        seen.append(gc.isenabled())
sys.addaudithook(connect)
from skillchat.cli.app import run
code = run(sys.argv[1:])
print(code, json.dumps([seen, gc.isenabled(), gc.get_freeze_count() > 0]), file=sys.stderr)
"""


def test_the_collector_is_held_off_while_ask_starts_and_on_after(server: ScriptedServer) -> None:
    """cli/app.py holds the cyclic collector off while `ask` starts (its passes over
    the start's objects cost 2% of it); the first request turns it back on, with the
    start's objects frozen, and it is on when the command returns."""
    server.script(reply("ok"))
    argv = ["ask", *session_options(server, SKILLS), "hi"]
    # A fresh interpreter: the subject is the collector's state in `ask`'s process.
    done = subprocess.run(
        [sys.executable, "-c", GC_PROBE, str(server.port), *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.stdout == "ok\n", done.stderr
    code, seen = done.stderr.splitlines()[-1].split(" ", 1)
    connects, enabled, frozen = json.loads(seen)
    assert code == "0" and connects and not connects[0]  # off at the first connection
    assert enabled and frozen


def test_no_rich_or_typer_before_the_request_when_the_catalog_warns(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """The catalog's warning (descriptions shortened to fit) is written before the
    request leaves, as plain text: Rich loads only for what follows the reply. And
    the line is read without Typer."""
    server.script(reply("ok"))
    config = tmp_path / "config.toml"
    config.write_text("[skills]\ncatalog_max_chars = 400\n")
    argv = ["ask", *session_options(server, SKILLS), "--config", str(config), "hi"]
    # A fresh interpreter: the subject is what `ask` imports, which this one has all.
    done = subprocess.run(
        [sys.executable, "-c", REQUEST_PROBE, str(server.port), *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.stdout == "ok\n", done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("warning: ") and "shortened to" in lines[0], done.stderr
    assert "(catalog_max_chars = 400)" in lines[0]
    code, seen = lines[-1].split(" ", 1)
    assert code == "0" and len(server.completions) == 1
    connects = json.loads(seen)
    assert connects and connects == [[]] * len(connects), connects  # at each: nothing


def test_an_unknown_backend_is_a_usage_error() -> None:
    done = skillchat("ask", "--backend", "nope", "hi")
    assert done.returncode == 2 and "'nope' is not one of" in done.stderr
    assert "Traceback" not in done.stderr


@BOTH_PROTOCOLS
def test_stdin_and_a_prompt_together(server: ScriptedServer, tmp_path: Path) -> None:
    diff = "diff --git a/x b/x\n+print('```')\n"
    server.script(reply("feat: add x"), reply("plain"))
    done = ask(server, "/commit-message write one", stdin=diff)
    assert done.returncode == 0 and done.stdout == "feat: add x\n", done.stderr
    [call] = [m for m in sent(server, 0) if m["role"] == "tool"]
    documentation = json.loads(call["content"])["documentation"]
    assert documentation.startswith("# Commit messages")  # /name still works on the prompt
    user = next(m for m in sent(server, 0) if m["role"] == "user")["content"]
    assert user == "write one\n\n````\n" + diff.rstrip("\n") + "\n````"  # fence outruns ```
    title = skillchat("chats", "list").stdout.split("\t")[4].strip()
    assert "write one diff --git a/x b/x" in title and not title.endswith("````")  # no fence
    file = tmp_path / "notes.txt"
    file.write_text("")
    with file.open() as empty:  # an empty file on stdin: the prompt alone
        done = skillchat("ask", "--model", model_for(server), "--api-base", server.base_url,
                         "--skills-dir", str(SKILLS), "hello", stdin=empty)  # fmt: skip
    assert sent(server)[-1] == {"role": "user", "content": "hello"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"x" * 1_000_001, "stdin is over 1,000,000 bytes"),
        (b"\x00\x01binary", "stdin is binary"),
        (b"caf\xe9", "stdin is not UTF-8 text (byte 3)"),
    ],
)
def test_bad_stdin_is_a_usage_error(server: ScriptedServer, data: bytes, message: str) -> None:
    argv = [sys.executable, "-m", "skillchat", "ask", "--api-base", server.base_url, "hi"]
    # A real process: the bytes on stdin are not text, and skillchat() takes text.
    done = subprocess.run(argv, input=data, capture_output=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr.decode()
    assert server.completions == []


def test_a_web_server_that_is_not_openai_is_named_once(tmp_path: Path) -> None:
    """Python's own http.server answers POST with an HTML 501 page: one line asking
    whether this is an OpenAI-compatible server, no HTML, no retries."""
    import http.server
    import threading

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{web.server_address[1]}/v1"
        done = ask(None, "--api-base", url, "hi", tmp=tmp_path)
    finally:
        web.shutdown()
        web.server_close()
    line = one_line_error(done)
    assert "is this an OpenAI-compatible server?" in line and "(HTTP 501)" in line
    assert "<html" not in done.stderr.lower() and "retrying" not in done.stderr
