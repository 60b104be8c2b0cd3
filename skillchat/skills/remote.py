"""Skills served by an MCP server (the skills extension), as the registry holds them.

A served skill is known by its entry: the server's label, the URI of its SKILL.md,
its frontmatter and its manifest (every file's `sha256:` digest and size). Nothing
is fetched ahead of need: a file is read through the server when get_skill or
read_file_in_skill asks for it, checked against the manifest (size, digest, and
for SKILL.md the frontmatter against the entry's), and only then written to the
session's private cache, a 0700 folder outside every skills directory, at a path
that names the server and the URI. Every later read checks the cached bytes'
digest again, so a cached copy is never trusted for being local.

A mismatch, or a file the manifest does not list, is refused with one line
(`DIGEST_MISMATCH`, `NOT_FOUND`): the content is never used. The server label and
the digest of the entry (`digest`: its frontmatter as listed and its manifest) are
what trust is bound to (skills/trust.py): a server that changes any file, or only
the frontmatter it lists, changes that digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from skillchat.errors import FileAccessError, FrontmatterError
from skillchat.safe_io.write import replace_atomically

Fetch = Callable[[str], bytes]  # a resource URI -> its raw bytes (resources/read)


@dataclass(frozen=True)
class RemoteFile:
    """One file of a served skill's manifest."""

    uri: str
    digest: str  # sha256:<64 hex>
    size: int


@dataclass(frozen=True)
class RemoteSkill:
    """Where a served skill comes from and what its files must be."""

    server: str
    uri: str  # the SKILL.md's
    files: dict[str, RemoteFile]  # by path relative to the skill's root
    frontmatter: dict[str, object] = field(compare=False, repr=False)
    fetch: Fetch = field(compare=False, repr=False)

    @property
    def origin(self) -> str:
        return f"mcp:{self.server}"

    @property
    def digest(self) -> str:
        """One digest over the frontmatter as listed and every file's (uri, digest)
        pair: what trust is bound to, and what a chat that activated the skill
        recorded (a server that changes a file or only the listed frontmatter, say
        its `allowed-tools`, changes it)."""
        from skillchat.skills.frontmatter_yaml import json_safe

        listed = json.dumps(json_safe(self.frontmatter), sort_keys=True, ensure_ascii=False)
        lines = sorted(f"{f.uri}\n{f.digest}\n" for f in self.files.values())
        text = listed + "\n" + "".join(lines)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cache_folder(cache: Path, server: str, uri: str, name: str) -> Path:
    """The skill's folder in the cache: it names the server and the URI (hashed, as
    a URI may hold any character), and ends with the skill's name."""
    key = hashlib.sha256(uri.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return cache / _safe(server) / key / name


def ensure_file(remote: RemoteSkill, root: Path, rel: str) -> None:
    """Make `root/rel` hold the verified bytes of the manifest's file, fetching it
    when the cache has none or a copy that no longer matches; FileAccessError when
    the manifest does not list it or the server's bytes do not match."""
    clean = rel.strip("/")
    entry = remote.files.get(clean)
    if entry is None:
        raise FileAccessError(
            "NOT_FOUND", f"'{clean[:200]}' is not in the manifest of {remote.origin} {remote.uri}"
        )
    path = root / clean
    try:
        if _matches(path.read_bytes(), entry):
            return
    except OSError:
        pass
    try:
        data = remote.fetch(entry.uri)
    except Exception as exc:  # any failure of the server is this read's failure
        raise FileAccessError("MCP_ERROR", f"{remote.origin}: {exc}") from None
    if not _matches(data, entry):
        raise FileAccessError(
            "DIGEST_MISMATCH",
            f"refused {entry.uri} from {remote.origin}: its content does not match the "
            f"skill's manifest ({len(data)} bytes; it says {entry.size}, {entry.digest[:19]}…)",
        )
    if clean == "SKILL.md" and not _same_frontmatter(data, remote.frontmatter):
        raise FileAccessError(
            "DIGEST_MISMATCH",
            f"refused {entry.uri} from {remote.origin}: its frontmatter differs from the "
            "skill's entry",
        )
    # Whole or not at all, under a name of its own: forks running at once may fetch
    # the same file.
    failed = partial(FileAccessError, "INTERNAL_ERROR")
    replace_atomically(path, data, failed, f"cannot cache {remote.origin}'s file")


def _matches(data: bytes, entry: RemoteFile) -> bool:
    return len(data) == entry.size and "sha256:" + hashlib.sha256(data).hexdigest() == entry.digest


def _same_frontmatter(data: bytes, expected: dict[str, object]) -> bool:
    """The SKILL.md's frontmatter, field by field, is the entry's (what was listed,
    and what a trust was given to, is what the model reads)."""
    from skillchat.skills.frontmatter import split_skill_md
    from skillchat.skills.frontmatter_yaml import json_safe

    try:
        found, _ = split_skill_md(data.decode("utf-8"))
    except (UnicodeDecodeError, FrontmatterError):
        return False
    return bool(json_safe(found) == json_safe(expected))


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label) or "_"
