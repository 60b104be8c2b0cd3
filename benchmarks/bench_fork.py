"""What a `context: fork` skill saves the parent, and what starting one costs.

Run: `python benchmarks/bench_fork.py [--runs N]`. Not part of pytest: timings depend
on the machine.

1. Request size. A skill reads 200 KB of its files (four 50 KB references), then
   answers in one line; the user then asks a second question. Inline, the reads are
   in the chat's transcript; forked, only the fork's answer is. Reported: the bytes
   of the parent's request for the second question, both ways.
2. Start-up. From the get_skill call to its result, inline (read SKILL.md, list the
   files) against a fork's start: from the call to the moment the fork's first
   request leaves (resolve the model, make the child chat, its catalog and system
   prompt). Target: the fork adds under 20 ms. Medians over the runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from openai_server import ScriptedServer, call, reply  # noqa: E402

from skillchat.config import Settings  # noqa: E402
from skillchat.engine.emit import Event, ForkStep, ToolFinished, ToolStarted, Waiting  # noqa: E402
from skillchat.session import Session  # noqa: E402
from skillchat.skills.registry import discover  # noqa: E402

TARGET_MS = 20.0
FILES = [f"references/part{n}.md" for n in range(4)]
FORK = '<skill name="digest">'


def skills(root: Path, forked: bool) -> Path:
    folder = root / ("forked" if forked else "inline") / "digest"
    (folder / "references").mkdir(parents=True)
    context = "context: fork\n" if forked else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: digest\ndescription: Digests the references.\n{context}---\n"
        "Read every file under references/ and answer in one line.\n"
    )
    for path in FILES:
        (folder / path).write_text("a line of the reference, fifty bytes long or so.\n" * 1024)
    return folder.parent


class Clock:
    """Times from a get_skill call to its result (inline) or to the fork's first request."""

    def __init__(self) -> None:
        self.started = 0.0
        self.took: list[float] = []

    def __call__(self, event: Event) -> None:
        now = time.perf_counter()
        if isinstance(event, ToolStarted) and event.name == "get_skill":
            self.started = now
        elif isinstance(event, ToolFinished) and event.record.name == "get_skill":
            if not json.loads(event.record.result.content).get("forked"):
                self.took.append(now - self.started)
        elif isinstance(event, ForkStep) and isinstance(event.event, Waiting) and self.started:
            self.took.append(now - self.started)
            self.started = 0.0


def session(root: Path, forked: bool) -> tuple[int, float]:
    """(bytes of the parent's second request, seconds to the skill's start)."""
    reads = [call("read_file_in_skill", {"skill_name": "digest", "file_path": p}) for p in FILES]
    get = call("get_skill", {"skill_name": "digest", "task": "digest the references"})
    with ScriptedServer() as server:
        if forked:
            server.when("", reply(calls=reads), reply("DIGEST: 4 parts"), system=FORK)
            server.script(reply(calls=[get]), reply("4 parts"), reply("second answer"))
        else:
            server.script(reply(calls=[get]), reply(calls=reads), reply("4 parts"),
                          reply("second answer"))  # fmt: skip
        settings = Settings(
            model="openai/test-model",
            api_base=server.base_url,
            context_max_chars=2_000_000,
            max_retries=0,
            run_enabled=False,
        )
        clock = Clock()
        chat = Session(settings, registry=discover([root]), listeners=[clock]).chat
        chat.send("what do the references say?")
        chat.send("and a second question")
        last = server.completions[-1].body
        return len(json.dumps(last).encode()), clock.took[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    results: dict[bool, list[tuple[int, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {forked: skills(Path(tmp), forked) for forked in (False, True)}
        for _ in range(args.runs):  # interleaved, so load changes hit both alike
            for forked in (False, True):
                results[forked].append(session(roots[forked], forked))
    size: dict[bool, Any] = {k: v[0][0] for k, v in results.items()}
    start = {k: statistics.median(t for _, t in v) * 1000 for k, v in results.items()}
    print(f"parent's next request: inline {size[False]:,} bytes, forked {size[True]:,} bytes "
          f"({size[False] / size[True]:.0f}x smaller forked)")  # fmt: skip
    extra = start[True] - start[False]
    verdict = "met" if extra < TARGET_MS else "MISSED"
    print(f"skill start: inline {start[False]:.2f} ms, fork {start[True]:.2f} ms "
          f"(+{extra:.2f} ms, target < {TARGET_MS:.0f} ms: {verdict}), "
          f"medians of {args.runs}")  # fmt: skip


if __name__ == "__main__":
    main()
