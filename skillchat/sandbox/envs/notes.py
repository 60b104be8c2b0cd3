"""What a finished run's output says is missing, as a note the model and the user
can act on: a Python module the skill did not declare (with the config line that
would declare it), a Node module, or a program not installed in the sandbox
(instead of exit 127's noise)."""

from __future__ import annotations

import re

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


def missing_notes(skill: str | None, exit_code: int | None, stderr: str) -> list[str]:
    """Notes for what the output shows missing (none when nothing is)."""
    notes: list[str] = []
    if match := _MODULE.search(stderr):
        module = match.group(1).split(".")[0]
        dist = DISTRIBUTIONS.get(module, module.lower().replace("_", "-"))
        who = f"skill {skill}" if skill else "the command"
        line = f'[packages] {skill or "SKILL"} = ["{dist}"]'
        notes.append(
            f"Python module `{module}` is not installed: {who} does not declare it "
            f"(PEP 723 or requirements.txt); the user can add `{line}` to the config"
        )
    if match := _NODE_MODULE.search(stderr):
        notes.append(
            f"Node module `{match.group(1)}` is not installed: the skill does not declare "
            "it in a package.json beside the script or at its root"
        )
    if exit_code == 127:
        for program in dict.fromkeys(_PROGRAM.findall(stderr)):
            notes.append(f"`{program}` is not installed here")
    return notes
