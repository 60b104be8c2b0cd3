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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from skillchat.engine.turn import Step, Turn
from skillchat.tools.context import WORKSPACE_SOURCE

if TYPE_CHECKING:
    from skillchat.engine.loop import Chat
    from skillchat.workspace.index import FileIndex, PathGlobs


@dataclass
class _Globs:
    """One skill's globs and, per folder, how many of its files they match."""

    globs: PathGlobs
    hits: dict[str, int] = field(default_factory=dict)

    def count(self, index: FileIndex, folders: set[str]) -> None:
        for folder in folders:
            found = self.globs.count(folder, index.files(folder))
            if found:
                self.hits[folder] = found
            else:
                self.hits.pop(folder, None)


@dataclass
class _State:
    """What one chat's gate keeps between turns."""

    index: FileIndex | None
    globs: dict[tuple[str, ...], _Globs] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)  # workspace files read or attached


class PathsGate(Step):
    def __init__(self) -> None:
        self._chats: WeakKeyDictionary[Chat, _State] = WeakKeyDictionary()

    def after_message(self, chat: Chat, turn: Turn) -> None:
        if not chat.settings.paths_gate:
            return
        gated = {s.name: p for s in chat.registry.skills.values() if (p := s.paths) is not None}
        if not gated and not chat.unlisted:
            return
        # The index and its walkers (four modules) load only for a skill with `paths`.
        from skillchat.workspace.index import PathGlobs

        state = self._state(chat)
        self._note_reads(state, turn)
        changed = state.index.refresh() if state.index is not None else set()
        for patterns in set(gated.values()) - state.globs.keys():  # new globs: all folders
            state.globs[patterns] = _Globs(PathGlobs(patterns))
            if state.index is not None:
                state.globs[patterns].count(state.index, set(state.index.folders()))
        for patterns in list(state.globs):
            if patterns not in gated.values():
                del state.globs[patterns]
            elif changed and state.index is not None:
                state.globs[patterns].count(state.index, changed)
        unlisted = frozenset(n for n, p in gated.items() if not _matched(state, p))
        if unlisted != chat.unlisted:
            chat.list_skills(unlisted)

    def before_request(self, chat: Chat, turn: Turn) -> None:
        if chat in self._chats:  # files the model read this turn count from the next
            self._note_reads(self._chats[chat], turn)

    def _state(self, chat: Chat) -> _State:
        if chat not in self._chats:
            from skillchat.workspace.index import FileIndex

            workspace = chat.context.workspace
            self._chats[chat] = _State(FileIndex(workspace) if workspace is not None else None)
        return self._chats[chat]

    @staticmethod
    def _note_reads(state: _State, turn: Turn) -> None:
        for record in turn.result.tool_calls:
            key = record.result.context_key
            if key is not None and key.source == WORKSPACE_SOURCE:
                state.touched.add(key.path)


def _matched(state: _State, patterns: tuple[str, ...]) -> bool:
    globs = state.globs[patterns]
    return bool(globs.hits) or any(globs.globs.matches(path) for path in state.touched)
