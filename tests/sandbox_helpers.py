"""The real sandbox for tests: skipped with a visible reason where bubblewrap cannot
run, except under CI=true, where a missing sandbox fails the test instead."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from skillchat.sandbox.detect import SandboxStatus, probe


def require_sandbox() -> SandboxStatus:
    status = probe()
    if not status.available:
        message = f"no sandbox here: {status.reason} ({status.hint})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return status


def unique_number() -> int:
    """A number for a test's `sleep N`, so that `processes_with` finds only this test's
    processes: the suite runs in several workers, and CI runs it twice at once (as root
    and as a user), so other tests, or the same test of the other run, may be sleeping
    at the same moment."""
    return random.randrange(10**8, 10**9)


def processes_with(marker: str) -> list[str]:
    """Command lines of running processes that contain `marker` (the process table)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline and "pytest" not in cmdline:
            found.append(cmdline)
    return found
