"""What the model is offered of the servers' tools: names, descriptions, schemas.

A server's names and descriptions are untrusted text. The model gets a tool as
`mcp__SERVER__TOOL` (Claude Code's name, the one skills' `allowed-tools` use): a
character a provider refuses in a name (`[A-Za-z0-9_-]`, 64 at most) becomes `_`, a
name too long is cut and given a short hash, and the server's own name is kept
for the call. Descriptions lose control characters (escape sequences included) and
are cut at `MAX_DESCRIPTION` characters.

Schemas are checked as a provider would: a JSON object schema (`type: object`),
no larger than `MAX_SCHEMA_CHARS`, local `$ref`s inlined (several providers reject
`$ref`); a recursive or non-local `$ref`, or anything else unusable, leaves the tool
out with the reason (`Offer.left_out`).

The tools of every server together take at most a share of the context budget
(`share_of`). Past it, tools are offered by name only: the `mcp_tool_schema` tool
lists them and returns one's schema, after which that tool is offered in full.
Which tools get their schema is fair between servers: one tool of each server in
turn, in the servers' order, as the skill catalog shares its room between folders.

A server's tool comes here as a `Listed` (mcp/listing.py), plain data read from
the SDK's `Tool` as the server listed it or from the list kept of its last start:
an offer is built without the SDK, and without the server running.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from skillchat.mcp.listing import Listed

MAX_NAME = 64
MAX_DESCRIPTION = 1_024
MAX_SCHEMA_CHARS = 16_000
MAX_DEPTH = 24
_BAD_NAME = re.compile(r"[^A-Za-z0-9_-]")
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


@dataclass(frozen=True)
class Entry:
    """One server tool as the model may get it."""

    name: str  # mcp__server__tool, as offered
    server: str
    tool: str  # the server's own name, used for the call
    description: str
    schema: dict[str, Any]  # the parameters, inlined
    annotations: dict[str, Any] = field(default_factory=dict)

    def function(self) -> dict[str, Any]:
        """The OpenAI function schema of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }

    def size(self) -> int:
        return len(json.dumps(self.function(), ensure_ascii=False))


@dataclass
class Offer:
    """The servers' tools: offered in full, by name only, or left out (with why)."""

    full: list[Entry] = field(default_factory=list)
    names_only: list[Entry] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)

    def by_name(self) -> dict[str, Entry]:
        return {entry.name: entry for entry in [*self.full, *self.names_only]}

    def chars(self) -> int:
        """What the offered schemas cost in the request, in characters."""
        return sum(entry.size() for entry in self.full)


def neutral(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """A server's text with control characters and escape sequences removed, cut."""
    text = _CONTROL.sub("", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def offered_name(server: str, tool: str, taken: set[str]) -> str:
    """`mcp__server__tool` as a provider accepts it, unique among `taken`."""
    name = f"mcp__{server}__{_BAD_NAME.sub('_', tool)}"
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def provider_schema(schema: Any) -> tuple[dict[str, Any] | None, str]:
    """`schema` made ready for a provider, or None and why it cannot be."""
    if not isinstance(schema, dict):
        return None, "its input schema is not a JSON object"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return None, "its input schema is not JSON"
    if size > MAX_SCHEMA_CHARS:
        return None, f"its input schema is {size:,} characters (at most {MAX_SCHEMA_CHARS:,})"
    if schema.get("type", "object") != "object":
        return None, "its input schema is not of type object"
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    try:
        inlined = _inline(schema, defs, (), 0)
    except ValueError as exc:
        return None, str(exc)
    inlined.pop("$defs", None)
    inlined.pop("definitions", None)
    inlined.setdefault("type", "object")
    inlined.setdefault("properties", {})
    return inlined, ""


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"its input schema nests deeper than {MAX_DEPTH}")
    if isinstance(node, list):
        return [_inline(item, defs, seen, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        if match is None or match.group(2) not in defs:
            return _raise(f"its input schema has a $ref skillchat cannot resolve: {ref[:80]}")
        if ref in seen:
            return _raise("its input schema is recursive ($ref to itself)")
        target = _inline(defs[match.group(2)], defs, (*seen, ref), depth + 1)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **_inline(rest, defs, seen, depth + 1)}
    return {
        key: _inline(value, defs, seen, depth + 1)
        for key, value in node.items()
        if key not in ("$defs", "definitions") or depth > 0
    }


def _raise(message: str) -> Any:
    raise ValueError(message)


def build_offer(
    listed: list[tuple[str, Listed]], share: int, fetched: set[str] | frozenset[str] = frozenset()
) -> Offer:
    """The offer for the `(server, tool)` pairs listed, within `share` characters;
    `fetched` names tools whose schema the model asked for (offered in full)."""
    offer = Offer()
    taken: set[str] = set()
    per_server: dict[str, list[Entry]] = {}
    for server, tool in listed:
        name = offered_name(server, tool.name, taken)
        taken.add(name)
        schema, why = provider_schema(tool.input_schema)
        if schema is None:
            offer.left_out.append((name, why))
            continue
        description = neutral(tool.description)
        entry = Entry(name, server, tool.name, description, schema, dict(tool.annotations))
        per_server.setdefault(server, []).append(entry)
    room = share
    queues = list(per_server.values())
    while any(queues):
        for queue in queues:
            if not queue:
                continue
            entry = queue.pop(0)
            cost = entry.size()
            if entry.name in fetched or cost <= room:
                room -= cost if entry.name not in fetched else 0
                offer.full.append(entry)
            else:
                offer.names_only.append(entry)
    return offer


def share_of(budget: int) -> int:
    """The characters the servers' tool schemas may take of a `budget`: a tenth."""
    return max(2_000, budget // 10)
