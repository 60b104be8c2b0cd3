"""A command's question and its answer: the policy's `Verdict` and the `RunRequest`
the user is asked about (sandbox/command_tool.py makes them when a command runs).
Their own module, imported at a chat's first command: the runner is made at every
start, and these dataclasses need not be compiled then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NETWORK_ON = "ON (includes this machine's local services)"


@dataclass(frozen=True)
class Verdict:
    """The policy's answer for one command, before the user is asked."""

    kind: Literal["approved", "ask", "refused"]
    reason: str = ""
    # Ask even under --allow-run or "always"; refused where nobody is asked (`ask`,
    # eval): a command while an untrusted skill served over MCP is active.
    each_time: bool = False


@dataclass(frozen=True, eq=False)
class RunRequest:
    """What the user is asked about: the command and how wide its sandbox is."""

    command: str
    skill_name: str | None
    cwd: str
    network: bool
    writes: bool  # the workspace is writable (the scratch folder always is)
    timeout_s: float
    verdict: Verdict  # the policy's: "approved" (pre-approved) or "ask", with why

    def network_label(self) -> str:
        """How the network is shown to the user. A shared network cannot leave out
        the loopback without privileges, so "on" includes this machine's own
        services (databases, dev servers, agents listening on 127.0.0.1)."""
        return NETWORK_ON if self.network else "off"
