"""Parsed frontmatter kept between runs, so that a start whose skills did not change
never imports PyYAML (about a third of discovery's CPU for a few skills, 10-15 ms).

The key is the frontmatter's YAML text itself, not the SKILL.md's stat: a parse is a
function of that text alone, so an entry can never be stale (a file edited to the
same size within one timestamp tick is still another text), and the text is read
anyway, in the one bounded `os.read` that also checks the delimiters and UTF-8.
Only parses whose values JSON carries exactly are kept (strings, whole numbers,
floats, booleans, null, lists, mappings with string keys): dates, `!!binary`, sets
or non-string keys are parsed by YAML each time. Errors are never kept.

The file is the user cache's `frontmatter.json` (safe_io/user_cache.py: private,
replaced whole, under a lock), written only when a run parsed something new, and
holding at most `MAX_ENTRIES` texts (this run's first, then those the file holds
when it is written, another run's included). It is a cache only: a file that is
unreadable, corrupt or of another version counts as empty, and is written afresh;
nothing is said about it. Each entry is stored as its own JSON string, so
loading the file decodes only the entries looked up, each into fresh objects.
"""

from __future__ import annotations

import json
from typing import Any

from skillchat.safe_io import user_cache
from skillchat.skills.frontmatter_yaml import Frontmatter

NAME = "frontmatter.json"
VERSION = 1
MAX_ENTRIES = 2000

_stored: dict[str, str] | None = None  # text -> JSON of [data, key_lines], as read
_used: dict[str, str] = {}  # the entries of this run, new ones included
_new = False  # something was parsed that the file does not hold


def _entries(doc: Any) -> dict[str, str]:
    """The entries of the file's `doc`; none when it is of another version or shape."""
    if isinstance(doc, dict) and doc.get("version") == VERSION:
        entries = doc.get("entries")
        return entries if isinstance(entries, dict) else {}
    return {}


def _load() -> dict[str, str]:
    global _stored
    if _stored is None:
        _stored = _entries(user_cache.read(NAME))
    return _stored


def _exact(value: Any) -> bool:
    """JSON gives back a value equal to `value`, of the same types."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if kind is list:
        return all(_exact(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _exact(item) for key, item in value.items())
    return False


def _decoded(entry: object) -> Frontmatter | None:
    """The Frontmatter an entry holds; None for one that is not well formed."""
    try:
        data, key_lines = json.loads(entry) if isinstance(entry, str) else (None, None)
    except (ValueError, TypeError):
        return None
    if isinstance(data, dict) and isinstance(key_lines, dict):
        return Frontmatter(data, key_lines)
    return None


def parsed(text: str) -> Frontmatter:
    """`parse_frontmatter(text)`, from the cache when this text was parsed before.
    Raises FrontmatterError as the parse does."""
    global _new
    entry = _used.get(text) or _load().get(text)
    if entry is not None and (found := _decoded(entry)) is not None:
        _used[text] = entry
        return found
    from skillchat.skills.frontmatter_yaml import parse_frontmatter

    fm = parse_frontmatter(text)
    # Past MAX_ENTRIES a run's texts are not kept: the file would be rewritten at
    # every start with the same first MAX_ENTRIES.
    if len(_used) < MAX_ENTRIES and _exact(fm.data) and _exact(fm.key_lines):
        _used[text] = json.dumps([fm.data, fm.key_lines])
        _new = True
    return fm


def save() -> None:
    """Write the cache when this run parsed something new: its entries first, then
    the ones the file holds now, up to MAX_ENTRIES. A failure costs a parse next time."""
    global _new, _stored
    if not _new:
        return

    def merged(doc: Any) -> dict[str, Any]:
        entries = dict(list(_used.items())[:MAX_ENTRIES])
        for text, entry in _entries(doc).items():
            if len(entries) >= MAX_ENTRIES:
                break
            entries.setdefault(text, entry)
        return {"version": VERSION, "entries": entries}

    written = user_cache.update(NAME, merged)
    if written is not None:
        _stored, _new = written["entries"], False
