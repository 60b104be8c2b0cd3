"""Explicit skill invocation: `/name rest` at the start of a user message.

`/name` with `name` a known skill activates it before the model is called and the
prefix is stripped; an unknown `/name` is plain text, left untouched (a path such as
`/etc/hosts` or a slash command meant for someone else must not be eaten).
`/skill NAME rest` always means the skill NAME, so a skill whose name a REPL command
shadows stays reachable; there an unknown NAME is an error, since the user asked for
a skill explicitly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container, Iterable
from dataclasses import dataclass

from skillchat.errors import UsageError
from skillchat.skills.registry import Registry

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


def unknown_name(text: str, registry: Registry, commands: Iterable[str] = ()) -> str | None:
    """Why a `/name` at the start of `text` that is no usable skill (nor one of
    `commands`) looks like a mistake, or None when it reads as plain text.

    It is a mistake when the name is a skill that was left out (invalid, disabled,
    over `max_skills`: the user wrote it on purpose) or a near miss of a skill or a
    command (`/calculatr`, `/hlep`). Anything else (`/etc/hosts`, `/s`) is text.
    """
    match = _PREFIX.match(text)
    if match is None:
        return None
    name = match.group(1)
    commands = list(commands)
    if name in registry.skills or name in commands or name == SKILL_COMMAND:
        return None
    for left in registry.excluded:  # by its name, or its folder's when it has none
        called = left.name == name or unicodedata.normalize("NFKC", left.path.name) == name
        if called and left.reason != "shadowed":
            return f"/{name}: the skill '{name}' is left out: {left.summary()}"
    import difflib  # only for a `/name` that is no skill nor command

    usable = [n for n, s in registry.skills.items() if s.user_invocable]
    near = difflib.get_close_matches(name, [*usable, *commands], n=1, cutoff=0.75)
    if near:
        return f"/{name} is not a skill or a command: did you mean /{near[0]}?"
    return None
