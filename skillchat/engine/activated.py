"""Which activated skills' instructions a request carries, so the system message names
only those it does not (prompt.activated_note).

Instructions are in a request when a `get_skill` result holding the skill's
documentation is among its messages, or the skill's body is in the system message
itself (a `/name` with tools off, a fork's own skill). A resumed chat stores stubs,
compaction and the context budget can leave turns out or elide results: then the
model is told which skills it had, and fetches them again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from skillchat.prompt import INJECTED_SKILL, activated_note

# A loaded skill's result starts so (tools/skill_tools.py: `skill_name` first, then
# `documentation`): only those results are parsed, not every file the model read.
_LOADED = '{"skill_name": '


def loaded_skills(messages: Sequence[dict[str, Any]]) -> set[str]:
    """Names of the skills whose documentation is in `messages`."""
    names: set[str] = set()
    for message in messages:
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str):
            names.update(_injected(content))
        if message.get("role") != "tool" or not isinstance(content, str):
            continue
        if not content.startswith(_LOADED) or '"documentation": ' not in content:
            continue
        try:
            result = json.loads(content)
        except ValueError:
            continue
        if isinstance(result, dict) and "documentation" in result:
            names.add(str(result.get("skill_name")))
    return names


def _injected(system: str) -> list[str]:
    return [part.split('"', 1)[0] for part in system.split(INJECTED_SKILL)[1:]]


def with_activated_note(
    messages: list[dict[str, Any]], activated: Sequence[str]
) -> list[dict[str, Any]]:
    """`messages` with the activated skills they lack named at the end of the system
    message (the same list when none is missing, or there is no system message)."""
    if not activated or not messages or messages[0].get("role") != "system":
        return messages
    loaded = loaded_skills(messages)
    missing = [name for name in activated if name not in loaded]
    if not missing:
        return messages
    head = messages[0]
    note = activated_note(missing)
    return [{**head, "content": f"{head['content']}\n\n{note}"}, *messages[1:]]
