"""`read_file`: the model's read-only window on the user's workspace.

    read_file(path, max_bytes?,
              offset?)      -> {"success": true,
                                     "file": {"path", "sizeBytes", "content", "isTruncated",
                                              "nextOffset" (only when cut),
                                              "mimeType", "width", "height" (an image's:
                                              `content` describes it, the image
                                              goes with the result)}}
                                 | {"success": false, "errorCode": CODE, "errors": [message]}

The shapes and the active-files rule are a contract (docs/tools.md): a file whose unchanged content
is already in the conversation (attached by the user, or returned by an earlier
read that is still in context) is not sent again but answered `ALREADY_IN_CONTEXT`
with the contract's message; a file changed on disk since is a new content hash and is
served afresh. Error codes: INVALID_ARGUMENT, NOT_FOUND, ALREADY_IN_CONTEXT, INTERNAL_ERROR,
PATH_TRAVERSAL, UNSUPPORTED_FILE, PERMISSION_DENIED. The parameter is `max_bytes`, like
read_file_in_skill's; the spelling `maxBytes` is accepted too.

Offered only in a chat with a workspace. Every read goes through `Workspace.read`,
hence `skillchat/safe_io/read.py`. Stored in the chat as a stub (path, size, cut flag): the
files are the user's, and a resumed chat must read the current version.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skillchat.errors import FileAccessError
from skillchat.safe_io.read import FileText
from skillchat.tools.base import (
    MAX_BYTES_SCHEMA,
    OFFSET_SCHEMA,
    Stored,
    Tool,
    ToolContext,
    ToolResult,
    function_schema,
    image_limits,
    image_result,
    loads_or_none,
    max_bytes_arg,
    offset_arg,
    result_cap,
    string_arg,
    to_json,
)
from skillchat.tools.context import WORKSPACE_SOURCE, ContentKey

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image

READ_WORKSPACE_FILE = "read_file"
FILE_STUB_NOTE = "file content not stored; call read_file again if needed"


def content_key(file: FileText | Image) -> ContentKey:
    return ContentKey(WORKSPACE_SOURCE, file.path, file.sha256, file.offset)


def read_workspace(
    context: ToolContext, path: str, limit: int | None = None, offset: int = 0
) -> FileText | Image:
    """The file under every workspace rule from `offset`, cut at `limit` (at most
    `result_cap`), or the image it is. Raises FileAccessError; the chat must have a
    workspace."""
    assert context.workspace is not None, "read_file is offered only with a workspace"
    most, images = result_cap(context.settings), image_limits(context.settings.limits)
    limit = min(limit or most, most)
    return context.workspace.read_any(path, limit=limit, offset=offset, images=images)


class ReadWorkspaceFile(Tool):
    """Validate, check the active files, read, or say why not."""

    name = READ_WORKSPACE_FILE
    schema = function_schema(
        READ_WORKSPACE_FILE,
        "Read a file of the user's workspace (their project folder): text, or an "
        "image (PNG, JPEG, GIF, WebP). Read-only. Files already in the conversation "
        "(attached by the user, or read before and unchanged) are not sent again: "
        "reuse that content.",
        {
            "path": {
                "type": "string",
                "description": "Path relative to the workspace root, e.g. 'src/app.py'.",
            },
            "max_bytes": MAX_BYTES_SCHEMA,
            "offset": OFFSET_SCHEMA,
        },
        ["path"],
    )

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        return context.workspace is not None

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        """The error payload (docs/tools.md)."""
        content = to_json({"success": False, "errorCode": code, "errors": [message]})
        return ToolResult(content, is_error=True, error_code=code, preview=message)

    @classmethod
    def result(cls, file: FileText | Image, vision: bool) -> ToolResult:
        """The success payload for `file`, keyed for the ledger (attachments
        are put in context with it too). An image's `content` is its note, with
        its type and dimensions beside it; the image goes with the result when the
        model takes images (`vision`)."""
        if not isinstance(file, FileText):  # an Image
            note = image_result(file, vision, content_key(file))
            described = {"mimeType": file.mime, "width": file.width, "height": file.height}
            image = {"path": file.path, "sizeBytes": file.size, **described}
            image |= {"content": note.content, "isTruncated": False}
            return replace(note, content=to_json({"success": True, "file": image}))
        payload: dict[str, Any] = {
            "success": True,
            "file": {
                "path": file.path,
                "sizeBytes": file.size,
                "content": file.text,
                "isTruncated": file.truncated,
            },
        }
        if file.truncated:  # where to read on: `content` stays the file's text
            payload["file"]["nextOffset"] = file.end
        return ToolResult(
            to_json(payload),
            preview=file.text,
            size=file.size,
            truncated=file.truncated,
            context_key=content_key(file),
        )

    def _already(self, path: str) -> ToolResult:
        return self.error(
            "ALREADY_IN_CONTEXT",
            f"File '{path}' is already present in activeFiles for this session; "
            "reuse that content.",
        )

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        """A part of a file whose text is in context is still a repeat: with
        `max_bytes` the first read's key is checked first, and with `offset` the
        whole file's (a piece after a cut first read is other content)."""
        if "max_bytes" not in args and "maxBytes" in args:
            args["max_bytes"] = args["maxBytes"]
        path, max_bytes, offset = string_arg(args, "path"), max_bytes_arg(args), offset_arg(args)
        if offset or (max_bytes is not None and max_bytes < result_cap(context.settings)):
            # Failing here proves nothing (the tail may be what is binary): read on.
            with contextlib.suppress(FileAccessError):
                full = read_workspace(context, path)
                held = context.ledger.holder(content_key(full)) is not None
                if held and not (offset and full.truncated):
                    return self._already(full.path)
        try:
            file = read_workspace(context, path, max_bytes, offset)
        except FileAccessError as exc:
            if exc.code == "NOT_FOUND":  # the contract's wording: the model should ask
                return self.error(
                    "NOT_FOUND",
                    f"File '{path}' is not available in activeFiles or the workspace. "
                    "Ask the user to attach it if needed.",
                )
            return self.error(exc.code, exc.message)
        if context.ledger.holder(content_key(file)) is not None:
            return self._already(file.path)
        return self.result(file, context.vision)

    @classmethod
    def stored(cls, args: dict[str, Any], content: Any) -> Stored:
        """A success keeps its path, size and cut flag (an image's type and
        dimensions too); an error is kept whole."""
        result = loads_or_none(content)
        file = result.get("file") if isinstance(result, dict) else None
        if isinstance(file, dict) and result.get("success") is True:
            kept = {k: file.get(k) for k in ("path", "sizeBytes", "isTruncated")}
            kept |= {k: file[k] for k in ("mimeType", "width", "height") if k in file}
            return Stored(to_json({"success": True, "file": kept, "stub": FILE_STUB_NOTE}))
        return Stored(content)
