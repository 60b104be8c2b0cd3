"""Whether the skills left out, and why, were already told to the user.

"N skills left out" is said once per state of the skills folders, with each skill's
reason; every `ask`, `/new`, `/resume` or `/reload` after that stays quiet until the
left-out set or a reason changes. So are the warnings of `skills list` about skills
loaded although the spec refuses them (a real collection has twenty, the same at
every listing): in full once, then counted. The fingerprints live in the user cache
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


def _first(key: str, now: str) -> bool:
    """True when the state `now` of `key` was not told before (and remember it now)."""
    if _seen(user_cache.read(NAME)).get(key) == now:
        return False
    user_cache.update(NAME, lambda doc: {**_seen(doc), key: now})  # unwritten: told again
    return True


def first_time(registry: Registry) -> bool:
    """True when this left-out state was not told before (and remember it now)."""
    return _first(_key(registry), fingerprint(registry))


def warnings_first_time(registry: Registry, warnings: list[str]) -> bool:
    """True when these warnings about the registry's skills were not told before for
    its folders (and remember them now)."""
    now = hashlib.sha256("\n".join(sorted(warnings)).encode()).hexdigest()
    return _first("warnings\n" + _key(registry), now)
