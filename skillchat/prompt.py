"""The system prompt: skill-use rules, the catalog, the activated skills,
and the workspace when there is one (its folder name only: the absolute path would
tell the provider the user's home layout and is no use with relative-path tools).

The catalog is one JSON block of names and descriptions, sorted, no paths: small,
stable across turns (so providers can cache the prompt prefix), and unambiguous to
parse. It always fits `catalog_max_chars`, fairly: every skill keeps its name, and
descriptions are shortened to one common length before any is dropped (see
`build_catalog`); the model is then pointed at `search_skills` (whole descriptions)
and, if even the names were cut, at `list_skills`. The user's lasting overrides
(skills/overrides.py) come first: pinned skills lead, whole; `name-only` ones are
names; `manual` and `off` ones are not listed. The caller warns the user
(`Catalog.warning`). With no skills and no workspace the model gets no system prompt.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from skillchat.skills.registry import Registry

_OPEN = '{"available_skills": ['
_CLOSE = "]}"

RULES_TOOLS = """\
You can use Agent Skills: folders of instructions and files for specific tasks, \
listed below by name and description.
- When a request matches a skill's description, call get_skill with its name before \
answering, then follow the instructions it returns.
- Load only what you need: get_skill only for a skill you will use, read_file_in_skill \
only for files its instructions point to (paths relative to the skill folder).
- A tool result saying content is already in context means it is in the conversation \
above: use that.
- A user message that started with /<skill-name> has already loaded that skill for you."""

# Said only when run_command is not offered (its own rule says what it can run).
SCRIPTS_CANNOT_RUN = """\
- Skill scripts cannot be run here; read them as text when you need to know what they do.
- Paths in a skill's instructions are relative to its folder: pass them to \
read_file_in_skill as written, never as a path on the user's machine."""

# Said when run_command is offered: instructions name a skill's folder as the sandbox does.
SKILL_FOLDER_IN_SANDBOX = """\
- A skill's instructions name its folder as /skills/<skill-name>, where commands see it; \
read_file_in_skill takes the same file relative to the skill folder \
(/skills/pdf/forms.md is 'forms.md' of the skill pdf). Never pass a path on the user's \
machine to a tool."""

# Said when the catalog had to be shortened to fit its budget.
SEARCH_RULE = """\
Descriptions in this list ending in "…" are shortened (or left out, when only names \
fit): call search_skills with words from the request to read the whole descriptions \
of the skills that match before deciding a skill does not apply."""

RULES_NO_TOOLS = """\
The user has Agent Skills: folders of instructions for specific tasks, listed below \
by name and description. You cannot load them yourself; when one would help, tell the \
user to start a message with /<skill-name> to use it."""


# A description cut shorter than this says too little to choose a skill by: past
# that point the catalog lists names only (the model can still search_skills).
MIN_DESCRIPTION = 24
ELLIPSIS = "…"


@dataclass(frozen=True)
class Catalog:
    """The `available_skills` block, and what fitting it into `max_chars` cost.

    `shown` skills are in the block out of `total`; `cap` is the common length every
    longer description was shortened to (None: all whole), `shortened` how many were;
    `described` is False when only names fit. `pinned` skills lead, whole, and
    `name_only` ones are names by the user's choice (skills/overrides.py);
    `pinned_chars` is what the pinned skills needed when that alone passed the
    budget (they were then fitted with the rest).
    """

    block: str
    shown: int
    total: int
    max_chars: int
    shortened: int = 0
    cap: int | None = None
    described: bool = True
    pinned: int = 0
    name_only: int = 0
    pinned_chars: int | None = None

    @property
    def cut(self) -> bool:
        return self.shown < self.total

    @property
    def incomplete(self) -> bool:
        """The model sees less than every whole description: search_skills helps."""
        return self.cut or self.shortened > 0 or not self.described or self.name_only > 0

    def warning(self) -> str | None:
        """The line that tells the user the model does not see every skill whole
        (but for the `name-only` skills: the user chose that)."""
        budget = f"catalog_max_chars = {self.max_chars}"
        fitting = self._fitting(budget)
        if self.pinned_chars is None:
            return fitting
        pins = (
            f"the pinned skills alone need {self.pinned_chars:,} characters "
            f"({budget}): they are fitted with the others, not pinned"
        )
        return pins if fitting is None else f"{pins}; {fitting}"

    def _fitting(self, budget: str) -> str | None:
        # The pinned skills keep their descriptions whatever the rest loses.
        but = f", but the {self.pinned} pinned" if self.pinned else ""
        if self.cut:
            return (
                f"the skill catalog is cut to {self.shown} of {self.total} skills, names "
                f"only{but} ({budget}); the model can call list_skills and search_skills "
                "for the rest"
            )
        if not self.described:
            return (
                f"the skill catalog lists all {self.total} skills by name only{but} "
                f"({budget}); the model can call search_skills for their descriptions"
            )
        if self.shortened:
            return (
                f"{self.shortened} of {self.total} skill descriptions shortened to "
                f"{self.cap} characters to fit the catalog ({budget}); the model can call "
                "search_skills to read them whole"
            )
        return None


_SENTENCE_END = re.compile(r"[.!?](?=\s)")
# One encoder, made once: `json.dumps(..., ensure_ascii=False)` builds a new one per
# call, which is most of the catalog's cost for thousands of skills.
_string = json.JSONEncoder(ensure_ascii=False).encode


class _Cuttable:
    """A description with its sentence ends found once, so the search for the common
    length can cut it at many lengths cheaply."""

    __slots__ = ("ends", "plain", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        # Nothing JSON escapes: its JSON length is its length plus the quotes.
        self.plain = len(_string(text)) == len(text) + 2

    def _end(self, cap: int) -> tuple[int, bool]:
        """Where `cut(cap)` ends in the text, and whether it adds "…"."""
        text = self.text
        if len(text) <= cap:
            return len(text), False
        room = cap - len(ELLIPSIS)
        i = bisect_right(self.ends, room)
        if i and self.ends[i - 1] >= cap // 2:
            return self.ends[i - 1], False
        space = text.rfind(" ", 0, room + 1)
        end = space if space >= cap // 2 else room
        while end and text[end - 1].isspace():
            end -= 1
        return end, True

    def cut(self, cap: int) -> str:
        """At most `cap` characters: whole if it fits, else up to the last sentence
        end in the second half of the cap, else at a word, and marked with "…"."""
        end, ellipsis = self._end(cap)
        return self.text[:end] + ELLIPSIS if ellipsis else self.text[:end]

    def json_size(self, cap: int) -> int:
        """The length of `cut(cap)` as a JSON string."""
        if self.plain:
            end, ellipsis = self._end(cap)
            return end + ellipsis + 2
        return len(_string(self.cut(cap)))


def _entry(name: str, description: str | None) -> str:
    """`{"name": ..., "description": ...}` as json.dumps writes it, built directly."""
    if description is None:
        return '{"name": ' + _string(name) + "}"
    return '{"name": ' + _string(name) + ', "description": ' + _string(description) + "}"


def _size(entries: Sequence[str]) -> int:
    return len(_OPEN) + len(_CLOSE) + sum(map(len, entries)) + 2 * max(0, len(entries) - 1)


def build_catalog(
    registry: Registry, max_chars: int, unlisted: Collection[str] = ()
) -> Catalog | None:
    """The block for `registry` (but the `unlisted` skills) within `max_chars`; None
    if there are no skills.

    The user's overrides first (skills/overrides.py): pinned skills lead, whole, and
    the rest is fitted into what they leave; `name-only` ones are listed by name.
    Pinned skills that alone pass `max_chars` lose that place (said: `Catalog.warning`)
    and are fitted with the rest, so the block never passes its budget.
    """
    # A skill hidden from the model is not listed, nor one whose `paths` match nothing.
    names = [name for name in registry.model_names() if name not in unlisted]
    if not names:
        return None
    skills = registry.skills
    pinned = [n for n in names if skills[n].override == "pin"]
    head = [_entry(n, skills[n].model_description) for n in pinned]
    room = max_chars - sum(len(entry) + 2 for entry in head)
    over = None
    if head and room < len(_OPEN) + len(_CLOSE):
        over, head, pinned = max_chars - room, [], []
    rest = [n for n in names if skills[n].override != "pin"] if pinned else names
    fitted = _fit(registry, rest, room if head else max_chars)
    entries = head + fitted.entries
    name_only = sum(skills[n].override == "name-only" for n in names)
    return Catalog(
        _block(entries),
        len(head) + fitted.shown,
        len(names),
        max_chars,
        fitted.shortened,
        fitted.cap,
        fitted.described,
        pinned=len(head),
        name_only=name_only,
        pinned_chars=over,
    )


@dataclass(frozen=True)
class _Fitted:
    entries: list[str]
    shown: int
    shortened: int = 0
    cap: int | None = None
    described: bool = True


def _fit(registry: Registry, names: Sequence[str], max_chars: int) -> _Fitted:
    """`names`' entries within `max_chars`, fair to every skill, in this order: all
    descriptions whole if they fit; else every description longer than a common cap
    is shortened to it (the largest cap that fits, found by bisection on sizes,
    without building the block each time), so no skill keeps a long description
    while another loses its own; else names only; else names cut at a whole entry.
    A `name-only` skill is its name at every step. Deterministic and stable across
    turns, so providers can cache the prompt."""
    if not names:
        return _Fitted([], 0)
    bare = [_entry(n, None) for n in names]
    described = [n for n in names if registry.skills[n].override != "name-only"]
    descriptions = [registry.skills[name].model_description for name in described]
    whole = dict(zip(described, descriptions, strict=True))
    entries = [_entry(n, whole[n]) if n in whole else b for n, b in zip(names, bare, strict=True)]
    if _size(entries) <= max_chars:
        return _Fitted(entries, len(names))
    # An entry with a description is the bare one plus `, "description": <json>`.
    fixed = _size(bare) + len(described) * len(', "description": ')
    if described and fixed + len(described) * (MIN_DESCRIPTION + 2) <= max_chars:
        cuttable = [_Cuttable(d) for d in descriptions]
        low, high, cap = MIN_DESCRIPTION, max(map(len, descriptions)), None
        while low <= high:  # the largest cap whose catalog fits
            mid = (low + high) // 2
            if fixed + sum(c.json_size(mid) for c in cuttable) <= max_chars:
                cap, low = mid, mid + 1
            else:
                high = mid - 1
        if cap is not None:
            cut = {n: c.cut(cap) for n, c in zip(described, cuttable, strict=True)}
            entries = [
                _entry(n, cut[n]) if n in cut else b for n, b in zip(names, bare, strict=True)
            ]
            shortened = sum(len(d) > cap for d in descriptions)
            return _Fitted(entries, len(names), shortened, cap)
    shown: list[str] = []
    size = len(_OPEN) + len(_CLOSE)
    for entry in bare:  # names only, cut at a whole entry
        size += len(entry) + (2 if shown else 0)
        if size > max_chars:
            break
        shown.append(entry)
    return _Fitted(shown, len(shown), len(described), 0, False)


def _block(entries: Sequence[str]) -> str:
    return _OPEN + ", ".join(entries) + _CLOSE


WORKSPACE_TOOLS = """\
The user's workspace, the folder '{name}', is open read-only: read its text files \
with read_file, paths relative to that folder (e.g. 'src/app.py'). Hidden files and \
files its .gitignore ignores cannot be read. Files the user attached are already in \
the conversation as read_file results: use those instead of reading them again."""

