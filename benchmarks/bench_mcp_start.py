"""Whether one configured MCP server delays `ask`'s first request by more than that
server's own start.

Run: `python benchmarks/bench_mcp_start.py [--runs N]`. Not part of pytest: timings
depend on the machine. Three things are timed, interleaved so that drift in machine
load hits all alike:

- `skillchat ask` with no MCP server: process start to its first request reaching the
  scripted model server (bench_first_request.py's clock);
- the same with one stdio server configured (tests/mcp_servers.py `basic`, a FastMCP
  server of the official SDK) in its first session: no list of its tools is kept
  yet (each run removes the one the last kept, mcp/listing.py), so skillchat starts
  it and waits for it (or its failure) before the first message, so its tools can
  be offered (later sessions offer the kept list and start no server:
  bench_mcp_unused.py);
- that server's own start with the bare SDK client: spawn, `initialize` and
  `tools/list`, in a fresh process, the way any MCP host must start it.

Target: the delay (second minus first) at most the server's own start.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_first_request import SKILLCHAT, served_home, time_one  # noqa: E402

SERVER = [sys.executable, str(REPO / "tests" / "mcp_servers.py"), "basic"]
# The bare start, timed inside its own process (spawn to tools listed), printed.
BARE = """import asyncio, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
async def main():
    start = time.monotonic()
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            print(time.monotonic() - start)
asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    import subprocess

    with served_home() as (server, home, env):
        config = home / "mcp.toml"
        command, *rest = SERVER
        config.write_text(f"[mcp.srv]\ncommand = {command!r}\nargs = {rest!r}\n".replace("'", '"'))
        ask = [str(SKILLCHAT), "ask", "--api-base", server.base_url, "--model", "openai/test-model"]
        plain = [*ask, "--no-mcp", "hi"]
        with_server = [*ask, "--config", str(config), "--allow-mcp", "hi"]
        bare = [sys.executable, "-c", BARE, *SERVER]
        for argv in (plain, with_server):  # warm the page cache and the .pyc files
            time_one(server, argv, env, home)
        times: dict[str, list[float]] = {"no server": [], "one server": [], "server alone": []}
        kept = home / ".cache" / "skillchat" / "mcp-tools.json"
        for _ in range(args.runs):
            times["no server"].append(time_one(server, plain, env, home)[0])
            kept.unlink(missing_ok=True)
            times["one server"].append(time_one(server, with_server, env, home)[0])
            done = subprocess.run(bare, env=env, capture_output=True, text=True, timeout=120)
            times["server alone"].append(float(done.stdout.strip()))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"medians of {args.runs} interleaved runs (python {sys.version.split()[0]})")
    for name, median in medians.items():
        print(f"  {name:14} {median * 1000:7.0f} ms")
    delay = medians["one server"] - medians["no server"]
    own = medians["server alone"]
    verdict = "met" if delay <= own else "MISSED"
    print(f"target: the delay ({delay * 1000:.0f} ms) <= the server's own start "
          f"({own * 1000:.0f} ms): {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
