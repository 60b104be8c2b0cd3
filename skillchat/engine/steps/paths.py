"""Claude Code's `paths`: a skill that declares globs is in the catalog only while
the workspace has a file they match, or one was read or attached in this chat
(skills/paths.py says how the globs read). `/name` works regardless.

Checked once a turn, after the attached files are known and before the system
prompt is built: the workspace's file index (workspace/index.py) stats its folders
and lists again only those that changed, and each skill's matches are counted
per folder, so only the changed folders are matched again. With no skill that
declares `paths` nothing is looked at; without a workspace no file can match.
`eval` turns the gate off (`Settings.paths_gate`): every skill is in its catalog.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillchat.engine.turn import Step, StepContext, Turn

if TYPE_CHECKING:
    from skillchat.engine.emit import ToolRecord
    from skillchat.engine.steps.paths_state import GateState


class PathsGate(Step):
    """One chat's gate: what it keeps between turns is that chat's."""

    def __init__(self) -> None:
        self._state: GateState | None = None  # made at the first turn a skill has `paths`

    def after_message(self, chat: StepContext, turn: Turn) -> None:
        if not chat.settings.skills.paths_gate:
            return
        gated = {s.name: p for s in chat.registry.skills.values() if (p := s.paths) is not None}
        if not gated and not chat.unlisted:
            return
        # The index and its walkers (four modules) load only for a skill with `paths`,
        # and the gate's state (steps/paths_state.py) with them.
        from skillchat.engine.steps.paths_state import GateState, Globs
        from skillchat.workspace.index import FileIndex, PathGlobs

        if self._state is None:
            workspace = chat.context.workspace
            self._state = GateState(FileIndex(workspace) if workspace is not None else None)
        state = self._state
        for record in turn.result.tool_calls:  # files attached with this message
            state.note(record)
        changed = state.index.refresh() if state.index is not None else set()
        for patterns in set(gated.values()) - state.globs.keys():  # new globs: all folders
            state.globs[patterns] = Globs(PathGlobs(patterns))
            if state.index is not None:
                state.globs[patterns].count(state.index, set(state.index.folders()))
        for patterns in list(state.globs):
            if patterns not in gated.values():
                del state.globs[patterns]
            elif changed and state.index is not None:
                state.globs[patterns].count(state.index, changed)
        unlisted = frozenset(n for n, p in gated.items() if not state.matched(p))
        if unlisted != chat.unlisted:
            chat.list_skills(unlisted)

    def after_tool(self, chat: StepContext, record: ToolRecord) -> None:
        if self._state is not None:  # a file the model read counts from the next turn
            self._state.note(record)
