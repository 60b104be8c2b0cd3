"""One request of the loop: stream a reply from the backend and assemble it.

The reply is retried while nothing of it was shown (engine/retry.py); its text is
emitted as it arrives, its tool calls assembled from deltas (engine/assemble.py).
It is bounded in time (`reply_timeout`, in the backend), silence (`timeout`) and
size (MAX_REPLY_CHARS); on Ctrl-C or a failure mid-reply the text shown is kept in
the transcript, marked. A model's extended thinking is not shown: one line says
how much there was.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from skillchat.engine.assemble import Assembler
from skillchat.engine.backends.base import Backend
from skillchat.engine.emit import Emitter, TextDelta, TextEnd, TextEnded, Waiting
from skillchat.engine.events import Delta, Reply
from skillchat.engine.messages import Keep, assistant_message
from skillchat.engine.retry import stream_with_retries
from skillchat.errors import ProviderError

INTERRUPTED_MARK = "[interrupted]"
CUT_MARK = "[cut off]"
# Characters of text and arguments one reply may carry: above any model's output
# limit (128k tokens is ~500k characters), far below what would exhaust memory.
MAX_REPLY_CHARS = 1_000_000


def stream_reply(
    backend: Backend,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    emit: Emitter,
    keep: Keep,
    max_retries: int,
) -> Reply:
    """One reply to `messages` (what of the transcript fits), its text emitted as it
    streams; what was shown of a reply that failed or was stopped is given to `keep`,
    marked."""
    assembler = Assembler()
    how: TextEnd = "failed"

    def on_retry(attempt: int, delay: float, error: ProviderError) -> None:
        emit.notice(f"{error}; retrying in {delay:.1f}s ({attempt}/{max_retries})")

    deltas: Generator[Delta, None, None] | None = None
    try:
        emit(Waiting(tools is not None))
        deltas = stream_with_retries(
            lambda: backend.stream(messages, tools),
            max_retries=max_retries,
            on_retry=on_retry,
        )
        thought = 0  # characters of thinking, told as one line once the reply goes on
        for delta in deltas:
            piece = assembler.add(delta)
            if delta.thinking is not None:
                thought += len(delta.thinking.get("thinking", ""))
            elif thought and (piece or delta.tool_calls or delta.finish_reason):
                emit.notice(f"thinking… {thought:,} characters (not shown)")
                thought = 0
            if piece:
                emit(TextDelta(piece))
            if assembler.size > MAX_REPLY_CHARS:
                deltas.close()
                raise ProviderError(
                    f"the reply passed {MAX_REPLY_CHARS:,} characters: stopped, "
                    "keeping what arrived"
                )
        reply = assembler.reply()
        how = "narration" if reply.tool_calls else "answer"
        return reply
    except KeyboardInterrupt:
        how = "interrupted"
        raise
    finally:
        # Closed here, on this thread, whatever stopped the reply: a stream left to the
        # garbage collector closes its HTTP response wherever a collection strikes,
        # once inside httpcore's pool lock on the next request's way out (a deadlock).
        if deltas is not None:
            deltas.close()
        if how in ("failed", "interrupted") and (shown := assembler.reply().text):
            mark = INTERRUPTED_MARK if how == "interrupted" else CUT_MARK
            keep(assistant_message(f"{shown}\n\n{mark}", []), interrupted=True)
        emit(TextEnded(how))
