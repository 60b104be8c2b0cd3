"""Compaction: older turns replaced by a summary the model writes, the activated
skills' instructions put back after it.

Eliding old tool results (engine/context_fit.py) is the cheap first step and runs
before every request; compaction is for a chat whose *text* no longer fits. It runs
on `/compact`, and before a request when `auto_compact` is on and the chat, after
elision, still passes the context budget (three quarters of the model's window,
engine/context_window.py), i.e. where the oldest turns would otherwise be left out.

What it does:

1. Keep the last `KEEP_TURNS` turns verbatim (a turn is a user message and what
   follows it); the rest is "older".
2. One extra request, no tools offered: the older turns as a plain-text transcript
   (tool results cut, the tool protocol cannot be refused by any chat template),
   and an instruction to summarise. Nothing changes until a usable summary is back:
   a failure, a reply cut at its length limit, an empty reply or Ctrl-C leave the
   chat exactly as it was, with one line saying so.
3. The older turns become three parts: a user message asking for the summary
   (`COMPACTED_MARK`), the model's summary as its answer, and, with tools, that
   answer's `get_skill` calls re-attaching the activated skills' instructions as
   their results: the most recently used first, within `compact_skills_tokens`
   (and a quarter of the budget). A body alone over the budget is re-attached cut,
   with a notice; skills that no longer fit are only named (the model can load
   them again). The re-attached bodies are in the ledger like any get_skill result.
   They are loaded by the chat's own get_skill, so a body's inline commands run
   again under the chat's consent and policy (tools/inline_commands.py), as when the
   model loaded it; never its forker (a `context: fork` skill is put back, not run).

The messages stay a valid OpenAI conversation (user, assistant, tool results, then
the kept turns), and the recorder saves the new part in one write (chats/store.py
`append_compaction`), so a resumed chat is the compacted one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillchat.config import Settings
from skillchat.engine.assemble import Assembler
from skillchat.engine.backends.base import Backend
from skillchat.engine.context_window import CHARS_PER_TOKEN
from skillchat.engine.emit import Compacted, Emitter
from skillchat.engine.events import ToolCall
from skillchat.engine.images import without_image_data
from skillchat.engine.messages import assistant_message, clean_value, message_size, new_call_id
from skillchat.engine.retry import stream_with_retries
from skillchat.errors import ProviderError
from skillchat.tools.base import Tool, ToolContext, to_json
from skillchat.tools.skill_tools import GET_SKILL, GetSkill

# Turns kept verbatim. The turn in progress must stay whole (its calls and results
# pair up, and the model is mid-task); the one before usually holds what the user's
# next words refer to ("that", "again"). More would eat the room compaction frees on
# a small local window, so when the two take over half the budget only the last stays.
KEEP_TURNS = 2
# Characters of one tool result in the transcript sent for summary: enough for a
# result's gist; the whole of it (a file, a skill body) is not what a summary keeps.
RESULT_CHARS = 1_000
# The transcript of older turns takes at most this share of the budget, so the
# summary request fits wherever the chat did, with room for the reply.
TRANSCRIPT_SHARE = 0.75
COMPACTED_MARK = (
    "[compacted] Summarise our conversation so far: your summary replaces the earlier "
    "messages to save context."
)
SUMMARY_RULES = """\
You summarise a conversation between a user and an assistant that uses Agent Skills, \
so that it can go on from your summary alone, in place of these messages. Keep: what \
the user wants and asked, decisions made and answers given, facts, names, numbers, \
file paths and results the rest of the chat may need, which skills were used and for \
what, and any unfinished task with its next step. Leave out greetings and the text of \
skill instructions (they are given again after the summary). Plain prose or short \
bullet points, at most about 400 words. Answer with the summary only."""
SKILL_CUT = (
    "[cut to fit the re-attach budget after compaction (compact_skills_tokens): "
    "call get_skill again for the whole instructions]"
)


@dataclass
class Outcome:
    """What a compaction did: the notice's numbers, and what it could not re-attach."""

    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    skills: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # activated, not re-attached

    def notice(self, auto: bool) -> str:
        how = "the chat passed its context budget: compacted" if auto else "compacted"
        line = (
            f"{how} {self.messages_before} messages (~{self.tokens_before:,} tokens) → "
            f"{self.messages_after} (~{self.tokens_after:,} tokens), older turns replaced "
            "by the model's summary"
        )
        if self.tokens_after >= self.tokens_before:
            line += "; nothing was gained: the summary is no shorter than the turns it replaced"
        if self.skills:
            line += "; skills re-attached: " + ", ".join(self.skills)
        if self.cut:
            line += "; cut to the re-attach budget: " + ", ".join(self.cut)
        if self.left:
            line += "; not re-attached (over budget, the model can load them again): "
            line += ", ".join(self.left)
        return line

    def info(self) -> dict[str, Any]:
        """What the store keeps about it, on the compaction's first message."""
        return {
            "messages_before": self.messages_before,
            "tokens_before": self.tokens_before,
            "skills": self.skills,
        }


