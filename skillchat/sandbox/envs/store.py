"""Where environments live: `<data folder>/envs/<key>/`, one per requirement set.

The key is a hash of the declared requirements (sorted), the sandbox's Python
version and the machine, so skills and chats that declare the same set share one
environment. An environment is made in `.tmp-<key>-<random>/` and renamed into
place only once complete, with its record (`skillchat-env.json`: what was
installed, versions, a hash of each package's RECORD, size, time, bytes fetched)
written before the rename: a folder named by a key is always whole. Making one
holds `locks/<key>.lock` (flock): a second session needing the same set waits for
the first, then finds it ready. A crash leaves only a `.tmp-*` folder, which
`prune` removes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD_NAME = "skillchat-env.json"
TMP_PREFIX = ".tmp-"
# What lives beside the environments: the locks. (No cache: each install has its
# own, in RAM, gone when it ends; `prune` removes the shared `cache/` and
# `npm-cache/` an older skillchat kept here.)
SHARED_FOLDERS = ("locks",)


def env_key(packages: tuple[str, ...], python: tuple[int, ...]) -> str:
    """The environment's name: the same set on the same Python and machine, one name."""
    canonical = json.dumps(
        {
            "packages": sorted(" ".join(p.lower().split()) for p in packages),
            "python": ".".join(map(str, python[:2])),
            "machine": platform.machine(),
        },
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


@dataclass
class Record:
    """What was installed into one environment, kept inside it."""

    key: str
    requested: list[str]
    python: str  # the runtime's version: Python's, or Node's when `kind` is "node"
    installed: list[dict[str, str]]  # name, version, record_sha256 (Node: integrity)
    size_bytes: int
    fetched_bytes: int
    duration_ms: int
    fingerprint: str = ""  # of every entry's path, size, mode and mtime (`fingerprint`)
    kind: str = "python"  # or "node" (skillchat/sandbox/envs/npm_install.py)

    def summary(self) -> str:
        """`pyyaml 6.0.3, pillow 12.0` for cards and listings."""
        return ", ".join(f"{p['name']} {p['version']}" for p in self.installed) or "(nothing)"


class EnvStore:
    """The environments folder of one data folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key

    def ready(self, key: str) -> Record | None:
        """The environment's record when it is complete, else None."""
        try:
            data = json.loads((self.path(key) / RECORD_NAME).read_text())
            return Record(**data)
        except (OSError, ValueError, TypeError):
            return None

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """Held while the environment `key` is made: one maker, the others wait."""
        folder = self.root / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def staging(self, key: str) -> Path:
        """A fresh folder to make the environment `key` in."""
        self.root.mkdir(parents=True, exist_ok=True)
        folder = self.root / f"{TMP_PREFIX}{key}-{os.urandom(4).hex()}"
        folder.mkdir(mode=0o755)
        return folder

    def publish(self, built: Path, record: Record) -> Path:
        """Write the record into `built` and rename it into place (atomic)."""
        (built / RECORD_NAME).write_text(json.dumps(asdict(record), indent=1))
        os.chmod(built / RECORD_NAME, 0o444)
        target = self.path(record.key)
        if target.exists():  # a tampered or unrecorded leftover: replaced whole
            shutil.rmtree(target)
        os.rename(built, target)
        return target

    def remove(self, key: str) -> bool:
        """Remove one environment (under its lock); False when there was none."""
        with self.lock(key):
            if not self.path(key).exists():
                return False
            shutil.rmtree(self.path(key))
            return True

    def prune(self, keep: set[str]) -> list[str]:
        """Remove every environment not in `keep`, and leftovers of crashed
        installs (a `.tmp-*` folder whose key is not locked by a live install);
        return what went."""
        gone: list[str] = []
        if not self.root.is_dir():
            return gone
        for entry in sorted(self.root.iterdir()):
            name = entry.name
            if name in SHARED_FOLDERS or not entry.is_dir():
                continue
            key = name[len(TMP_PREFIX) :].rsplit("-", 1)[0] if name.startswith(TMP_PREFIX) else name
            if key in keep and not name.startswith(TMP_PREFIX):
                continue
            if name.startswith(TMP_PREFIX) and not self._lock_free(key):
                continue  # an install is running right now
            shutil.rmtree(entry, ignore_errors=True)
            gone.append(name)
        return gone

    def _lock_free(self, key: str) -> bool:
        path = self.root / "locks" / f"{key}.lock"
        if not path.exists():
            return True
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)


def fingerprint(env: Path) -> str:
    """A hash of every entry's path, type, size, mode and mtime under `env` (the
    record aside): cheap enough to check before a chat's first use (stat only), and
    any file added, removed or rewritten after the install changes it. It catches
    changes made by mistake or by a program that does not know it is watched; one
    that can write the data folder can rewrite the record too."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(env):
        dirs.sort()
        for name in sorted(files) + dirs:
            path = os.path.join(folder, name)
            if path == str(env / RECORD_NAME):
                continue
            st = os.lstat(path)
            entry = f"{os.path.relpath(path, env)}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\n"
            digest.update(entry.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def folder_size(path: Path) -> int:
    """Bytes under `path` (files only, links not followed)."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def installed_packages(env: Path) -> list[dict[str, str]]:
    """Name, version and RECORD hash of each installed distribution, read from its
    files: no interpreter of the environment runs on the host (a `.pth` file in a
    package would run code there)."""
    out = []
    for dist in sorted(env.glob("lib/python*/site-packages/*.dist-info")):
        meta: dict[str, str] = {}
        try:
            for line in (dist / "METADATA").read_text(errors="replace").splitlines():
                if not line:
                    break
                key, _, value = line.partition(": ")
                meta.setdefault(key, value)
            digest = hashlib.sha256((dist / "RECORD").read_bytes()).hexdigest()
        except OSError:
            continue
        out.append(
            {
                "name": meta.get("Name", dist.name),
                "version": meta.get("Version", "?"),
                "record_sha256": digest,
            }
        )
    return out
