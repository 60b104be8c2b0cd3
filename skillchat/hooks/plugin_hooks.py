"""An installed plugin's hooks: a hook source of their own (hooks/spec.py).

A Claude Code or Codex plugin brings its hooks in `hooks/hooks.json` (or another
file its manifest names, or inline in the manifest), in Claude Code's format; the
lock recorded each file's SHA-256 at install (skills/plugins.py). They are read from
the installed plugin's folder, `~/.agents/plugins/NAME`, and only while the file is
what the lock recorded: a plugin is changed by `skills update`, not by hand. Each
hook needs the user's trust, bound to its digest like a project's (so an update that
changed one makes it untrusted again), and runs in the sandbox with the plugin at
`${PLUGIN_ROOT}` read-only and its `${PLUGIN_DATA}` writable (sandbox/hooks.py): a
plugin is a package, its code never runs on the host.

A hooks file that changed, is too large, is not JSON, holds a bad entry, or whose
commands name a file outside the plugin (a path, or a symlink leading out) is one
line, and none of its hooks is read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

from skillchat.errors import InstallError, LockError
from skillchat.hooks import user_plugins
from skillchat.hooks.spec import Found, Hook, read_table
from skillchat.skills.lock import Lock, lock_path
from skillchat.skills.plugins import MAX_JSON_BYTES, inside

INLINE = " (inline)"  # how the lock names hooks held in the manifest itself


def plugin_hooks() -> Found:
    """The hooks of every plugin installed for the user (plugins install nowhere else)."""
    found = Found([], [])
    folder = user_plugins()
    target = folder.parent / "skills"
    try:
        installed = Lock.load(lock_path(target)).plugins
    except LockError as exc:
        found.problems.append(f"plugins' hooks not read: {exc}")
        return found
    for name, record in sorted(installed.items()):
        root = folder / name
        for entry in record.get("hooks") or []:
            hooks = _read(name, root, entry)
            if isinstance(hooks, str):
                shown = entry.get("path") if isinstance(entry, dict) else entry
                found.problems.append(f"plugin {name}: hooks {shown}: {hooks}; none of them run")
            else:
                found.hooks += hooks
    return found


def _read(name: str, root: Path, entry: object) -> list[Hook] | str:
    """The hooks of one of the lock's hooks records, or why none are read."""
    if not isinstance(entry, dict) or not all(
        isinstance(entry.get(k), str) for k in ("path", "sha256")
    ):
        return "not a hooks record the lock can hold"
    if root.is_symlink() or not root.is_dir():
        return f"the plugin's folder {root} is not there"
    given: str = entry["path"]
    rel = given.removesuffix(INLINE) if given.endswith(INLINE) else given.removeprefix("./")
    try:
        path = inside(root, rel, "hooks file")
        if not path.is_file():  # a folder, a pipe: nothing to read, nothing to wait on
            return "not a file"
        if os.path.getsize(path) > MAX_JSON_BYTES:
            return f"over {MAX_JSON_BYTES:,} bytes"
        raw = path.read_bytes()
        doc = json.loads(raw)
    except InstallError as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    except (ValueError, RecursionError):
        return "not valid JSON"
    if given.endswith(INLINE):
        doc = doc.get("hooks") if isinstance(doc, dict) else None
        raw = json.dumps(doc, sort_keys=True).encode()
    if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
        return "changed since it was installed (`skills update` a plugin, do not edit it)"
    table = doc["hooks"] if isinstance(doc, dict) and "hooks" in doc else doc
    read = read_table(table, source="plugin", origin=path, folder=root)
    if read.problems:
        return read.problems[0].removeprefix(f"{path}: ")
    real_root = Path(os.path.realpath(root))
    for hook in read.hooks:
        if outside := next((f for f in hook.files if not f.is_relative_to(real_root)), None):
            return f"a {hook.event} hook runs {outside}, outside the plugin"
    return [dataclasses.replace(hook, plugin=name) for hook in read.hooks]