def _tokens(system: str | None, messages: list[dict[str, Any]]) -> int:
    """The estimate the budget uses (engine/context_window.py): characters / 3."""
    size = sum(message_size(m) for m in messages)
    size += message_size({"role": "system", "content": system}) if system else 0
    return size // CHARS_PER_TOKEN


def kept_from(messages: list[dict[str, Any]], budget: int) -> int:
    """Where the kept turns start: the last KEEP_TURNS user messages, or only the last
    when those turns take more than half of `budget`. 0 when nothing is older."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if len(starts) <= 1:
        return 0
    start = starts[max(0, len(starts) - KEEP_TURNS)]
    if sum(message_size(m) for m in messages[start:]) > budget // 2:
        start = starts[-1]
    return start


def only_a_summary(older: list[dict[str, Any]]) -> bool:
    """True when the older part is nothing but the previous compaction's messages."""
    return older[0].get("content") == COMPACTED_MARK and not any(
        m.get("role") == "user" for m in older[1:]
    )


def transcript(older: list[dict[str, Any]], limit: int) -> str:
    """The older turns as plain text for the summary request: the latest part that
    fits in `limit` characters, tool results cut to RESULT_CHARS."""
    names = {
        call["id"]: call["function"]["name"] for m in older for call in m.get("tool_calls") or []
    }
    blocks: list[str] = []
    for message in older:
        content = without_image_data(message.get("content"))
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message["role"] == "tool":
            tool = names.get(message.get("tool_call_id", ""), "tool")
            if tool == GET_SKILL:  # instructions: put back after the summary, not summarised
                text = "(the skill's instructions)"
            cut = text[:RESULT_CHARS] + ("…" if len(text) > RESULT_CHARS else "")
            blocks.append(f"[result of {tool}]: {cut}")
            continue
        if text and text != COMPACTED_MARK:
            blocks.append(f"{message['role']}: {text}")
        for call in message.get("tool_calls") or []:
            function = call["function"]
            blocks.append(f"[assistant called {function['name']}({function.get('arguments')})]")
    kept: list[str] = []
    size = 0
    for block in reversed(blocks):
        size += len(block) + 2
        if size > limit and kept:
            kept.append(f"[{len(blocks) - len(kept)} earlier entries not shown]")
            break
        kept.append(block[:limit])
    return "\n\n".join(reversed(kept))


def recent_skills(messages: list[dict[str, Any]], activated: list[str]) -> list[str]:
    """The activated skills, the most recently loaded (by a get_skill call) first;
    those loaded before the transcript began (a resumed chat) after, newest first."""
    order: list[str] = []
    for message in reversed(messages):
        for call in reversed(message.get("tool_calls") or []):
            if call["function"]["name"] != GET_SKILL:
                continue
            try:
                name = json.loads(call["function"].get("arguments") or "{}").get("skill_name")
            except (ValueError, AttributeError):
                continue
            if name in activated and name not in order:
                order.append(name)
    return order + [name for name in reversed(activated) if name not in order]


