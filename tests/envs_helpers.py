"""Small wheels written by hand, and a local index for them, so the environment tests
install with the index switched off (`UV_NO_INDEX`, `UV_FIND_LINKS`)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest


def write_wheel(
    folder: Path,
    name: str,
    version: str = "1.0",
    code: str = "VALUE = 1\n",
    extra_files: dict[str, str] | None = None,
    requires: tuple[str, ...] = (),
) -> Path:
    """A pure-Python wheel of module `name` (its `__init__.py` is `code`)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        f"{name}/__init__.py": code,
        **(extra_files or {}),
        f"{dist}/METADATA": meta,
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    target = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return target


def write_sdist(folder: Path, name: str, version: str = "1.0") -> Path:
    """A source distribution only (its setup.py would run code if built)."""
    import io
    import tarfile

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}-{version}.tar.gz"
    setup = "raise SystemExit('built!')\n"
    with tarfile.open(target, "w:gz") as tf:
        for path, text in {
            f"{name}-{version}/setup.py": setup,
            f"{name}-{version}/PKG-INFO": (
                f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            ),
        }.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return target


def local_index(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Point uv at `folder` only (this process and the CLI it starts)."""
    monkeypatch.setenv("UV_NO_INDEX", "1")
    monkeypatch.setenv("UV_FIND_LINKS", str(folder))
    for name in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX_URL", "PIP_FIND_LINKS"):
        monkeypatch.delenv(name, raising=False)
