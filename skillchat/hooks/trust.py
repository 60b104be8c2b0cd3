"""Which project and skill hooks the user trusted: `<user data dir>/hooks-trust.json`.

Keyed by each hook's digest (hooks/spec.py: its source, definition and the bytes of
the files it names), so trust is bound to content: a hook whose line or script
changed has another digest and is untrusted again, with nothing to revoke. The file
is private (0600), replaced atomically; one that is unreadable or not ours means
"nothing trusted", said in `problem`, and the next trust rewrites it.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.errors import HookError
from skillchat.hooks.spec import Hook
from skillchat.safe_io.write import replace_atomically
from skillchat.sections import user_data_dir

STORE_NAME = "hooks-trust.json"
MAX_STORE_BYTES = 4_000_000


@dataclass
class HookTrust:
    """The trusted digests; `trust` then `save` to add one."""

    path: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)
    problem: str | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> HookTrust:
        path = path or user_data_dir() / STORE_NAME
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return cls(path)
        except OSError as exc:
            return cls(path, problem=f"{path}: unusable, nothing trusted: {exc.strerror}")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STORE_BYTES:
                return cls(path, problem=f"{path}: not a hooks trust store, nothing trusted")
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return cls(path, problem=f"{path}: not private to you, nothing trusted")
            with os.fdopen(fd, "rb", closefd=False) as fh:
                raw = fh.read(MAX_STORE_BYTES + 1)
        finally:
            os.close(fd)
        try:
            hooks = json.loads(raw)["hooks"]
            valid = isinstance(hooks, dict) and all(isinstance(v, dict) for v in hooks.values())
        except (ValueError, KeyError, TypeError):
            valid = False
        if not valid:
            return cls(path, problem=f"{path}: corrupt, nothing trusted")
        return cls(path, dict(hooks))

    def trusted(self, hook: Hook) -> bool:
        """The user's own hooks always; the others when their digest was trusted."""
        return not hook.needs_trust or hook.digest in self.entries

    def trust(self, hook: Hook) -> None:
        self.entries[hook.digest] = {
            "where": hook.where,
            "event": hook.event,
            "command": hook.command,
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

    def save(self) -> None:
        doc = {"version": 1, "hooks": dict(sorted(self.entries.items()))}
        data = json.dumps(doc, indent=1, ensure_ascii=False).encode()
        replace_atomically(self.path, data, HookError, "cannot save hook trust")
        self.problem = None