class Compactor:
    """One chat's compaction: the summary request and the new head of the transcript."""

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        context: ToolContext,
        emit: Emitter,
        chat_get_skill: Tool | None = None,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.context = context
        runner = chat_get_skill.runner if isinstance(chat_get_skill, GetSkill) else None
        self.get_skill = GetSkill(runner)
        self.emit = emit
        self.notice = emit.notice

    def compact(
        self,
        messages: list[dict[str, Any]],
        system: str | None,
        budget: int,
        *,
        tools: bool,
        auto: bool = False,
    ) -> Outcome | None:
        """Replace the older turns of `messages` (in place) by a summary and the
        re-attached skills; None, with one line said, when nothing changed."""
        start = kept_from(messages, budget)
        older = messages[:start]
        if not older or only_a_summary(older):
            self.notice(
                f"nothing to compact: the chat has no turns before its last {KEEP_TURNS}"
                if not auto
                else "the chat passed its context budget and has nothing older to compact"
            )
            return None
        summary = self._summary(older, budget)
        if summary is None:
            return None
        before = _tokens(system, messages)
        outcome = Outcome(len(messages), 0, before, 0)
        for message in older:
            if message.get("role") == "tool":
                self.context.ledger.forget(message["tool_call_id"])
        head = self._head(summary, messages, budget, outcome, tools)
        kept = messages[start:]
        messages[:] = head + kept
        outcome.messages_after = len(messages)
        outcome.tokens_after = _tokens(system, messages)
        self.emit(Compacted(head, len(kept), outcome.info()))
        gained = outcome.tokens_after < outcome.tokens_before
        self.emit.notice(outcome.notice(auto), done=gained and not auto)
        return outcome

    def _summary(self, older: list[dict[str, Any]], budget: int) -> str | None:
        """The model's summary of `older`, or None (said) when there is none to use."""
        what = f"summarising {len(older)} earlier messages"
        self.notice(f"compacting: the model is {what}…")
        text = transcript(older, int(budget * TRANSCRIPT_SHARE))
        request = [
            {"role": "system", "content": SUMMARY_RULES},
            {
                "role": "user",
                "content": f"<conversation>\n{text}\n</conversation>\n\n"
                "Summarise the conversation above.",
            },
        ]
        unchanged = "the chat is unchanged"
        assembler = Assembler()
        try:
            deltas = stream_with_retries(
                lambda: self.backend.stream(request, None),
                max_retries=self.settings.model.max_retries,
                on_retry=lambda n, delay, e: self.notice(f"{e}; retrying in {delay:.1f}s"),
            )
            for delta in deltas:
                assembler.add(delta)
            reply = assembler.reply()
        except KeyboardInterrupt:
            self.notice(f"compaction interrupted: {unchanged}")
            raise
        except ProviderError as exc:
            self.notice(f"compaction failed: {exc}; {unchanged}")
            return None
        summary = reply.text.strip()
        if reply.finish_reason == "length":
            self.notice(f"compaction failed: the summary was cut at the output limit; {unchanged}")
            return None
        if not summary:
            self.notice(f"compaction failed: the model's summary was empty; {unchanged}")
            return None
        return summary

    def _head(
        self,
        summary: str,
        messages: list[dict[str, Any]],
        budget: int,
        outcome: Outcome,
        tools: bool,
    ) -> list[dict[str, Any]]:
        """The summary exchange, with the re-attached skills as its get_skill calls."""
        calls: list[ToolCall] = []
        results: list[dict[str, Any]] = []
        if tools:
            total = min(self.settings.limits.compact_skills_tokens * CHARS_PER_TOKEN, budget // 4)
            room = total
            for name in recent_skills(messages, self.context.activated):
                call = ToolCall(new_call_id(), GET_SKILL, json.dumps({"skill_name": name}))
                content = self._skill(call.id, name, room, total, outcome)
                if content is None:
                    outcome.left.append(name)
                if not content:
                    continue
                room -= len(content)
                calls.append(call)
                results.append({"role": "tool", "tool_call_id": call.id, "content": content})
        head = [
            {"role": "user", "content": COMPACTED_MARK},
            assistant_message(summary, calls),
            *results,
        ]
        return [clean_value(m) for m in head]

    def _skill(
        self, call_id: str, name: str, room: int, total: int, outcome: Outcome
    ) -> str | None:
        """get_skill's result for `name`: whole when it fits in the `room` left; cut to
        `room` when it alone is over the `total` budget; "" when the kept turns hold it
        already; None when it cannot be loaded or would not fit in what is left."""
        result = self.get_skill.load(self.context, name)
        if result.error_code == "ALREADY_IN_CONTEXT":
            return ""  # loaded again in the turns kept verbatim: nothing to put back
        if result.is_error:
            return None
        if len(result.content) <= room:
            if result.context_key is not None:
                self.context.ledger.add(call_id, result.context_key)
            outcome.skills.append(name)
            return result.content
        if len(result.content) <= total or room < len(SKILL_CUT) * 4:
            return None
        payload = json.loads(result.content)
        over = len(result.content) - room + len(SKILL_CUT) + 16
        documentation = payload["documentation"]
        kept = documentation[: max(0, len(documentation) - over)]
        payload["documentation"] = f"{kept}\n\n{SKILL_CUT}"
        payload["truncated"] = True
        outcome.skills.append(name)
        outcome.cut.append(name)
        return to_json(payload)
