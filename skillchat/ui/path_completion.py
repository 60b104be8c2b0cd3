"""Tab completion of workspace paths in the REPL: after `@` in a message, and the
argument of `/attach`.

Each Tab lists one folder level (`src/` then `src/app.py`), from `Workspace.entries`,
so hidden and git-ignored files are never offered, as they could never be read. The
workspace is a callable: none (no workspace) means no completions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from skillchat.ui.safe import one_line
from skillchat.workspace.files import Workspace
from skillchat.workspace.mentions import mention_being_typed

ATTACH_COMMAND = "/attach "


class PathCompleter(Completer):
    """Completes `@partial/path` anywhere in a message and `/attach partial/path`."""

    def __init__(self, workspace: Callable[[], Workspace | None]) -> None:
        self.workspace = workspace

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        workspace = self.workspace()
        if workspace is None:
            return
        line = document.text_before_cursor
        if line.startswith(ATTACH_COMMAND) and " " not in line[len(ATTACH_COMMAND) :]:
            typed, prefix = line[len(ATTACH_COMMAND) :], ""
        elif (mention := mention_being_typed(line)) is not None:
            typed, prefix = mention, "@"
        else:
            return
        folder, _, stem = typed.rpartition("/")
        base = f"{folder}/" if folder else ""
        for name in workspace.entries(folder):
            if name.startswith(stem):
                yield Completion(
                    prefix + base + name,
                    start_position=-len(prefix + typed),
                    display=one_line(name),  # a file name can hold control characters
                    display_meta="folder" if name.endswith("/") else "",
                )
