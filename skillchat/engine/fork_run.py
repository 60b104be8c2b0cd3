"""One forked skill's run as it went (engine/fork.py runs it): what the views, the
recorder and `--json` report. Its own module, imported at a chat's first fork: the
fork runner is made at every start, and this dataclass need not be compiled then."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillchat.engine.events import Usage


@dataclass
class ForkRun:
    """One fork as it went: what the views, the recorder and `--json` report."""

    number: int
    skill: str
    model: str
    task: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    requests: int = 0
    tool_calls: int = 0
    outcome: str = "running"  # answered, interrupted, round-limit, failed
    started: bool = False  # its child chat is made: its events are the fork's

    def summary(self) -> dict[str, Any]:
        """The run as `--json` and the store show it (its messages apart)."""
        usage = self.usage or Usage()
        return {
            "fork": self.number,
            "skill": self.skill,
            "model": self.model,
            "outcome": self.outcome,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "tokens": usage.total_tokens,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost": usage.cost,
        }
