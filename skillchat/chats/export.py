"""A saved chat as something to read: the `chats show` text, Markdown, or JSON.

Pure functions of a `Chat` and its `StoredMessage`s, so the CLI stays thin and the
formats can be tested without a database. `show` summarises each tool call and
result in one line (a transcript is for reading, and tool results can be long);
the exports keep everything that was stored. A compaction is marked where it
happened (its summary labelled as one), the messages it replaced shown above it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from datetime import datetime
from typing import Any

from skillchat.chats.loaded import AttachedFile, StoredFork
from skillchat.chats.messages import COMPACTION
from skillchat.chats.records import Chat, StoredMessage

SUMMARY_CHARS = 100


def local_time(stamp: str) -> str:
    """An ISO UTC timestamp as local 'YYYY-MM-DD HH:MM' for people."""
    return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")


def text_of(content: Any) -> str:
    """Message content as text: content parts become their text, or `[image_url]`."""
    if content is None or isinstance(content, str):
        return content or ""
    parts = content if isinstance(content, list) else [content]
    return "\n".join(
        str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type', 'part')}]"
        for p in parts
        if isinstance(p, dict)
    )


def one_line(text: str, limit: int = SUMMARY_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def call_summary(call: dict[str, Any]) -> str:
    """`get_skill(skill_name="pdf")`: a tool call as one line."""
    function = call.get("function", {})
    raw = function.get("arguments") or ""
    try:
        args = json.loads(raw) if raw else {}
    except ValueError:
        args = None
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    else:
        shown = raw
    return one_line(f"{function.get('name', '?')}({shown})")


def attachment_line(file: AttachedFile) -> str:
    """`src/app.py (1,234 bytes, sha256 1a2b3c4d5e6f)`: which version was attached."""
    return f"{file.path} ({file.size_bytes:,} bytes, sha256 {file.sha256[:12]})"


def _tool_names(messages: list[StoredMessage]) -> dict[str, str]:
    """tool_call_id -> tool name, to label each result with the call it answers."""
    return {
        call["id"]: call["function"]["name"]
        for stored in messages
        for call in stored.message.get("tool_calls") or []
    }


def run_summary(content: str) -> str | None:
    """`exit 0 · 12 ms · wrote /scratch/a.txt · <first output line>` for a stored
    run_command result; None when it is not one (an error keeps its own text)."""
    try:
        result = json.loads(content)
    except ValueError:
        return None
    if not isinstance(result, dict) or "exit_code" not in result:
        return None
    code = result["exit_code"]
    parts = [f"exit {code}" if code is not None else "stopped", f"{result.get('duration_ms')} ms"]
    if result.get("files_written"):
        parts.append("wrote " + ", ".join(map(str, result["files_written"])))
    output = (str(result.get("stdout") or "") + str(result.get("stderr") or "")).strip()
    if output:
        parts.append(output.splitlines()[-1])
    return one_line(" · ".join(parts))


def compaction_line(message: dict[str, Any]) -> str | None:
    """`compacted here: 42 earlier messages → the model's summary below (skills
    re-attached: pdf)` for the first message of a compaction, else None. What it
    replaced stays above it: show and export keep the whole history."""
    info = message.get(COMPACTION)
    if not isinstance(info, dict):
        return None
    before = info.get("messages_before", "?")
    kept = info.get("kept", 0)
    line = (
        f"compacted here: the chat's {before} messages became the model's summary below "
        f"(the last {kept} of them kept as they were); the resumed chat starts here"
    )
    skills = info.get("skills")
    if isinstance(skills, list) and skills:
        line += f"; skills re-attached: {', '.join(map(str, skills))}"
    return line


def _label(message: dict[str, Any]) -> str:
    """The role, or what a compaction's message is."""
    if message.get(COMPACTION) == "assistant":
        return "summary"
    return str(message["role"])


def fork_heading(fork: StoredFork) -> str:
    """`fork digest on gpt-x: answered · 2 requests · 1 tool call · 900 tokens`."""
    s = fork.summary
    counts = f"{s.get('requests', 0)} requests · {s.get('tool_calls', 0)} tool calls"
    tokens = f"{s.get('tokens', 0)} tokens"
    return f"fork {fork.skill} on {fork.model}: {fork.outcome} · {counts} · {tokens}"


def fork_lines(fork: StoredFork) -> list[tuple[str, str]]:
    """A fork in `chats show` (and `/show N`): its heading, then its messages, indented."""
    lines = [("", ""), ("transcript.compaction", f"  ⑂ {fork_heading(fork)}")]
    names = {
        c["id"]: c["function"]["name"] for m in fork.messages for c in m.get("tool_calls") or []
    }
    for message in fork.messages:
        text = text_of(message.get("content"))
        if message.get("role") == "tool":
            tool = names.get(message.get("tool_call_id", ""), "tool")
            shown = (run_summary(text) if tool == "run_command" else None) or one_line(text)
            lines.append(("muted", f"    ← {tool}: {shown}"))
            continue
        lines.append(("muted", f"    {message.get('role')}: {one_line(text)}" if text else ""))
        for call in message.get("tool_calls") or []:
            lines.append(("transcript.call", f"    → {call_summary(call)}"))
    return [line for line in lines if line[1] or line == ("", "")]


def _forks_before(chat: Chat, seq: int) -> list[StoredFork]:
    """The forks that ended just before message `seq` was added."""
    return [f for f in chat.forks if f.seq == seq]


