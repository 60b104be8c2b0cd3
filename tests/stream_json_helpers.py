"""Reading `skillchat ask --output-format stream-json` as a script does: a real
process, its stdout read line by line as the lines arrive, each line checked against
the schema in docs/stream-json.schema.json."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

import jsonschema
from helpers import REPO

SCHEMA = json.loads((REPO / "docs" / "stream-json.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# The characters JSON leaves raw that a terminal obeys: none may be on a line.
LIVE = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F),
                         *range(0x2066, 0x206A)]}  # fmt: skip


class Stream:
    """`skillchat ARGS` started, its stdout lines handed over as they come."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "skillchat", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next(self, timeout: float = 180) -> dict[str, Any] | None:
        """The next event (checked: one JSON object, valid, nothing live on a
        terminal), or None at the end of stdout."""
        line = self.lines.get(timeout=timeout)
        if line is None:
            return None
        self.raw.append(line)
        assert line.endswith(b"\n")
        text = line.decode("utf-8")  # strict: a line is UTF-8
        assert not LIVE & set(text[:-1]), text
        event: dict[str, Any] = json.loads(text)
        errors = [e.message[:300] for e in VALIDATOR.iter_errors(event)]
        assert not errors, (event, errors)
        self.events.append(event)
        return event

    def until(self, wanted: Any) -> dict[str, Any]:
        """Events up to the first for which `wanted(event)` holds: that one."""
        while (event := self.next()) is not None:
            if wanted(event):
                return event
        raise AssertionError(f"stdout ended first: {self.events[-3:]} {self.stderr()}")

    def finish(self, timeout: float = 180) -> int:
        """The rest of the events, and the exit code."""
        while self.next() is not None:
            pass
        return self.process.wait(timeout)

    def stderr(self) -> str:
        """What it wrote on stderr, once it ended."""
        self.process.wait(60)
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")


def checked(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What every stream holds: `init` first, `seq` 0, 1, 2..., one chat id, the
    `result` last; the result."""
    assert events[0]["type"] == "init" and events[-1]["type"] == "result"
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert len({e["chat_id"] for e in events}) == 1
    assert [e["type"] for e in events].count("result") == 1
    return events[-1]


def rebuilt(events: list[dict[str, Any]]) -> str:
    """The answer as a script rebuilds it: the chat's own deltas (not a fork's)
    since the last `text_end`, when a `text_end` says they were the answer."""
    answer, text = "", ""
    for event in events:
        if "fork" in event:
            continue
        if event["type"] == "text_delta":
            text += event["text"]
        elif event["type"] == "text_end":
            answer = text if event["how"] == "answer" else answer
            text = ""
    return answer
