"""The user's cache folder and its JSON files: the one way skillchat reads and writes them.

`$XDG_CACHE_HOME/skillchat` on Linux (platformdirs elsewhere) holds what spares the
next start some work:

    sandbox.json      a sandbox that worked here (sandbox/detect.py)
    frontmatter.json  parsed frontmatter, by its text (skills/frontmatter_cache.py)
    left-out.json     the left-out skills already told (skills/left_out_seen.py)
    lock-stat.json    installed skills last seen matching their lock (skills/lock.py)
    mcp-tools.json    each MCP server's tool list as it last gave it (mcp/listing.py)
    models/           the `--local` model's downloads (engine/local/hub.py)

Each JSON file is a cache only: missing, unreadable or not JSON, it reads as None and
its next write replaces it; a write that fails is not said (the work is done again
next time). A write reads the file afresh, changes it and replaces it whole (a temp
file of a name of its own, renamed over it: safe_io/write.py), private (0600 in a
0700 folder), under a lock: a threading lock for eval's threads, and `flock` on a
sidecar file (`.NAME.lock`) for two skillchat processes at once, so a reader never
sees half a file and two writers never lose each other's entries.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillchat.safe_io.write import PRIVATE, PRIVATE_DIR, replace_file

_THREADS = threading.Lock()
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def folder() -> Path:
    """`$XDG_CACHE_HOME/skillchat` on Linux, read from the environment at each call."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("skillchat", appauthor=False))


def read(name: str) -> Any:
    """The JSON value of the cache file `name`; None when it is missing, unreadable
    or not JSON (nested past the parser included)."""
    try:
        return json.loads((folder() / name).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def update(name: str, change: Callable[[Any], Any]) -> Any:
    """Replace the cache file `name` with `change(value)`, where `value` is what
    `read(name)` gives under the lock; the value written, or None when it could not
    be. `change` runs under the lock: it must be quick and must not update again."""
    import fcntl

    path = folder() / name
    with _THREADS:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
            lock = os.open(path.with_name(f".{name}.lock"), _LOCK_FLAGS, PRIVATE)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                value = change(read(name))
                replace_file(path, json.dumps(value).encode())
            finally:
                os.close(lock)  # and the flock with it
        except OSError:
            return None
    return value
