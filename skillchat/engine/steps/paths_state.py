"""What the `paths` gate (steps/paths.py) keeps between a chat's turns: each
skill's globs and their matches per folder, and the workspace files read or
attached. Its own module, imported at the first turn a skill has `paths`: its two
dataclasses cost every start that has none (their methods compiled at import)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skillchat.tools.context import WORKSPACE_SOURCE

if TYPE_CHECKING:
    from skillchat.engine.emit import ToolRecord
    from skillchat.workspace.index import FileIndex, PathGlobs


@dataclass
class Globs:
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
class GateState:
    """What the gate keeps between turns."""

    index: FileIndex | None
    globs: dict[tuple[str, ...], Globs] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)  # workspace files read or attached

    def note(self, record: ToolRecord) -> None:
        key = record.result.context_key
        if key is not None and key.source == WORKSPACE_SOURCE:
            self.touched.add(key.path)

    def matched(self, patterns: tuple[str, ...]) -> bool:
        globs = self.globs[patterns]
        return bool(globs.hits) or any(globs.globs.matches(path) for path in self.touched)
