"""A skill staged for install (skills/install.py) and what is seen of it before
anything is written: its `Candidate` record, which `scan` fills in from the staged
folder (name, description, files, scripts, license; findings shown, such as links,
Git LFS pointers and hidden or bidirectional characters; refusals that stop the
install; the digest the lock will hold), and `collisions` with skills already
installed.

Apart from fetching and installing because it is the look before the question:
what `skills add` shows and asks about is made of these records alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skillchat.errors import TrustError
from skillchat.skills.frontmatter import SKILL_MD_NAMES
from skillchat.skills.lock import record_for

# Characters that make text read differently from what it is: bidi controls,
# zero-width characters, and tag characters (invisible ASCII look-alikes).
HIDDEN = frozenset(
    [
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0x200E,
        0x200F,
        0x061C,
        *range(0x200B, 0x200E),
        0x2060,
        0xFEFF,
        *range(0xE0000, 0xE0080),
    ]
)
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"


@dataclass
class Candidate:
    """One skill found in the source, staged in the temporary folder."""

    folder: str  # its path in the repository ("" for the top)
    staged: Path
    name: str = ""
    description: str = ""
    files: int = 0
    size: int = 0
    scripts: list[str] = field(default_factory=list)
    allowed_tools: str | None = None
    license: str | None = None
    findings: list[str] = field(default_factory=list)  # shown, not blocking
    refusals: list[str] = field(default_factory=list)  # no install while any
    digest: str = ""
    files_sha: dict[str, str] = field(default_factory=dict)


def scan(c: Candidate) -> None:
    """Fill in what the summary shows of a staged skill, and why it may not go in."""
    from skillchat.skills.validation import inspect_skill

    root = c.staged
    found = inspect_skill(str(root), dir_name=root.name, shown_dir=root.name, strict=False)
    if found is None or not found.ok or not found.name:
        why = "; ".join(p.message for p in found.problems) if found else "no SKILL.md"
        c.refusals.append(f"not a valid skill: {why}")
    else:
        c.name, c.description = found.name, found.description or ""
        c.allowed_tools = found.frontmatter.get("allowed-tools")
        lic = found.frontmatter.get("license")
        c.license = lic if isinstance(lic, str) else None
    c.name = c.name or root.name
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            c.findings.append(f"symlink {rel} -> {os.readlink(path)}")
            continue
        if not path.is_file():
            continue
        c.files += 1
        data = path.read_bytes()
        c.size += len(data)
        is_script = rel.startswith("scripts/") or os.access(path, os.X_OK)
        if is_script:
            c.scripts.append(rel)
        if data.startswith(LFS_POINTER):
            c.findings.append(f"{rel} is a Git LFS pointer (the content was not fetched)")
        if hidden := _hidden(data, always=rel in SKILL_MD_NAMES or is_script):
            c.findings.append(f"{rel} has hidden or bidirectional characters: {', '.join(hidden)}")
    try:
        record = record_for(root)
        c.digest, c.files_sha = record["digest"], record["files"]
    except TrustError as exc:  # a link out of the folder, or over the bounds
        c.refusals.append(str(exc).replace(str(root), c.name))


def _hidden(data: bytes, *, always: bool) -> list[str]:
    """The hidden characters in a file's text, as U+XXXX. Every text file (valid
    UTF-8) is read: a model reads `references/` as it reads SKILL.md. SKILL.md and
    scripts are read even when not valid UTF-8; other bytes are not text."""
    try:
        text = data.decode("utf-8", errors="ignore" if always else "strict")
    except UnicodeDecodeError:
        return []
    return sorted({f"U+{ord(ch):04X}" for ch in text if ord(ch) in HIDDEN})


def collisions(c: Candidate, target: Path, installed: dict[str, Path]) -> None:
    """A name already in the target folder refuses; one elsewhere is a finding."""
    here = target / c.name
    if os.path.lexists(here):
        c.refusals.append(f"'{c.name}' is already installed at {here} (skills remove it first)")
    elif c.name in installed:
        c.findings.append(f"another skill named '{c.name}' is installed at {installed[c.name]}")
