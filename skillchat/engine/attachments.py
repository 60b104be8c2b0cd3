"""Active files: workspace files the user puts into the conversation themselves.

The user attaches with `@path` in a message, `/attach PATH` in the REPL or
`ask --attach PATH`; each file goes into the conversation once, with the message it
came with. How it goes in:

- With tools, as a `read_file` call and its result added after the user message,
  exactly as if the model had read the file (the same move as `/name` activation).
  Models are trained on tool results as the place file contents arrive, the result
  has the very shape a later `read_file` would get, so an `ALREADY_IN_CONTEXT` answer
  points at something the model recognises; the ledger tracks it by call id like any
  read; and the store can keep the chat without the file's content (it stubs
  `read_file` results as it stubs SKILL.md bodies).
- Without tools (no tool messages are possible), as `<file path="...">` blocks
  before the user's text in the user message itself.

An image (PNG, JPEG, GIF, WebP, by its bytes) goes the way engine/images.py says:
its note in the `read_file` result and the image in a user message after it, or,
without tools, its note as the block and the image as a part of the message.

A file whose unchanged content is already in context is not attached again; one
that changed on disk since is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillchat.engine.images import image_part
from skillchat.errors import FileAccessError
from skillchat.safe_io.read import FileText
from skillchat.tools.base import ToolContext, image_note
from skillchat.tools.workspace_tools import content_key, read_workspace
from skillchat.workspace.mentions import mentioned_paths

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image


def inline(
    files: Sequence[FileText | Image], text: str, vision: bool
) -> str | list[dict[str, Any]]:
    """The user message with `files` as blocks before `text` (tools off); with an
    image the model takes, as parts: that text, then the images."""
    blocks = [f'<file path="{f.path}">\n{_block(f, vision)}\n</file>' for f in files]
    joined = "\n\n".join([*blocks, text])
    sent = [f for f in files if not isinstance(f, FileText) and vision and f.data is not None]
    if not sent:
        return joined
    return [{"type": "text", "text": joined}, *(image_part(f) for f in sent)]


def _block(file: FileText | Image, vision: bool) -> str:
    return file.with_notice() if isinstance(file, FileText) else image_note(file, vision)


class Attachments:
    """The files queued for the next message (`add`), taken with its mentions (`take`)."""

    def __init__(self, context: ToolContext, notice: Callable[[str], None]) -> None:
        assert context.workspace is not None, "attachments need a workspace"
        self.context = context
        self.workspace = context.workspace
        self.notice = notice
        self.pending: list[str] = []

    def add(self, path: str) -> FileText | Image:
        """Queue `path` (absolute inside the workspace, or relative to it) for the next
        message. It is read now, so a bad path is a `FileAccessError` at once; it is
        read again when sent, so an edit in between is what the model gets."""
        file = read_workspace(self.context, self.workspace.relative(path))
        if file.path not in self.pending:
            self.pending.append(file.path)
        return file

    def take(self, text: str) -> list[FileText | Image]:
        """The queued files and those `text` mentions, read now, each once.

        A refused one (hidden, ignored, binary, gone...) and one already in context
        unchanged are left out, each with a notice: the message still goes.
        """
        paths = [*self.pending, *mentioned_paths(text, self.workspace.root)]
        self.pending = []
        files: list[FileText | Image] = []
        for path in paths:
            try:
                file = read_workspace(self.context, path)
            except FileAccessError as exc:
                self.notice(f"not attached: {path}: {exc.message}")
                continue
            if any(f.path == file.path for f in files):
                continue
            if self.context.ledger.holder(content_key(file)) is not None:
                self.notice(
                    f"{file.path} is already in the conversation, unchanged: not sent again"
                )
                continue
            files.append(file)
        return files
