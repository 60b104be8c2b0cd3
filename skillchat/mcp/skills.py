"""The skills extension (`io.modelcontextprotocol/skills`) from the host's side.

A server that declares the extension in its capabilities is asked `skills/list`
(paged like the base list methods); each entry is the URI of a skill's SKILL.md,
its frontmatter verbatim and its manifest (`resources`: every file's URI, `sha256:`
digest and size). The registry is built from the entries alone: no file is read
until the model or the user reads it (skills/remote.py fetches and checks it).

An entry is refused, with one reason, when it breaks the extension's rules: a
frontmatter a local skill could not have (the same rules, in particular the name's,
which becomes a folder name in the cache), a URI that does not end in
`<name>/SKILL.md`, `resources` not an array (a `"dynamic"` skill has no digests to
check: skillchat declines it), a file outside the skill's folder, a malformed
digest, more than 512 files or 16 MiB.
The SDK has no helpers for the extension: its requests go through the session's
generic `send_request`.

A served skill's files are read with the base `resources/read` when the model or
the user reads them (`read_resource`, through the hub's connection), checked
against the entry's manifest (size, digest) by skills/remote.py, and kept in the
session's private cache, which `ServedSkills` removes when the session closes.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from skillchat.skills.model import Skill
from skillchat.skills.remote import Fetch, RemoteFile, RemoteSkill, cache_folder
from skillchat.skills.validation import check_frontmatter

if TYPE_CHECKING:
    from mcp import Client

EXTENSION = "io.modelcontextprotocol/skills"
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
MAX_PAGES = 50
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class ListSkillsPage(BaseModel):
    """A `skills/list` result; each entry is checked by `served_skill`, not here, so
    one bad entry refuses that skill only."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    skills: list[Any] = []
    next_cursor: str | None = Field(default=None, alias="nextCursor")


def declares_skills(client: Client) -> bool:
    extensions = client.server_capabilities.extensions or {}
    return EXTENSION in extensions


async def skill_entries(client: Client) -> list[Any] | None:
    """The server's skills as it connects (None: it serves none); a failing
    `skills/list` leaves its skills out, not its tools."""
    if not declares_skills(client):
        return None
    try:
        return await list_entries(client)
    except Exception:
        return []


async def list_entries(client: Client) -> list[Any]:
    """Every entry of the server's `skills/list`, page after page."""
    from mcp import types

    entries: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"cursor": cursor} if cursor else {}
        request = types.Request[dict[str, Any], str](method="skills/list", params=params)
        page = await client.session.send_request(request, ListSkillsPage)
        entries += page.skills
        cursor = page.next_cursor
        if not cursor:
            break
    return entries


async def read_resource(client: Client, uri: str) -> bytes:
    """One `resources/read`: the resource's raw bytes (text as UTF-8, blobs decoded)."""
    import base64

    result = await client.read_resource(uri)
    data = b""
    for content in result.contents:
        text, blob = getattr(content, "text", None), getattr(content, "blob", None)
        data += text.encode("utf-8") if isinstance(text, str) else base64.b64decode(blob or "")
    return data


class ServedSkills:
    """The skills of one session's servers: built from their entries, their files
    read through `read(server, uri)` (the hub's `resources/read`) into a private
    folder outside every skills directory, made at the first skill and removed by
    `close`."""

    def __init__(self, read: Callable[[str, str], bytes]) -> None:
        self._read = read
        self._cache: Path | None = None

    def build(self, entries: dict[str, list[Any] | None]) -> tuple[list[Skill], list[str]]:
        """The skills of each server's entries, and the entries refused (why)."""
        skills: list[Skill] = []
        refused: list[str] = []
        for name, listed in entries.items():
            for entry in listed or []:
                skill, why = served_skill(
                    name, entry, self._cache_root(), partial(self._read, name)
                )
                if skill is None:
                    refused.append(f"MCP server '{name}': skill refused: {why}")
                else:
                    skills.append(skill)
        return skills, refused

    def close(self) -> None:
        if self._cache is not None:
            shutil.rmtree(self._cache, ignore_errors=True)

    def _cache_root(self) -> Path:
        if self._cache is None:
            self._cache = Path(tempfile.mkdtemp(prefix="skillchat-mcp-skills-"))
        return self._cache


def served_skill(server: str, entry: Any, cache: Path, fetch: Fetch) -> tuple[Skill | None, str]:
    """The `Skill` of one entry, or None and why it is refused."""
    if not isinstance(entry, dict):
        return None, "an entry that is not an object"
    uri, frontmatter, resources = entry.get("uri"), entry.get("frontmatter"), entry.get("resources")
    if not isinstance(uri, str) or not isinstance(frontmatter, dict):
        return None, "an entry without a uri or frontmatter"
    name, description = frontmatter.get("name"), frontmatter.get("description")
    if not isinstance(name, str) or not isinstance(description, str) or not name:
        return None, f"{uri[:200]}: its frontmatter has no name or description"
    inspection = check_frontmatter(frontmatter, dir_name=name, skill_md=uri, strict=False)
    if not inspection.ok:  # the rules a local skill meets (a name is a path segment here)
        errors = [p.message for p in inspection.problems if p.severity == "error"]
        return None, f"{uri[:200]}: {'; '.join(errors)[:300]}"
    base = uri.removesuffix("/SKILL.md")
    if base == uri or base.rsplit("/", 1)[-1] != name:
        return None, f"{uri[:200]}: the URI does not end in {name[:100]}/SKILL.md"
    if resources == "dynamic":
        return None, f"{name}: its content is dynamic (no digests to check): not loaded"
    if not isinstance(resources, list):
        return None, f"{name}: its entry has no manifest (resources)"
    files: dict[str, RemoteFile] = {}
    for item in resources:
        if not isinstance(item, dict):
            return None, f"{name}: a manifest entry that is not an object"
        file_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(file_uri, str) or not file_uri.startswith(base + "/"):
            return None, f"{name}: a file outside the skill's folder: {str(file_uri)[:200]}"
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            return None, f"{name}: a malformed digest for {file_uri[:200]}"
        if not isinstance(size, int) or size < 0:
            return None, f"{name}: no size for {file_uri[:200]}"
        rel = file_uri.removeprefix(base + "/")
        if any(part in ("", ".", "..") for part in rel.split("/")):
            return None, f"{name}: a file path skillchat will not write: {rel[:200]}"
        files[rel] = RemoteFile(file_uri, digest, size)
    if "SKILL.md" not in files:
        return None, f"{name}: its manifest does not list SKILL.md"
    if len(files) > MAX_FILES or sum(f.size for f in files.values()) > MAX_BYTES:
        return None, f"{name}: more than {MAX_FILES} files or 16 MiB"
    remote = RemoteSkill(server, uri, files, dict(frontmatter), fetch)
    root = cache_folder(cache, server, uri, name)
    skill = Skill(
        name=name,
        description=description,
        root=root,
        skill_md=root / "SKILL.md",
        source_dir=root.parent,
        frontmatter=inspection.frontmatter,
        warnings=inspection.problems,
        remote=remote,
    )
    return skill, ""
