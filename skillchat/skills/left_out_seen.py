"""Whether the skills left out, and why, were already told to the user.

"N skills left out" is said once per state of the skills folders, with each skill's
reason; every `ask`, `/new`, `/resume` or `/reload` after that stays quiet until the
left-out set or a reason changes. The fingerprints live in the user cache
(`left-out.json`, safe_io/user_cache.py): a cache only, unreadable or unwritable
means "not seen yet".
"""

from __future__ import annotations

import hashlib
from typing import Any

from skillchat.safe_io import user_cache
from skillchat.skills.registry import Registry

NAME = "left-out.json"


def _key(registry: Registry) -> str:
    """The skills folders this registry was read from, as one string."""
    return "\n".join(sorted(str(d) for d in registry.directories))


def fingerprint(registry: Registry) -> str:
    """A digest of every left-out skill's path and reason."""
    lines = sorted(f"{e.path}\0{e.reason}\0{e.summary()}" for e in registry.left_out())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _seen(doc: Any) -> dict[str, str]:
    """The fingerprints by folders of the file's `doc`: none when it is not a mapping."""
    return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}


def first_time(registry: Registry) -> bool:
    """True when this left-out state was not told before (and remember it now)."""
    key, now = _key(registry), fingerprint(registry)
    if _seen(user_cache.read(NAME)).get(key) == now:
        return False
    user_cache.update(NAME, lambda doc: {**_seen(doc), key: now})  # unwritten: told again
    return True
