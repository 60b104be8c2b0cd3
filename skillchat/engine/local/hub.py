"""`--local`'s model: fetched once from the Hugging Face Hub into the user cache.

The default is Qwen2.5-1.5B-Instruct, Q4_K_M (about 1.1 GB): the smallest widely
used instruct model trained for tool calling (Hermes-style `<tool_call>` JSON, which
llama.cpp parses natively from its own template), Apache-2.0, a 32k trained context,
and usable speed on two CPU cores; the 3B doubles the download and halves the speed.

The cache is `<user cache>/skillchat/models/ORG--NAME/FILE`. A file there is used
with no network at all (not even a metadata request). Otherwise huggingface_hub
(installed with litellm) fetches it: its metadata (size, SHA-256, the CDN location),
then the bytes into `FILE.part` with a progress bar on stderr. The `.part` file has a
stable name, so a download cut by a dropped connection (the client retries) or by a
killed skillchat (the next run) goes on from where it stopped, with an HTTP Range.
The whole file's SHA-256 is checked against the hub's before it is renamed into
place; a mismatch deletes it. `HF_ENDPOINT` points the client at a mirror.

(huggingface_hub's own cache is not used: since 2.x it downloads each time into a
process-unique temporary file, so a killed download starts again from zero.)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import LocalModelError
from skillchat.safe_io import user_cache

DEFAULT_REPO = "Qwen/Qwen2.5-1.5B-Instruct-GGUF"
DEFAULT_FILE = "qwen2.5-1.5b-instruct-q4_k_m.gguf"
PARTIAL = ".part"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def cache_dir() -> Path:
    """`models` in the user cache folder: `$XDG_CACHE_HOME/skillchat/models` on Linux."""
    return user_cache.folder() / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch(repo: str, filename: str, target: Path, announce: Callable[[str], None]) -> None:
    """Download `repo`/`filename` to `target`, resuming `target.part`, verified;
    `announce` is told what comes, how big, and where it is kept, before it comes."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get

    meta = get_hf_file_metadata(hf_hub_url(repo, filename))
    expected = (meta.etag or "").lower()
    if not _SHA256.fullmatch(expected) or meta.size is None:
        raise LocalModelError(f"{repo}/{filename}: the hub gave no SHA-256 and size to check")
    partial = target.with_name(target.name + PARTIAL)
    target.parent.mkdir(parents=True, exist_ok=True)
    with partial.open("ab") as stream:
        done = stream.tell()
        if done > meta.size:  # not a prefix of this file: start again
            stream.truncate(0)
            done = 0
        if done < meta.size:
            resumed = f", {done / 1e6:.0f} MB of it kept from before" if done else ""
            announce(
                f"downloading the local model {repo}/{filename} "
                f"({meta.size / 1e9:.1f} GB{resumed}), once, into {target.parent}; "
                "to use an API key instead, set OPENAI_API_KEY or ANTHROPIC_API_KEY "
                "and leave out --local"
            )
            http_get(
                meta.location,
                stream,
                resume_size=done,
                expected_size=meta.size,
                displayed_filename=filename,
            )
    if _sha256(partial) != expected:
        partial.unlink()
        raise LocalModelError(
            f"the download of {filename} is corrupt (SHA-256 does not match the hub's); "
            "it was removed: run the command again to fetch it afresh"
        )
    partial.replace(target)


def default_model(announce: Callable[[str], None]) -> Path:
    """The default model's file: from the cache with no network, else downloaded
    (`announce` says what and how big first; huggingface_hub shows the progress)."""
    target = cache_dir() / DEFAULT_REPO.replace("/", "--") / DEFAULT_FILE
    if target.is_file():
        return target
    try:
        _fetch(DEFAULT_REPO, DEFAULT_FILE, target, announce)
    except LocalModelError:
        raise
    except Exception as exc:  # network, HTTP, disk: the client's own words, one line
        raise LocalModelError(_download_failed(exc, target)) from None
    return target


def hub_endpoint() -> str:
    """Where the model comes from: `HF_ENDPOINT` (a mirror) or the Hugging Face Hub."""
    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def _unreachable(exc: BaseException) -> bool:
    """The hub could not be reached at all (offline, no DNS, refused), not an answer."""
    seen: BaseException | None = exc
    while seen is not None:
        name = type(seen).__name__
        if isinstance(seen, OSError) or "Connect" in name or "Offline" in name:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _download_failed(exc: Exception, target: Path) -> str:
    """One line: where it tried, why (no raw errno), and "resume" only if bytes were
    kept to resume from."""
    partial = target.with_name(target.name + PARTIAL)
    kept = partial.stat().st_size if partial.is_file() else 0
    where = f"{DEFAULT_REPO}/{DEFAULT_FILE} from {hub_endpoint()}"
    if _unreachable(exc) and not kept:
        reason = "the hub cannot be reached (offline?)"
    else:
        reason = re.sub(r"\[Errno -?\d+\]\s*", "", " ".join(str(exc).split()))[:300]
        reason = reason or exc.__class__.__name__
    after = f"{kept // 1_000_000} MB kept: run again to resume; " if kept else ""
    return (
        f"could not download {where}: {reason} ({after}set HF_ENDPOINT for a mirror, "
        "or pass a model file with --gguf)"
    )


@dataclass(frozen=True)
class CachedModel:
    """One repository in the cache: `ORG/NAME`, its bytes, and its files."""

    name: str
    size: int
    files: tuple[str, ...]
    partial: bool
    folder: Path


def cached_models() -> list[CachedModel]:
    """What the cache holds (a partial download included), by walking its folders."""
    root = cache_dir()
    found: list[CachedModel] = []
    if not root.is_dir():
        return found
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.iterdir() if p.is_file())
        found.append(
            CachedModel(
                name=folder.name.replace("--", "/", 1),
                size=sum(p.stat().st_size for p in files),
                files=tuple(p.name for p in files if not p.name.endswith(PARTIAL)),
                partial=any(p.name.endswith(PARTIAL) for p in files),
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
