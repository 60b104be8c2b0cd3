"""What skillchat adds to one MCP tool call, over the server's own round trip.

Run: `python benchmarks/bench_mcp.py [--calls N]`. Not part of pytest: timings
depend on the machine.

One stdio server (tests/mcp_servers.py basic) is started twice: once under skillchat's
hub, called through the chat's tool (`mcp__srv__add`: policy, consent, the hub's
thread hop, the result's conversion and cap), and once with the bare SDK client in
its own event loop (`call_tool` awaited directly: the server's own time plus the
SDK). Overhead per call = median(skillchat) - median(bare). Target: under 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skillchat.config import Settings  # noqa: E402
from skillchat.mcp.hub import McpHub  # noqa: E402
from skillchat.mcp.policy import flag_consent  # noqa: E402
from skillchat.mcp.tools import McpTools  # noqa: E402
from skillchat.mcp_config import McpServerConfig  # noqa: E402
from skillchat.skills.registry import Registry  # noqa: E402
from skillchat.tools.base import ToolContext  # noqa: E402

TARGET_MS = 10.0
SERVER = McpServerConfig(
    "srv", command=sys.executable, args=(str(REPO / "tests" / "mcp_servers.py"), "basic")
)


def through_skillchat(calls: int) -> list[float]:
    settings = Settings(mcp_servers={"srv": SERVER}, mcp_allow=True)
    hub = McpHub([SERVER])
    hub.start()
    source = McpTools(hub, flag_consent(settings))
    context = ToolContext(settings, Registry(skills={}))
    source.wait(context)
    tool = next(t for t in source.tools(context) if t.name == "mcp__srv__add")
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = tool.run('{"a": 1, "b": 2}', context)
        times.append(time.perf_counter() - start)
        assert not result.is_error, result.content
    hub.close()
    return times


def bare_sdk(calls: int) -> list[float]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    quiet = open(os.devnull, "w")  # noqa: SIM115 - the server's log, for the run

    async def run() -> list[float]:
        params = StdioServerParameters(command=SERVER.command or "", args=list(SERVER.args))
        times = []
        async with Client(stdio_client(params, errlog=quiet), cache=None) as client:
            await client.list_tools()
            for _ in range(calls):
                start = time.perf_counter()
                await client.call_tool("add", {"a": 1, "b": 2})
                times.append(time.perf_counter() - start)
        return times

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    ours = statistics.median(through_skillchat(calls)) * 1000
    bare = statistics.median(bare_sdk(calls)) * 1000
    print(f"bare SDK call: {bare:.2f} ms · through skillchat: {ours:.2f} ms")
    print(f"overhead per call: {ours - bare:.2f} ms (target < {TARGET_MS:g} ms)")


if __name__ == "__main__":
    main()