def show_lines(chat: Chat, messages: list[StoredMessage]) -> list[tuple[str, str]]:
    """The `chats show` transcript as (style, text) lines; style '' is plain."""
    lines = [
        ("strong", f"chat {chat.id} · {chat.model} · {chat.message_count} messages"),
        ("", f"title: {chat.title or '(untitled)'}"),
        ("", f"created {local_time(chat.created_at)} · updated {local_time(chat.updated_at)}"),
    ]
    if chat.activated_skills:
        lines.append(("", f"skills: {', '.join(chat.activated_skills)}"))
    if chat.attached_files:
        shown = ", ".join(attachment_line(f) for f in chat.attached_files)
        lines.append(("", f"attached: {shown}"))
    names = _tool_names(messages)
    for stored in messages:
        message = stored.message
        for fork in _forks_before(chat, stored.seq):
            lines += fork_lines(fork)
        if (compacted := compaction_line(message)) is not None:
            lines += [("", ""), ("transcript.compaction", f"── {compacted} ──")]
            continue
        if message["role"] == "tool":
            tool = names.get(message.get("tool_call_id", ""), "tool")
            text = text_of(message.get("content"))
            shown = (run_summary(text) if tool == "run_command" else None) or one_line(text)
            lines.append(("muted", f"  ← {tool}: {shown}"))
            continue
        flag = " [interrupted]" if stored.interrupted else ""
        lines += [("", ""), ("transcript.role", f"{_label(message)}{flag}")]
        text = text_of(message.get("content"))
        lines += [("", f"  {line}") for line in text.splitlines()]
        for call in message.get("tool_calls") or []:
            lines.append(("transcript.call", f"  → {call_summary(call)}"))
    for fork in chat.forks:
        if fork.seq >= len(messages):
            lines += fork_lines(fork)
    return lines


def _fence(text: str) -> str:
    """A fenced block that no run of backticks inside `text` can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{text}\n{ticks}"


def _code(text: str) -> str:
    """`text` as an inline code span on one line: its line breaks and other control
    characters escaped (a line break would let the rest start a heading of its own),
    in more backticks than any run inside it."""
    flat = json.dumps(text, ensure_ascii=False)[1:-1].replace('\\"', '"')
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def to_markdown(chat: Chat, messages: list[StoredMessage]) -> str:
    """The whole chat as Markdown: metadata, then each message under a heading.

    Everything the chat's participants wrote (messages, tool arguments and results) is
    fenced, and names (tools, skills, files, the model) are one-line code spans: what
    a model says cannot add a heading, so each heading is one stored message."""
    meta = [
        f"- id: {_code(chat.id)}",
        f"- model: {_code(chat.model)}",
        f"- created: {chat.created_at}",
        f"- updated: {chat.updated_at}",
    ]
    if chat.activated_skills:
        meta.append(f"- activated skills: {', '.join(map(_code, chat.activated_skills))}")
    if chat.attached_files:
        meta.append("- attached files (content not stored):")
        meta += [f"  - {_code(attachment_line(f))}" for f in chat.attached_files]
    title = " ".join((chat.title or "Untitled chat").split())  # one line: one heading
    blocks = [f"# {title}", "\n".join(meta)]
    names = _tool_names(messages)
    for stored in messages:
        message = stored.message
        blocks += [_fork_block(fork) for fork in _forks_before(chat, stored.seq)]
        if (compacted := compaction_line(message)) is not None:
            blocks += ["---", f"*{one_line(compacted, len(compacted)).capitalize()}.*"]
            continue
        text = text_of(message.get("content"))
        if message["role"] == "tool":
            tool = names.get(message.get("tool_call_id", ""), "tool")
            blocks += [f"**Tool result** ({_code(tool)}):", _fence(text)]
            continue
        flag = " (interrupted)" if stored.interrupted else ""
        blocks.append(f"## {_label(message).capitalize()}{flag}")
        if text:
            blocks.append(_fence(text))
        for call in message.get("tool_calls") or []:
            function = call["function"]
            blocks += [
                f"**Tool call** {_code(str(function['name']))}:",
                _fence(function.get("arguments") or ""),
            ]
    blocks += [_fork_block(fork) for fork in chat.forks if fork.seq >= len(messages)]
    return "\n\n".join(blocks) + "\n"


def _fork_block(fork: StoredFork) -> str:
    """A fork in the Markdown export: its heading and its messages as one fenced
    JSON block (the fork's own words cannot add headings)."""
    heading = f"### Fork {_code(fork.skill)} on {_code(fork.model)}: {fork.outcome}"
    task = f"Task: {_code(fork.task)}"
    return "\n\n".join(
        [heading, task, _fence(json.dumps(fork.messages, indent=1, ensure_ascii=False))]
    )


def to_json(chat: Chat, messages: list[StoredMessage]) -> dict[str, Any]:
    """`{"chat": metadata, "messages": [...]}`: each message is the stored OpenAI dict
    plus `interrupted`, `usage` (or null) and `created_at`."""
    meta = asdict(chat)
    meta["activated_skills"] = list(chat.activated_skills)
    meta["attached_files"] = [asdict(f) for f in chat.attached_files]
    meta["forks"] = [asdict(f) for f in chat.forks]
    return {
        "chat": meta,
        "messages": [
            {
                **stored.message,
                "interrupted": stored.interrupted,
                "usage": stored.usage,
                "created_at": stored.created_at,
            }
            for stored in messages
        ],
    }
