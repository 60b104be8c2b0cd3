"""How the skills were used, from the saved chats: `skillchat skills stats`.

Per skill: activations by the model (its own get_skill calls) and by the user
(`/name`), how many of them ran as forks (`context: fork`), files read
(read_file_in_skill), commands run (run_command naming the skill), and when it
was last used; then the usable skills never used. Only calls
that succeeded count.

Telling the two activations apart: skillchat writes a `/name` as a get_skill call
of its own, with an id it makes (`engine/messages.new_call_id`: nine lowercase hex
digits), where a provider's ids look otherwise (`call_…`, `toolu_…`, 24+
characters; Mistral's nine letters and digits are all lowercase hex about once in
15,000). Re-attached skills of a compaction are not activations and are skipped
(their messages carry the compaction flag).

The store is opened read-only (`mode=ro`, `query_only`): `stats` never creates,
migrates or writes it. A file that is not a chat database, or a damaged one, is a
one-line StorageError, as for every other command.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.chats.messages import COMPACTION
from skillchat.chats.schema import check_file, check_version, corrupt
from skillchat.errors import StorageError

_OWN_ID = re.compile(r"[0-9a-f]{9}")


@dataclass
class SkillUsage:
    name: str
    by_model: int = 0
    by_user: int = 0
    files_read: int = 0
    commands: int = 0
    forks: int = 0  # activations that ran as a fork of their own (engine/fork.py)
    last_used: str | None = None

    def used(self, when: str) -> None:
        self.last_used = max(self.last_used or when, when)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "activations_by_model": self.by_model,
            "activations_by_user": self.by_user,
            "files_read": self.files_read,
            "commands_run": self.commands,
            "forks": self.forks,
            "last_used": self.last_used,
        }


@dataclass
class Tokens:
    """The tokens the saved chats' requests reported, and what they cost: input (of
    it, read from and written to the provider's prompt cache) and output; `cost` the
    sum of the costs known, `unpriced` the replies without one (a local server's)."""

    prompt: int = 0
    cached: int = 0
    cache_write: int = 0
    completion: int = 0
    cost: float = 0.0
    unpriced: int = 0

    def add(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        counts = [usage.get(k) for k in ("prompt_tokens", "cached_tokens",
                                         "cache_write_tokens", "completion_tokens")]  # fmt: skip
        prompt, cached, write, completion = (c if isinstance(c, int) else 0 for c in counts)
        self.prompt += prompt
        self.cached += cached
        self.cache_write += write
        self.completion += completion
        cost = usage.get("cost")
        if isinstance(cost, int | float):
            self.cost += cost
        else:
            self.unpriced += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt,
            "cached_tokens": self.cached,
            "cache_write_tokens": self.cache_write,
            "completion_tokens": self.completion,
            "cost": self.cost,
            "replies_without_cost": self.unpriced,
        }

    def line(self) -> str:
        """`tokens: 12,400 in (11,900 cached) + 560 out · $0.0123` (the cost known)."""
        cached = f" ({self.cached:,} cached)" if self.cached else ""
        line = f"tokens: {self.prompt:,} in{cached} + {self.completion:,} out · ${self.cost:.4f}"
        return line + (f" ({self.unpriced} replies without a price)" if self.unpriced else "")


def _loads(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _succeeded(tool: str, content: Any) -> bool:
    """Whether a stored result is a success (errors are stored whole)."""
    if tool == "read_file_in_skill":
        return isinstance(content, str) and not content.startswith("ERROR:")
    result = _loads(content)
    return isinstance(result, dict) and "error" not in result


def _rows(path: Path) -> list[sqlite3.Row]:
    """Every message row stats needs, read through a read-only connection."""
    check_file(path)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StorageError(f"{path}: cannot open chat database: {exc}") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        check_version(conn, path)
        conn.row_factory = sqlite3.Row
        return conn.execute(
            "SELECT chat_id, role, content, tool_calls, tool_call_id, extra, usage, created_at "
            "FROM messages ORDER BY chat_id, seq"
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise corrupt(path, str(exc)) from None
    finally:
        conn.close()


def skill_usage(path: Path, names: list[str]) -> tuple[list[SkillUsage], int, Tokens]:
    """(usage of every skill seen in the store or in `names`, chats counted, the
    tokens their requests reported).

    Skills in `names` (the usable ones) come first, in order; skills only the store
    knows (since removed or renamed) follow by name.
    """
    usage: dict[str, SkillUsage] = {n: SkillUsage(n) for n in names}
    calls: dict[str, tuple[str, str, str]] = {}  # call id -> (tool, skill, when)
    chats: set[str] = set()
    tokens = Tokens()
    for row in _rows(path):
        chats.add(row["chat_id"])
        tokens.add(_loads(row["usage"]))
        extra = _loads(row["extra"]) or {}
        if isinstance(extra, dict) and COMPACTION in extra:
            continue
        if row["role"] == "assistant" and row["tool_calls"]:
            for call in _loads(row["tool_calls"]) or []:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict):
                    continue
                args = _loads(function.get("arguments")) or {}
                skill = args.get("skill_name") if isinstance(args, dict) else None
                if isinstance(skill, str) and isinstance(call.get("id"), str):
                    calls[call["id"]] = (str(function.get("name")), skill, row["created_at"])
        elif row["role"] == "tool" and (found := calls.pop(row["tool_call_id"], None)):
            tool, skill, when = found
            if not _succeeded(tool, row["content"]):
                continue
            entry = usage.setdefault(skill, SkillUsage(skill))
            if tool == "get_skill":
                entry.forks += (_loads(row["content"]) or {}).get("forked") is True
                if _OWN_ID.fullmatch(row["tool_call_id"]):
                    entry.by_user += 1
                else:
                    entry.by_model += 1
            elif tool == "read_file_in_skill":
                entry.files_read += 1
            elif tool == "run_command":
                entry.commands += 1
            else:
                continue
            entry.used(when)
    ordered = [usage[n] for n in names] + sorted(
        (u for n, u in usage.items() if n not in set(names)), key=lambda u: u.name
    )
    return ordered, len(chats), tokens
