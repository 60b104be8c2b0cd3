"""What file content the conversation already holds, so it is never sent twice.

A tool result that would repeat, byte for byte, something still in the context
(same skill or workspace, same path, same content hash) wastes tokens and invites the model to
loop; the tools answer `ALREADY_IN_CONTEXT` instead (docs/tools.md). The ledger keys each
piece of content by the tool call that delivered it: when that message leaves the
context (elided, cut, or rebuilt from storage as a stub) the caller forgets the
call and the content is served again.
"""

from __future__ import annotations

from dataclasses import dataclass

WORKSPACE_SOURCE = "@workspace"


@dataclass(frozen=True)
class ContentKey:
    """One piece of file content as the model received it."""

    source: str  # the skill's name, or WORKSPACE_SOURCE (no skill name has an '@')
    path: str  # normalised relative path: get_skill's is the SKILL.md's own
    sha256: str  # of the file's bytes that were read (a shorter read is other content)
    offset: int = 0  # where those bytes start (a read from elsewhere is other content)


class ContextLedger:
    """Content currently in the conversation, by the id of the tool call that holds it."""

    def __init__(self) -> None:
        self._by_call: dict[str, ContentKey] = {}

    def holder(self, key: ContentKey) -> str | None:
        """The tool call id whose result already holds `key`, if any still does."""
        return next((call for call, held in self._by_call.items() if held == key), None)

    def add(self, call_id: str, key: ContentKey) -> None:
        self._by_call[call_id] = key

    def forget(self, call_id: str) -> None:
        """The result of `call_id` left the context: its content may be served again."""
        self._by_call.pop(call_id, None)
