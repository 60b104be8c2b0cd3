"""The public Python API (docs/api.md): its examples run as written, against the
scripted model server; `Session.stream()` yields the events the listeners get, in
their order, raises what ended a turn, and stops the turn when the caller stops
pulling; `import skillchat` costs nothing until a name is read."""

from __future__ import annotations

import gc
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import wait_for
from openai_server import ScriptedServer, call, error, reply

import skillchat
from skillchat import (
    Event,
    MessageAdded,
    Session,
    SkillchatError,
    TextDelta,
    TextEnded,
    ToolFinished,
    TurnFailed,
    TurnResult,
    Waiting,
    load_settings,
)

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
CALCULATOR = (
    reply("Let me load the skill.", calls=[call("get_skill", {"skill_name": "calculator"})]),
    reply("17% of 230 is 39.1.", chunks=3),
)


def examples() -> list[str]:
    """The Python blocks of docs/api.md, in order."""
    return re.findall(r"^```python\n(.*?)^```$", API_DOC.read_text(), re.S | re.M)


def run_example(code: str, server: ScriptedServer, tmp_path: Path) -> str:
    """Run `code` as a user's script, its model the scripted server; its stdout."""
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {
        **os.environ,
        "SKILLCHAT_MODEL": "openai/test-model",
        "SKILLCHAT_API_BASE": server.base_url,
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_stream_example_runs(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(*CALCULATOR)
    out = run_example(examples()[0], server, tmp_path)
    assert out == (
        'Let me load the skill.[get_skill {"skill_name": "calculator"}]\n17% of 230 is 39.1.\n'
    )
    system = server.requests[0].body["messages"][0]["content"]
    assert "calculator" in system  # the user's skills, as in the terminal


def test_the_listener_example_runs(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(*CALCULATOR)
    out = run_example(examples()[1], server, tmp_path)
    assert out.startswith("17% of 230 is 39.1. Usage(prompt_tokens=")


class Listened:
    """A session with a listener that keeps every event it is given."""

    def __init__(self, server: ScriptedServer) -> None:
        self.heard: list[Event] = []
        settings = load_settings(model="openai/test-model", api_base=server.base_url, max_retries=0)
        self.session = Session(settings, listeners=[self.heard.append])


@pytest.fixture
def listened(server: ScriptedServer) -> Listened:
    return Listened(server)


def test_stream_yields_what_the_listeners_get(server: ScriptedServer, listened: Listened) -> None:
    server.script(*CALCULATOR)
    stream = listened.session.stream("What is 17% of 230?")
    pulled: list[Event] = []
    with pytest.raises(StopIteration) as ended:
        while True:
            pulled.append(next(stream))
    assert pulled == listened.heard and len(pulled) > 10
    kinds = [type(event).__name__ for event in pulled]
    assert kinds[:2] == ["MessageAdded", "Waiting"]  # the user's message, the request
    assert {"TextDelta", "ToolStarted", "ToolFinished", "UsageReported"} <= set(kinds)
    assert TextEnded("answer") in pulled and isinstance(pulled[-1], MessageAdded)
    [record] = [e.record for e in pulled if isinstance(e, ToolFinished)]
    assert record.name == "get_skill" and "Calculator" in record.result.content
    result = ended.value.value
    assert isinstance(result, TurnResult) and result.answer == "17% of 230 is 39.1."
    assert result.requests == 2 and result.tool_calls == [record]
    # The next message goes on in the same chat, pulled or sent.
    server.script(reply("Yes."))
    assert listened.session.send("Sure?").answer == "Yes."
    assert sum(isinstance(e, Waiting) for e in listened.heard) == 3


def test_an_error_is_raised_after_the_last_event(
    server: ScriptedServer, listened: Listened
) -> None:
    server.script(error(401))
    pulled: list[Event] = []
    with pytest.raises(SkillchatError, match="authentication failed") as raised:
        for event in listened.session.stream("hi"):
            pulled.append(event)
    assert pulled == listened.heard
    assert pulled[-1] == TurnFailed(raised.value)  # the error, as `send` raises it


def test_stopping_early_stops_the_turn(server: ScriptedServer, listened: Listened) -> None:
    """A reply that never ends: leaving the loop stops it, as Ctrl-C does, and the
    iterator returns only once the turn has ended."""
    server.script({"endless": "text", "chunk_delay": 0.01, "piece": "la "})
    for event in listened.session.stream("sing"):
        if isinstance(event, TextDelta):
            break
    events = listened.heard
    assert events[-1] == TextEnded("interrupted")
    [kept] = [e for e in events if isinstance(e, MessageAdded) and e.interrupted]
    assert kept.message["content"].endswith("[interrupted]")
    assert listened.session.emit.listeners == [events.append]  # the stream's own listener is gone
    server.script(reply("Fine."))
    texts = [e.text for e in listened.session.stream("stop") if isinstance(e, TextDelta)]
    assert "".join(texts) == "Fine."


def _connections_to(port: int) -> int:
    """Established TCP connections to 127.0.0.1:`port` on this machine (/proc/net/tcp)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for r in rows if r.split()[2].endswith(f":{port:04X}") and r.split()[3] == "01")


def test_a_stopped_stream_lets_go_of_its_connection_at_once(
    server: ScriptedServer, listened: Listened
) -> None:
    """Leaving the loop closes the reply's HTTP stream then and there, not when the
    garbage collector finds it: a collection that struck inside httpcore's pool lock
    on the next request closed the old stream there, and the turn hung for ever."""
    server.script({"endless": "text", "chunk_delay": 0.01, "piece": "la "})
    gc.disable()
    try:
        for event in listened.session.stream("sing"):
            if isinstance(event, TextDelta):
                break
        assert wait_for(lambda: _connections_to(server.port) == 0, timeout=60)
    finally:
        gc.enable()


CTRL_C = """
import signal, sys
from skillchat import MessageAdded, Session, TextDelta, load_settings
signal.signal(signal.SIGINT, signal.default_int_handler)  # a CI may start us ignoring it
heard = []
session = Session(load_settings(), listeners=[heard.append])
try:
    for event in session.stream("sing"):
        if isinstance(event, TextDelta):
            print("streaming", flush=True)
except KeyboardInterrupt:
    kept = [e.message["content"] for e in heard if isinstance(e, MessageAdded)]
    print(kept[-1].endswith("[interrupted]"), session.emit.listeners == [heard.append])
"""


def test_ctrl_c_while_pulling_stops_the_turn(server: ScriptedServer, tmp_path: Path) -> None:
    """A real SIGINT while the caller waits for the next event: the turn stops as
    Ctrl-C stops it in the terminal, and the iterator raises KeyboardInterrupt."""
    server.script({"endless": "text", "chunk_delay": 0.01, "piece": "la "})
    (tmp_path / "sing.py").write_text(CTRL_C)
    env = {**os.environ, "SKILLCHAT_MODEL": "openai/test-model"}
    env["SKILLCHAT_API_BASE"] = server.base_url
    with subprocess.Popen(
        [sys.executable, str(tmp_path / "sing.py")],
        stdout=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL,
    ) as child:  # fmt: skip
        assert child.stdout is not None
        assert child.stdout.readline() == "streaming\n"
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    assert out.splitlines()[-1] == "True True" and child.returncode == 0


def test_import_skillchat_imports_nothing_until_a_name_is_read() -> None:
    probe = (
        "import sys, skillchat\n"
        "print(sorted(m for m in sys.modules if m.startswith('skillchat.')))\n"
        "skillchat.TextDelta\n"
        "print('skillchat.session' in sys.modules, 'skillchat.engine.emit' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout == "[]\nFalse True\n"


def test_every_public_name_is_what_type_checkers_are_told() -> None:
    """The names `__all__` lists, the imports type checkers read in skillchat/__init__.py,
    and what reading each gives at run time agree."""
    import ast
    from importlib import import_module

    tree = ast.parse(Path(skillchat.__file__).read_text())
    typed = {
        alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skillchat")
        for alias in node.names
    }
    assert set(skillchat.__all__) == {*typed, "__version__"}
    for name, module in typed.items():
        assert getattr(skillchat, name) is getattr(import_module(str(module)), name), name
    with pytest.raises(AttributeError, match="no attribute 'Chat'"):
        skillchat.Chat  # type: ignore[attr-defined]  # noqa: B018  # inside, not public
