"""What a finished run's output says is missing, as a note the model and the user
can act on: a Python module the skill did not declare (with the config line that
would declare it), a Node module, or a program not installed in the sandbox
(instead of exit 127's noise).

The output is the command's, so anyone's: a note never turns a name it printed into
a package to install. The config line names a distribution only for the well-known
modules of `DISTRIBUTIONS`; for any other, the user looks up what provides it. A
module that is the skill's own folder or file (`scripts`, `core`) is said to be
that, never a package."""

from __future__ import annotations

import re
from pathlib import Path

from skillchat.mounts import SKILLS_MOUNT

_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")
# require(): "Cannot find module 'x'"; import: "Cannot find package 'x' imported from".
_NODE_MODULE = re.compile(r"Cannot find (?:module|package) '([^'./][^']*)'")
# dash: "sh: 1: gh: not found"; bash: "bash: line 1: gh: command not found".
_PROGRAM = re.compile(r"^(?:\S*sh): (?:line )?\d+: ([^:\s]+): (?:command )?not found$", re.M)
# Import names whose distribution is named otherwise, for the suggested config line.
DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "PIL": "pillow",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "cv2": "opencv-python-headless",
    "bs4": "beautifulsoup4",
    "sklearn": "scikit-learn",
    "dateutil": "python-dateutil",
    "fitz": "pymupdf",
    "dotenv": "python-dotenv",
}


def missing_notes(
    skill: str | None, exit_code: int | None, stderr: str, root: Path | None = None
) -> list[str]:
    """Notes for what the output shows missing (none when nothing is); `root` is
    the skill's folder, whose own modules are not packages."""
    notes: list[str] = []
    if match := _MODULE.search(stderr):
        notes.append(_module_note(match.group(1).split(".")[0], skill, root))
    if match := _NODE_MODULE.search(stderr):
        notes.append(
            f"Node module `{match.group(1)}` is not installed: the skill does not declare "
            "it in a package.json beside the script or at its root"
        )
    if exit_code == 127:
        for program in dict.fromkeys(_PROGRAM.findall(stderr)):
            notes.append(f"`{program}` is not installed here")
    return notes


def _module_note(module: str, skill: str | None, root: Path | None) -> str:
    if root is not None and ((root / module).is_dir() or (root / f"{module}.py").is_file()):
        return (
            f"`{module}` is skill {skill}'s own folder, not a package to install: its "
            f"commands find it in {SKILLS_MOUNT}/{skill} (after the working folder, whose "
            f"own `{module}` comes first)"
        )
    who = f"skill {skill}" if skill else "the command"
    dist = DISTRIBUTIONS.get(module)
    line = f'`[packages] {skill or "SKILL"} = ["{dist or "DISTRIBUTION"}"]`'
    provider = "" if dist else " naming the distribution that provides it"
    return (
        f"Python module `{module}` is not installed: {who} does not declare it "
        f"(PEP 723 or requirements.txt); the user can add {line} to the config{provider}"
    )
