"""Turn a stream of `Delta`s into one `Reply`: the only place tool calls are assembled.

Providers disagree on how parallel tool calls are streamed. OpenAI gives each call
its own `index` and sends `id` only on a call's first fragment; some servers report
every call at index 0 with distinct ids; some repeat the id (or the name) on every
fragment. The rules below accept all of these:

- a fragment whose `id` is new starts a new call, even at an index already in use;
- a fragment whose `id` is known continues that call;
- a fragment without `id` continues the latest call at its `index` (the last call
  of all when `index` is None), unless there is none or it names a different
  tool: then it starts a call (servers that send no ids at all).

Names arrive whole; a repeated name is ignored, never appended.

`Assembler` is incremental so a caller interrupted mid-reply (Ctrl-C) still holds
what arrived; `assemble` is the whole loop for callers that are not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from skillchat.engine.events import Delta, Reply, ToolCall, ToolCallFragment, Usage


@dataclass
class _Partial:
    """One tool call as its fragments arrive."""

    id: str | None
    index: int | None
    name: str = ""
    # Pieces, joined once in `reply()`: `+=` on a growing string made 5 MB of
    # arguments in 100-byte fragments quadratic.
    pieces: list[str] = field(default_factory=list)


class Assembler:
    """Accumulates deltas; `reply()` can be called at any point for the state so far."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: list[_Partial] = []
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._thinking: dict[int | None, dict[str, Any]] = {}
        self.size = 0  # characters of text and arguments so far (the reply size limit)

    def add(self, delta: Delta) -> str | None:
        """Take one delta; return its text (for display) if it has any."""
        for fragment in delta.tool_calls:
            self._add_fragment(fragment)
        if delta.finish_reason:
            self._finish_reason = delta.finish_reason
        if delta.usage is not None:
            self._usage = delta.usage
        if delta.thinking is not None:
            self._add_thinking(delta.thinking)
        if delta.text:
            self._text.append(delta.text)
            self.size += len(delta.text)
            return delta.text
        return None

    def _add_thinking(self, piece: dict[str, Any]) -> None:
        """A thinking block's start, text or signature, by the block's index."""
        start = piece.get("start")
        if start == "redacted_thinking":
            self._thinking[piece.get("index")] = {"type": start, "data": piece.get("data", "")}
            return
        block = self._thinking.setdefault(
            piece.get("index"), {"type": "thinking", "thinking": "", "signature": ""}
        )
        for name in ("thinking", "signature"):
            if isinstance(piece.get(name), str):
                block[name] += piece[name]
                self.size += len(piece[name])

    def _add_fragment(self, fragment: ToolCallFragment) -> None:
        call = self._find(fragment)
        renamed = call is not None and bool(call.name and fragment.name != call.name)
        if call is None or (fragment.id is None and fragment.name and renamed):
            call = _Partial(fragment.id, fragment.index)
            self._calls.append(call)
        if fragment.name and not call.name:
            call.name = fragment.name
        if fragment.arguments:
            call.pieces.append(fragment.arguments)
            self.size += len(fragment.arguments)

    def _find(self, fragment: ToolCallFragment) -> _Partial | None:
        if fragment.id is not None:
            return next((c for c in self._calls if c.id == fragment.id), None)
        if fragment.index is None:
            return self._calls[-1] if self._calls else None
        return next((c for c in reversed(self._calls) if c.index == fragment.index), None)

    def reply(self) -> Reply:
        """The reply so far. Missing ids get `call_<n>`; empty arguments become `{}`
        (a call of a tool without parameters, which some models send as "")."""
        calls: list[ToolCall] = []
        for n, c in enumerate(self._calls):
            arguments = "".join(c.pieces)
            calls.append(
                ToolCall(c.id or f"call_{n}", c.name, arguments if arguments.strip() else "{}")
            )
        return Reply(
            text="".join(self._text),
            tool_calls=calls,
            finish_reason=self._finish_reason,
            usage=self._usage,
            thinking_blocks=list(self._thinking.values()),
        )


def assemble(deltas: Iterable[Delta], on_text: Callable[[str], None] | None = None) -> Reply:
    """Consume `deltas` into a Reply, calling `on_text` with each piece of text as it arrives."""
    assembler = Assembler()
    for delta in deltas:
        text = assembler.add(delta)
        if text and on_text is not None:
            on_text(text)
    return assembler.reply()
