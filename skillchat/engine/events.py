"""What a model backend hands the loop: provider-neutral pieces of a streamed reply.

Both backends (openai SDK, litellm) translate their chunks into `Delta`s; one
`assemble` step (engine/assemble.py) turns deltas into a `Reply`, so tool-call
assembly from fragments lives in exactly one place whatever the provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, eq=False)  # never compared: see engine/emit.py
class ToolCallFragment:
    """One piece of one tool call as streamed: any field may be missing."""

    index: int | None
    id: str | None = None
    name: str | None = None
    arguments: str | None = None


@dataclass(frozen=True)
class Usage:
    """One request's token counts (or a turn's sum), and its cost when known.

    `prompt_tokens` counts every input token; `cached_tokens` of them were read from
    the provider's prompt cache and `cache_write_tokens` written to it (Anthropic
    bills them at a tenth and at 1.25 times the input price: engine/pricing.py)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, eq=False)  # never compared: see engine/emit.py
class Delta:
    """One streamed chunk, reduced to what skillchat uses."""

    text: str | None = None
    tool_calls: tuple[ToolCallFragment, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    # A piece of a thinking block (extended thinking, Anthropic's backend): its
    # `index` and one of `start` ("thinking" or "redacted_thinking", with `data`),
    # `thinking` text or `signature`; engine/assemble.py puts the blocks together.
    thinking: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call: `arguments` is the raw JSON text the model sent."""

    id: str
    name: str
    arguments: str


@dataclass
class Reply:
    """A whole assistant turn."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    # The reply's thinking blocks with their signatures, sent back as they came
    # while its tool round goes on (the Messages API requires it).
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)
