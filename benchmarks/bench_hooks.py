"""What hooks cost a turn: one `pre_tool_use` and one `post_tool_use` hook (a shell
script that reads its event and exits 0) on a turn of 8 tool calls, against the same
turn with no hooks.

Run: `python benchmarks/bench_hooks.py [--runs N]`. Not part of pytest: timings depend
on the machine. Reported: the median turn with and without hooks, their ratio, and
what one hook run costs (the difference over the 16 runs). Each run starts `/bin/sh`,
so the cost is a process start's; the hooks are read afresh at each event (a changed
hook is untrusted again), which is in the figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from openai_server import ScriptedServer, call, reply  # noqa: E402

from skillchat.config import Settings  # noqa: E402
from skillchat.session import Session  # noqa: E402
from skillchat.skills.registry import discover  # noqa: E402

CALLS = 8


def turn(root: Path, hooks: dict[str, list[dict[str, str]]]) -> float:
    """Seconds for one turn of CALLS list_skills calls and an answer."""
    with ScriptedServer() as server:
        server.script(reply(calls=[call("list_skills")] * CALLS), reply("done"))
        settings = Settings(
            model="openai/test-model",
            api_base=server.base_url,
            max_retries=0,
            run_enabled=False,
            hooks=hooks,
            config_path=root / "config.toml",
        )
        session = Session(settings, registry=discover([root / "skills"]))
        start = time.perf_counter()
        session.send("go")
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args(argv).runs
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ.update({"HOME": folder, "XDG_DATA_HOME": folder, "XDG_CONFIG_HOME": folder})
        (root / "skills").mkdir()
        hook = root / "hook.sh"
        hook.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
        hook.chmod(0o755)
        both = {e: [{"command": str(hook)}] for e in ("pre_tool_use", "post_tool_use")}
        bare = statistics.median(turn(root, {}) for _ in range(runs))
        hooked = statistics.median(turn(root, both) for _ in range(runs))
    each = (hooked - bare) / (2 * CALLS) * 1000
    print(f"turn of {CALLS} calls, no hooks:   {bare * 1000:7.1f} ms (median of {runs})")
    print(f"turn of {CALLS} calls, 2 hooks:    {hooked * 1000:7.1f} ms")
    print(f"ratio: {hooked / bare:.2f}x; one hook run: {each:.1f} ms")


if __name__ == "__main__":
    main()
