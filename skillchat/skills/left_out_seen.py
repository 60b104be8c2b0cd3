"""Whether the skills left out, and why, were already told to the user.

"N skills left out" is said once per state of the skills folders, with each skill's
reason; every `ask`, `/new`, `/resume` or `/reload` after that stays quiet until the
left-out set or a reason changes. The fingerprints live in the user cache folder
(`left-out.json`): a cache only, unreadable or unwritable means "not seen yet".
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from skillchat.skills.registry import Registry


def _seen_path() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("skillchat", appauthor=False)) / "left-out.json"


def _key(registry: Registry) -> str:
    """The skills folders this registry was read from, as one string."""
    return "\n".join(sorted(str(d) for d in registry.directories))


def fingerprint(registry: Registry) -> str:
    """A digest of every left-out skill's path and reason."""
    lines = sorted(f"{e.path}\0{e.reason}\0{e.summary()}" for e in registry.left_out())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _read() -> dict[str, str]:
    try:
        doc = json.loads(_seen_path().read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {str(k): str(v) for k, v in doc.items()}


def first_time(registry: Registry) -> bool:
    """True when this left-out state was not told before (and remember it now)."""
    seen = _read()
    key, now = _key(registry), fingerprint(registry)
    if seen.get(key) == now:
        return False
    seen[key] = now
    path = _seen_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(seen, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a cache: told again next time
    return True