WORKSPACE_NO_TOOLS = """\
The user works in the folder '{name}'. Files they attach appear in their messages \
as <file path="..."> blocks; you cannot read other files."""


@dataclass(frozen=True, eq=False)
class InjectedSkill:
    """A SKILL.md body put into the system prompt for one request (tools off, `/name`)."""

    name: str
    body: str


# How a skill's body put in the system message begins (a `/name` with tools off, a
# fork's own skill): engine/activated.py looks for it to know the body is there.
INJECTED_SKILL = '<skill name="'


def system_prompt(
    catalog: Catalog | None,
    *,
    tools: bool,
    reread: Sequence[str] = (),
    injected: InjectedSkill | None = None,
    workspace: str | None = None,
    tool_rules: Sequence[str] = (),
    commands: bool = False,
) -> str | None:
    """The system message text, or None when there is nothing to say (no skills, no
    workspace, no tool rules). `workspace` is the workspace folder's name;
    `tool_rules` are the lines the offered tools ask for (`Tool.prompt_rule`), last;
    `commands` says run_command is offered, so scripts can run; `reread` are the
    activated skills whose SKILL.md changed since the model loaded them."""
    if catalog is None and injected is None and workspace is None and not tool_rules:
        return None
    parts: list[str] = []
    if catalog is not None:
        rules = f"{RULES_TOOLS}\n{SKILL_FOLDER_IN_SANDBOX if commands else SCRIPTS_CANNOT_RUN}"
        parts += [rules if tools else RULES_NO_TOOLS, catalog.block]
        if catalog.cut:
            hidden = catalog.total - catalog.shown
            if tools:
                parts.append(
                    f"This list is cut: {hidden} more skills are not shown. "
                    "Call list_skills for every name."
                )
            else:
                parts.append(f"This list is cut: {hidden} more skills are not shown.")
        if catalog.incomplete and tools:
            parts.append(SEARCH_RULE)
    if reread:
        parts.append(
            "The SKILL.md of these activated skills was edited since you loaded it: "
            + ", ".join(reread)
            + ". Call get_skill again for the current instructions before following them."
        )
    if injected is not None:
        parts.append(
            f"The user invoked the skill '{injected.name}' for this message. "
            f'Follow its instructions:\n{INJECTED_SKILL}{injected.name}">\n'
            f"{injected.body.strip()}\n</skill>"
        )
    if workspace is not None:
        parts.append((WORKSPACE_TOOLS if tools else WORKSPACE_NO_TOOLS).format(name=workspace))
    parts += tool_rules
    return "\n\n".join(parts)


def activated_note(names: Sequence[str]) -> str:
    """The end of the system message when activated skills' instructions are not in
    what is sent (a resumed chat stores none, compaction and the context budget can
    leave them out). Only then: a system message that changes with each activation
    would make the provider (and a local server) read the whole prompt and the tools
    again at every change, where an unchanged one is served from its prompt cache."""
    return (
        "Skills activated in this chat (call get_skill again if their instructions "
        "are no longer in the conversation): " + ", ".join(names)
    )
