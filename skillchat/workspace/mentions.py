"""`@path` in a user message: which files the user attached by naming them.

A mention is an `@` at the start of the text or after whitespace or an opening
bracket or quote, followed by a path up to the next whitespace: `explain @src/app.py`,
`(see @notes.md)`. An `@` inside a word (`a@b.com`, `user@host`) never is one.
Sentence punctuation after a path (`@app.py.`, `@app.py,`, `@app.py)`) is dropped
when the path with it does not exist. Paths are relative to the workspace; a path
with spaces cannot be mentioned (use `/attach` or `--attach`).

Only a mention that names something on disk counts (`@alice` in prose stays text);
the caller then reads it under every workspace rule and tells the user if it is
refused. One that reads as a path (a '/' or an extension) but names nothing, or any
such one without a workspace, is said (`unmatched_paths`), the message still sent.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# '@' not preceded by anything but whitespace, an opening bracket or a quote.
_START = r"(?<![^\s(\[{<\"'`])@"
_MENTION = re.compile(_START + r"(\S+)")
_TYPING = re.compile(_START + r"(\S*)$")
_TRAILING = ".,;:!?)]}>\"'`"


def candidates(token: str) -> list[str]:
    """The spellings a mention may mean, longest first: the token, then the token
    with trailing punctuation dropped one character at a time."""
    found = [token]
    while token and token[-1] in _TRAILING:
        token = token[:-1]
        if token:
            found.append(token)
    return found


def mentioned_paths(text: str, root: Path) -> list[str]:
    """The paths `text` mentions that exist under `root`, in order, each once.

    Existence is only looked up here (`lexists`, nothing is opened): reading, and
    refusing, is the workspace's job.
    """
    paths: list[str] = []
    for match in _MENTION.finditer(text):
        for path in candidates(match.group(1)):
            if os.path.lexists(os.path.join(root, path)):
                if path not in paths:
                    paths.append(path)
                break
    return paths


def looks_like_path(token: str) -> bool:
    """Whether a mention reads as a file path (`src/app.py`, `notes.md`), not a
    name in prose (`@alice`): one with a '/' or a dotted extension."""
    token = candidates(token)[-1]
    return "/" in token or bool(re.search(r"[^.]\.[A-Za-z0-9]+$", token))


def unmatched_paths(text: str, root: Path | None) -> list[str]:
    """The mentions that read as paths but name nothing under `root` (every one when
    there is no workspace), in order, each once: the user is told they were not
    attached rather than the model getting a path it cannot read."""
    missed: list[str] = []
    for match in _MENTION.finditer(text):
        token = match.group(1)
        if not looks_like_path(token):
            continue
        if root is not None and any(
            os.path.lexists(os.path.join(root, path)) for path in candidates(token)
        ):
            continue
        if (path := candidates(token)[-1]) not in missed:
            missed.append(path)
    return missed


def mention_being_typed(before_cursor: str) -> str | None:
    """The path typed so far when the cursor ends a mention (`look at @src/ap`), for
    completion; None when it does not."""
    match = _TYPING.search(before_cursor)
    return match.group(1) if match else None
