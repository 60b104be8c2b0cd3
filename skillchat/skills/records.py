"""The JSON files skillchat keeps about skills, the trust store and skills.lock, share
one envelope: `{"version": N, "skills": {name: record}}`. Reading it is here once;
what a record must hold is each file's own check."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def skill_records(
    raw: bytes, version: int, valid: Callable[[dict[str, Any]], bool]
) -> dict[str, dict[str, Any]] | None:
    """The records of a file skillchat wrote at `version`, or None when it is not one
    (not JSON, another version, a record that is not a dict or fails `valid`)."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):  # a project's lock may nest past the parser
        return None
    if not isinstance(doc, dict) or doc.get("version") != version:
        return None
    skills = doc.get("skills")
    if not isinstance(skills, dict):
        return None
    if not all(isinstance(r, dict) and valid(r) for r in skills.values()):
        return None
    return skills
