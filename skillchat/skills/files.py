"""A skill's own files, read and listed through the safe reads (`skillchat/safe_io`):
its SKILL.md and resources for get_skill, read_file_in_skill and `skills show`.

The skill folder is the container: its root is the real path recorded at discovery,
so a folder swapped for a link since then is PATH_TRAVERSAL, as in every read.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillchat.errors import FileAccessError
from skillchat.hardlinks import hard_links_allowed
from skillchat.safe_io.read import (
    Container,
    FileText,
    normalise_relative_path,
    open_contained,
    read_contained,
    read_text_or_image,
    traversal_error,
)
from skillchat.safe_io.walk import LIST_FLAGS, open_root
from skillchat.skills.model import Skill

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image, ImageLimits

# get_skill lists a skill's files; a skill with a node_modules inside must not flood it.
MAX_LISTED_FILES = 500
# Past this many, a listing stops counting and says "N+" files.
MAX_COUNTED_FILES = 20_000


def skill_container(skill: Skill) -> Container:
    """The skill's folder as a container, named the way errors name it; hard-linked
    files are served only in the bundled skills' folder (hardlinks.py says why)."""
    label = f"skill '{skill.name}'"
    return Container(skill.root, label, "skill folder", hard_links=hard_links_allowed(skill.root))


def read_skill_file(skill: Skill, rel: object, *, limit: int, offset: int = 0) -> FileText:
    """A resource of `skill` (any file under its folder), cut at `limit` bytes from
    `offset`. A served skill's file is first fetched and checked (skills/remote.py)."""
    _fetch_served(skill, rel)
    return read_contained(skill_container(skill), rel, limit=limit, offset=offset)


def _fetch_served(skill: Skill, rel: object) -> None:
    """A served skill's file, fetched through its server and checked against the
    manifest into the session's cache, before it is read from there."""
    if skill.remote is not None:  # imported only then: no MCP server, no cost
        from skillchat.skills.remote import ensure_file

        ensure_file(skill.remote, skill.root, normalise_relative_path(rel, skill_container(skill)))


def read_skill_resource(
    skill: Skill, rel: object, *, limit: int, offset: int, images: ImageLimits
) -> FileText | Image:
    """`read_skill_file`, an image (by its bytes) read as one: read_file_in_skill."""
    _fetch_served(skill, rel)
    container = skill_container(skill)
    return read_text_or_image(container, rel, limit=limit, offset=offset, images=images)


def read_skill_md(skill: Skill, *, limit: int) -> FileText:
    """The whole SKILL.md of `skill` through the same rules as every other file."""
    try:
        return read_skill_file(skill, skill.skill_md.name, limit=limit)
    except FileAccessError as exc:
        if exc.code == "NOT_FOUND":
            raise FileAccessError(
                "NOT_FOUND", f"SKILL.md not found for skill '{skill.name}'"
            ) from None
        raise


@dataclass(frozen=True, eq=False)
class FileList:
    """Some of a skill's files, and how many there were: `paths` is cut at the
    listing limit, so `cut` says whether the reader sees all of them."""

    paths: list[str]
    total: int  # files found (at most MAX_COUNTED_FILES: counting stops there)

    @property
    def cut(self) -> bool:
        return self.total > len(self.paths)

    def notice(self) -> str | None:
        """One line saying the list is incomplete, or None when it is not."""
        if not self.cut:
            return None
        total = f"{self.total:,}" + ("+" if self.total >= MAX_COUNTED_FILES else "")
        return (
            f"only the first {len(self.paths):,} of {total} files are listed (sorted by "
            "path); any file can still be read by its path"
        )


def _is_listable(container: Container, rel: str) -> bool:
    """Whether the symlink `rel` leads to a file a read would serve (the same walk)."""
    try:
        os.close(open_contained(container, rel))
    except FileAccessError:
        return False
    return True


def _listed(fd: int, prefix: str, found: list[str], cap: int, container: Container) -> None:
    """Add the regular files below the folder `fd` (named `prefix`) to `found`."""
    with os.scandir(fd) as entries:
        kinds = sorted(
            (e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False))
            for e in entries
            if not e.name.startswith(".")
        )
    for name, is_dir, is_file in kinds:
        if len(found) >= cap:
            return
        rel = f"{prefix}{name}"
        if is_dir:
            try:
                sub = os.open(name, LIST_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                _listed(sub, rel + "/", found, cap, container)
            except OSError:
                pass
            finally:
                os.close(sub)
        elif is_file or _is_listable(container, rel):
            found.append(rel)


def list_skill_files(skill: Skill, *, max_files: int = MAX_LISTED_FILES) -> FileList:
    """Relative paths of the regular files in a skill's folder, sorted, hidden ones
    skipped, at most `max_files` of them (`FileList.total` says how many there were).

    The folders are walked by descriptor from the pinned root, as reads are; symlinked
    folders are not descended into (they may lead anywhere), and a symlinked file is
    listed only when it leads to a regular file inside the folder.
    """
    if skill.remote is not None:  # its manifest: nothing is fetched to list it
        paths = sorted(skill.remote.files)
        return FileList(paths[:max_files], len(paths))
    container = skill_container(skill)
    found: list[str] = []
    try:
        root_fd = open_root(str(skill.root), functools.partial(traversal_error, container))
        try:
            top = os.open(".", LIST_FLAGS, dir_fd=root_fd)
        finally:
            os.close(root_fd)
    except (OSError, FileAccessError):
        return FileList([], 0)
    try:
        _listed(top, "", found, max(max_files, MAX_COUNTED_FILES), container)
    except (OSError, RecursionError):
        pass  # a folder gone mid-listing, or nested past Python's stack: list what was found
    finally:
        os.close(top)
    found.sort()
    return FileList(found[:max_files], len(found))
