"""`read_file`: the model's read-only window on the user's workspace (seed 002).

    read_file(path, max_bytes?) -> {"success": true,
                                     "file": {"path", "sizeBytes", "content", "isTruncated"}}
                                 | {"success": false, "errorCode": CODE, "errors": [message]}

The shapes and the ActiveFiles rule are seed 002's: a file whose unchanged content
is already in the conversation (attached by the user, or returned by an earlier
read that is still in context) is not sent again but answered `ALREADY_IN_CONTEXT`
with the seed's message; a file changed on disk since is a new content hash and is
served afresh. Error codes are DESIGN §5's (seed 002's four plus PATH_TRAVERSAL,
TOO_LARGE, UNSUPPORTED_FILE, PERMISSION_DENIED). The parameter is `max_bytes`, like
read_file_in_skill's; seed 002's spelling `maxBytes` is accepted too.

Every read goes through `Workspace.read`, hence `skillchat/files.py`; `run` never
raises.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from skillchat.errors import FileAccessError
from skillchat.files import FileText
from skillchat.tools.context import WORKSPACE_SOURCE, ContentKey, ContextLedger
from skillchat.tools.skill_tools import (
    ToolArgumentError,
    ToolResult,
    max_bytes_arg,
    parse_arguments,
    string_arg,
)
from skillchat.workspace.files import Workspace

READ_WORKSPACE_FILE = "read_file"

WORKSPACE_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": READ_WORKSPACE_FILE,
        "description": "Read a text file of the user's workspace (their project folder). "
        "Read-only. Files already in the conversation (attached by the user, or read "
        "before and unchanged) are not sent again: reuse that content.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path relative to the workspace root, e.g. 'src/app.py'.",
                },
                "max_bytes": {
                    "type": "integer",
                    "description": "Optional: return at most this many bytes.",
                },
            },
            "required": ["path"],
        },
    },
}


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def error_result(code: str, message: str) -> ToolResult:
    """Seed 002's error payload."""
    content = _json({"success": False, "errorCode": code, "errors": [message]})
    return ToolResult(content, is_error=True, error_code=code, preview=message)


def already_in_context(path: str) -> ToolResult:
    return error_result(
        "ALREADY_IN_CONTEXT",
        f"File '{path}' is already present in activeFiles for this session; reuse that content.",
    )


def file_result(file: FileText) -> ToolResult:
    """Seed 002's success payload for `file`, keyed for the ledger."""
    payload = {
        "success": True,
        "file": {
            "path": file.path,
            "sizeBytes": file.size,
            "content": file.text,
            "isTruncated": file.truncated,
        },
    }
    return ToolResult(
        _json(payload),
        preview=file.text,
        size=file.size,
        truncated=file.truncated,
        context_key=content_key(file),
    )


def content_key(file: FileText) -> ContentKey:
    return ContentKey(WORKSPACE_SOURCE, file.path, file.sha256)


def _access_error(exc: FileAccessError, path: object) -> ToolResult:
    if exc.code == "NOT_FOUND":  # the seed's wording: the model should ask, not guess
        return error_result(
            "NOT_FOUND",
            f"File '{path}' is not available in activeFiles or the workspace. "
            "Ask the user to attach it if needed.",
        )
    return error_result(exc.code, exc.message)


class WorkspaceTools:
    """`read_file` over one workspace, with the conversation's ledger."""

    def __init__(self, workspace: Workspace, ledger: ContextLedger, *, max_bytes: int) -> None:
        self.workspace = workspace
        self.ledger = ledger
        self.max_bytes = max_bytes

    def run(self, raw_arguments: str) -> ToolResult:
        """Run `read_file(raw_arguments)`; every failure is an error result."""
        try:
            args = parse_arguments(raw_arguments)
            if "max_bytes" not in args and "maxBytes" in args:
                args["max_bytes"] = args["maxBytes"]
            return self.read_file(string_arg(args, "path"), max_bytes_arg(args))
        except ToolArgumentError as exc:
            return error_result(
                "INVALID_ARGUMENT", f"Invalid arguments for {READ_WORKSPACE_FILE}: {exc}"
            )
        except Exception as exc:  # a bug must not end the chat; the model can go on
            return error_result(
                "INTERNAL_ERROR", f"{READ_WORKSPACE_FILE} failed: {type(exc).__name__}: {exc}"
            )

    def read(self, path: str, limit: int | None = None) -> FileText:
        """The file under every workspace rule, cut at `limit` (at most the setting)."""
        return self.workspace.read(path, limit=min(limit or self.max_bytes, self.max_bytes))

    def read_file(self, path: str, max_bytes: int | None = None) -> ToolResult:
        """Seed 002's execution rules: validate, ActiveFiles, read, or say why not.

        A shorter read of a file whose whole text is in context is still a repeat,
        so with `max_bytes` the full read's key is checked first.
        """
        if max_bytes is not None and max_bytes < self.max_bytes:
            # Failing here proves nothing (the tail may be what is binary): read on.
            with contextlib.suppress(FileAccessError):
                full = self.read(path)
                if self.ledger.holder(content_key(full)) is not None:
                    return already_in_context(full.path)
        try:
            file = self.read(path, max_bytes)
        except FileAccessError as exc:
            return _access_error(exc, path)
        if self.ledger.holder(content_key(file)) is not None:
            return already_in_context(file.path)
        return file_result(file)
