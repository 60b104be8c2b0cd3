"""Claude Code's `paths` frontmatter: globs that say which files a skill is for.

A skill with `paths` is listed to the model only while the workspace has a file
they match (or one was read or attached in the chat: engine/steps/paths.py); the
user's `/name` works regardless. The globs are gitignore patterns, relative to the
workspace's root, as Claude Code matches them: `*.py` anywhere, `src/app/**`
everything below `src/app`. They are written as a YAML list or a comma-separated
string; `{a,b}` braces are expanded (`src/*.{ts,tsx}`), as Claude Code does. A
`paths` of only `**` means every file: the skill is always listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PATHS_KEY = "paths"
MAX_PATTERNS = 256  # a frontmatter is bounded; brace expansion must be too
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _split(text: str) -> list[str]:
    """Comma-separated patterns, a comma inside `{...}` kept."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "{") - (char == "}")
        if char == "," and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _expand(pattern: str) -> list[str]:
    """`a.{x,y}` as `a.x` and `a.y`, every brace group in turn, at most MAX_PATTERNS."""
    found: list[str] = [pattern]
    done: list[str] = []
    while found and len(done) + len(found) <= MAX_PATTERNS:
        item = found.pop()
        match = _BRACES.search(item)
        if match is None:
            done.append(item)
            continue
        head, tail = item[: match.start()], item[match.end() :]
        found += [head + choice + tail for choice in match.group(1).split(",")]
    return done + found


def skill_paths(frontmatter: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The skill's globs, or None when it has none (or only `**`): always listed."""
    value = frontmatter.get(PATHS_KEY)
    items = _split(value) if isinstance(value, str) else value
    if not isinstance(items, list):
        return None
    patterns: list[str] = []
    for item in items:
        if isinstance(item, str) and (item := item.strip()):
            patterns += _expand(item.removesuffix("/**") or "**")
    patterns = [p for p in dict.fromkeys(patterns) if p][:MAX_PATTERNS]
    if not patterns or all(p == "**" for p in patterns):
        return None
    return tuple(patterns)
