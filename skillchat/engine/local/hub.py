"""`--local`'s model: fetched once from the Hugging Face Hub into the user cache.

The default is Qwen2.5-1.5B-Instruct, Q4_K_M (about 1.1 GB): the smallest widely
used instruct model trained for tool calling (Hermes-style `<tool_call>` JSON, which
llama.cpp parses natively from its own template), Apache-2.0, a 32k trained context,
and usable speed on two CPU cores; the 3B doubles the download and halves the speed.

The download uses `huggingface_hub` (installed with litellm): a progress bar on
stderr, resumed from the partial file when interrupted, its size checked by the hub
client, and its SHA-256 checked here against the hub's (the blob's name in the cache
is the LFS SHA-256). A file already in the cache is used without any network.
`HF_ENDPOINT` points the client at a mirror.

The cache is the hub's layout under `<user cache>/skillchat/models`
(`models--ORG--NAME/blobs|snapshots`): `skillchat models` lists it by walking it,
without importing huggingface_hub.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import LocalModelError

DEFAULT_REPO = "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
DEFAULT_FILE = "qwen2.5-1.5b-instruct-q4_k_m.gguf"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/skillchat/models` on Linux (platformdirs elsewhere)."""
    from platformdirs import user_cache_path

    return user_cache_path("skillchat") / "models"


def _verify(path: Path) -> None:
    """Compare the file's SHA-256 with its blob's name (the hub's LFS hash); on a
    mismatch remove it, so the next run downloads it afresh."""
    blob = path.resolve()
    if not _SHA256.fullmatch(blob.name):
        return  # not an LFS file: the hub gave a git hash, which the client checked
    digest = hashlib.sha256()
    with blob.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != blob.name:
        blob.unlink(missing_ok=True)
        path.unlink(missing_ok=True)
        raise LocalModelError(
            f"the download of {path.name} is corrupt (SHA-256 does not match the hub's); "
            "it was removed: run the command again to fetch it afresh"
        )


def default_model() -> Path:
    """The default model's file: from the cache with no network, else downloaded."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    where = str(cache_dir())
    try:
        return Path(
            hf_hub_download(DEFAULT_REPO, DEFAULT_FILE, cache_dir=where, local_files_only=True)
        )
    except LocalEntryNotFoundError:
        pass
    try:
        path = Path(hf_hub_download(DEFAULT_REPO, DEFAULT_FILE, cache_dir=where))
    except Exception as exc:  # network, HTTP, disk: the client's own words, one line
        reason = " ".join(str(exc).split())[:300] or exc.__class__.__name__
        raise LocalModelError(
            f"could not download {DEFAULT_REPO}/{DEFAULT_FILE}: {reason} "
            "(run again to resume, or pass a file with --gguf)"
        ) from None
    _verify(path)
    return path


@dataclass(frozen=True)
class CachedModel:
    """One repository in the cache: `ORG/NAME`, its bytes, and its files."""

    name: str
    size: int
    files: tuple[str, ...]
    partial: bool
    folder: Path


def cached_models() -> list[CachedModel]:
    """What the cache holds, by walking the hub's layout (no import of the client)."""
    root = cache_dir()
    found: list[CachedModel] = []
    if not root.is_dir():
        return found
    for folder in sorted(root.glob("models--*")):
        blobs = [b for b in (folder / "blobs").glob("*") if b.is_file()]
        files = sorted({p.name for p in (folder / "snapshots").glob("*/*")})
        found.append(
            CachedModel(
                name=folder.name.removeprefix("models--").replace("--", "/"),
                size=sum(b.stat().st_size for b in blobs),
                files=tuple(files),
                partial=any(b.name.endswith(".incomplete") for b in blobs),
                folder=folder,
            )
        )
    return found


def remove_model(name: str) -> CachedModel:
    """Delete the cached repository `name` (`ORG/NAME`, or NAME when unique)."""
    models = cached_models()
    matches = [m for m in models if name in (m.name, m.name.split("/")[-1])]
    if len(matches) != 1:
        known = ", ".join(m.name for m in models) or "none"
        raise LocalModelError(f"no cached model named {name!r} (cached: {known})")
    shutil.rmtree(matches[0].folder)
    return matches[0]
