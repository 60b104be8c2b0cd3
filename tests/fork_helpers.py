"""What the fork tests share: a forked skill on disk, and how the scripted server
tells its requests from its parent's (its SKILL.md body is in its system prompt)."""

from __future__ import annotations

from pathlib import Path

from helpers import skill_folder

FORK = '<skill name="digest">'


def digest_skills(root: Path, notes: str) -> Path:
    """A skills folder with `digest` (`context: fork`), its `notes.md` holding `notes`."""
    folder = skill_folder(
        root,
        "digest",
        "name: digest\ndescription: Digests notes.\ncontext: fork\n",
        "# Digest\nRead notes.md and answer in one line.\n",
    )
    (folder / "notes.md").write_text(notes)
    return root
