"""Explicit skill invocation (DESIGN §6): `/name rest` at the start of a user message.

`/name` with `name` a known skill activates it before the model is called and the
prefix is stripped; an unknown `/name` is plain text, left untouched (a path such as
`/etc/hosts` or a slash command meant for someone else must not be eaten).
`/skill NAME rest` always means the skill NAME, so a skill whose name a REPL command
shadows stays reachable; there an unknown NAME is an error, since the user asked for
a skill explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from skillchat.errors import UsageError

_PREFIX = re.compile(r"/(\S+)(?:\s+|$)", re.UNICODE)
SKILL_COMMAND = "skill"


@dataclass(frozen=True)
class Invocation:
    """The skill a message invokes, and what the user asked of it."""

    skill: str
    rest: str  # the text after the prefix: replaces $ARGUMENTS in the body
    message: str  # the user message to send: `rest`, or the original when rest is empty


def parse_invocation(text: str, skills: Container[str]) -> Invocation | None:
    """The invocation at the start of `text`, or None when it is not one."""
    match = _PREFIX.match(text)
    if match is None:
        return None
    name, rest = match.group(1), text[match.end() :]
    if name == SKILL_COMMAND:
        inner = _PREFIX.match("/" + rest)
        if inner is not None and inner.group(1) in skills:
            name, rest = inner.group(1), rest[inner.end() - 1 :]
        elif SKILL_COMMAND not in skills:
            wanted = inner.group(1) if inner else ""
            if not wanted:
                raise UsageError("/skill needs a skill name: /skill NAME [request]")
            raise UsageError(f"unknown skill '{wanted}' (see: skillchat skills list)")
    elif name not in skills:
        return None
    rest = rest.strip()
    # An empty message is refused by some providers; "/pdf" alone still says something.
    return Invocation(name, rest, rest or text.strip())
