"""Workspace files the user attached (`@path`, `/attach`, `--attach`) go in with the
message (engine/attachments.py says how): with tools as `read_file` calls and
results after it, without as blocks inlined in it; either way in the ledger, and
shown as cards."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillchat.engine.attachments import inline
from skillchat.engine.emit import FilesAttached, ToolRecord, ToolStarted
from skillchat.engine.events import ToolCall
from skillchat.engine.messages import assistant_message, new_call_id
from skillchat.engine.run_tools import keep_images
from skillchat.engine.turn import Step, StepContext, Turn
from skillchat.safe_io.read import FileText
from skillchat.tools.workspace_tools import READ_WORKSPACE_FILE, ReadWorkspaceFile
from skillchat.workspace.mentions import unmatched_paths

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image


class AttachFiles(Step):
    def before_message(self, chat: StepContext, turn: Turn) -> None:
        workspace = chat.context.workspace
        for path in unmatched_paths(turn.text, workspace.root if workspace else None):
            why = "nothing by that name in the workspace" if workspace else "no workspace"
            hint = "" if workspace else " (start in a git work tree, or give -w DIR)"
            chat.emit.notice(f"not attached: @{path}: {why}{hint}")
        if chat.attachments is None:
            return
        turn.result.attached = chat.attachments.take(turn.text)
        if turn.result.attached and not chat.tools_enabled:
            content = turn.content
            assert isinstance(content, str), "attachments come before any image part"
            turn.content = inline(turn.result.attached, content, chat.context.vision)

    def after_message(self, chat: StepContext, turn: Turn) -> None:
        if turn.result.attached:
            turn.result.tool_calls += _attached(chat, turn.result.attached)


def _attached(chat: StepContext, files: list[FileText | Image]) -> list[ToolRecord]:
    calls = [
        ToolCall(new_call_id(), READ_WORKSPACE_FILE, json.dumps({"path": f.path})) for f in files
    ]
    results = [ReadWorkspaceFile.result(f, chat.context.vision) for f in files]
    if chat.tools_enabled:
        chat.keep(assistant_message("", calls))
    records = []
    for call, result in zip(calls, results, strict=True):
        chat.emit(ToolStarted(call.name, call.arguments, call.id))
        chat.took(call.id, result)
        if chat.tools_enabled:
            chat.keep({"role": "tool", "tool_call_id": call.id, "content": result.content})
        records.append(
            ToolRecord(call.name, call.arguments, result, synthetic=True, call_id=call.id)
        )
        chat.tool_finished(records[-1])
    if chat.tools_enabled:
        keep_images(chat.keep, calls, records)
    if chat.context.workspace is not None:
        chat.emit(FilesAttached(str(chat.context.workspace.root), files))
    return records
