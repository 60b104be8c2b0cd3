"""What skillchat adds to each tool round trip, over a 20-round scripted session.

Run: `python benchmarks/bench_tool_rounds.py [--rounds N] [--sessions S] [--saved] [--litellm]`.
Not part of pytest: timings depend on the machine.

A session is one `Chat.send` in process (no rendering, nothing saved) against the scripted server
(tests/openai_server.py): the model calls a tool in each of N replies (list_skills,
get_skill, read_file_in_skill over the bundled skills, repeats answered
ALREADY_IN_CONTEXT), then answers. Its wall time includes the server's. To take the
server and the wire out, the exact request bodies skillchat sent are then replayed
with bare http.client requests that read each SSE stream to its end, against the same
moves. Overhead per round = (skillchat wall - bare replay wall) / requests: the SDK's
parsing, delta assembly, running the tool, building the next request. Target: at
most 5 ms per round on the openai backend. Median over the sessions is printed.

`--saved` times `ask`'s own path too: a `Session` whose chat is saved to a
database (a temporary one) and shown by the pipe view (its cards rendered to
/dev/null), as `skillchat ask ... > file` runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from openai_server import ScriptedServer, call, reply  # noqa: E402

from skillchat.config import Settings  # noqa: E402
from skillchat.engine.backends.base import Timeouts  # noqa: E402
from skillchat.engine.backends.select import make_backend  # noqa: E402
from skillchat.engine.loop import Chat  # noqa: E402
from skillchat.engine.resolve import asked, resolve  # noqa: E402
from skillchat.engine.turn import TurnResult  # noqa: E402
from skillchat.skills.registry import Registry, discover  # noqa: E402

TARGET_MS = 5.0
SSV = "skills-system-validation"
CALLS = [
    call("list_skills"),
    call("get_skill", {"skill_name": SSV}),
    call("read_file_in_skill", {"skill_name": SSV, "file_path": "references/REFERENCE.md"}),
    call("read_file_in_skill", {"skill_name": SSV, "file_path": "assets/fixture.json"}),
    call("get_skill", {"skill_name": "calculator"}),
    call("read_file_in_skill", {"skill_name": "commit-message", "file_path": "SKILL.md"}),
]


def moves(rounds: int) -> list[dict[str, Any]]:
    steps = [reply("Next step.", calls=[CALLS[i % len(CALLS)]]) for i in range(rounds)]
    return [*steps, reply("All done: " + "the answer in a few words. " * 8)]


def bare_replay(port: int, bodies: list[Any]) -> float:
    """Seconds to POST every body and read each stream to its end with http.client.

    A fresh connection per request: on a reused one, the server's many small SSE
    writes meet the client's delayed ACK and every request stalls ~40 ms, which
    would flatter skillchat. A local connect costs ~0.1 ms, so this floor is, if
    anything, slightly high, and the overhead slightly overstated."""
    encoded = [json.dumps(body).encode() for body in bodies]
    start = time.perf_counter()
    for data in encoded:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/chat/completions", data, {"Content-Type": "application/json"})
        conn.getresponse().read()
        conn.close()
    return time.perf_counter() - start


def saved_send(settings: Settings, registry: Registry, text: str) -> tuple[TurnResult, float]:
    """`text` sent as `ask` sends it (see the module's docstring); (result, seconds)."""
    from rich.console import Console

    from skillchat.session import Session
    from skillchat.session_settings import open_store
    from skillchat.ui.console import Consoles
    from skillchat.ui.theme import theme
    from skillchat.ui.views import PipeView

    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as null:
        settings = replace(settings, storage_path=os.path.join(tmp, "chats.db"))
        consoles = Consoles(Console(file=null, theme=theme()), Console(file=null, theme=theme()))
        with open_store(settings) as store:
            session = Session(
                settings, registry=registry, store=store, listeners=[PipeView(consoles)]
            )
            with contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
                start = time.perf_counter()
                result = session.send(text)
                seconds = time.perf_counter() - start
            session.close()
    return result, seconds


def session(rounds: int, backend: str, saved: bool = False) -> tuple[float, float, int]:
    """(skillchat wall, bare replay wall, requests) for one session."""
    registry = discover([REPO / "skillchat" / "bundled_skills"])
    with ScriptedServer(moves(rounds)) as server:
        settings = Settings(
            model="openai/test-model",
            api_base=server.base_url,
            backend=backend,
            max_tool_rounds=rounds,
            max_retries=0,
        )
        text = "Validate the skills system."
        if saved:
            result, ours = saved_send(settings, registry, text)
        else:
            target = resolve(settings, asked(settings), probe=False)
            chat = Chat(settings, registry, make_backend(target, Timeouts.of(settings)))
            start = time.perf_counter()
            result = chat.send(text)
            ours = time.perf_counter() - start
        assert result.answer.startswith("All done") and result.requests == rounds + 1
        bodies = [r.body for r in server.completions]
        server.script(*moves(rounds))
        replay = bare_replay(server.port, bodies)
    return ours, replay, len(bodies)


def report(backend: str, rounds: int, sessions: int, saved: bool = False) -> float:
    session(rounds, backend, saved)  # warm-up: imports, connection pools, page cache
    runs = [session(rounds, backend, saved) for _ in range(sessions)]
    per_round = statistics.median((ours - bare) / n * 1000 for ours, bare, n in runs)
    ours = statistics.median(r[0] for r in runs) * 1000
    bare = statistics.median(r[1] for r in runs) * 1000
    label = f"{backend}{' saved' if saved else ''}"
    print(
        f"  {label:14} session {ours:7.1f} ms, bare replay {bare:6.1f} ms, "
        f"{runs[0][2]} requests -> overhead {per_round:5.2f} ms per round"
    )
    return per_round


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=7)
    parser.add_argument("--litellm", action="store_true", help="also time the litellm backend")
    parser.add_argument("--saved", action="store_true", help="also time ask's path: saved, shown")
    args = parser.parse_args()
    print(f"{args.rounds} tool rounds per session, median of {args.sessions} sessions")
    overhead = report("openai", args.rounds, args.sessions)
    if args.saved:
        report("openai", args.rounds, args.sessions, saved=True)
    if args.litellm:
        report("litellm", args.rounds, args.sessions)
    verdict = "met" if overhead <= TARGET_MS else "MISSED"
    print(f"target: <= {TARGET_MS:g} ms per round (openai backend) -> {verdict}")


if __name__ == "__main__":
    main()
