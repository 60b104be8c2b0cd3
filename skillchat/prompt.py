"""The system prompt (DESIGN §4): skill-use rules, the catalog, the activated skills,
and the workspace when there is one (its folder name only: the absolute path would
tell the provider the user's home layout and is no use with relative-path tools).

The catalog is one JSON block of names and descriptions, sorted, no paths: small,
stable across turns (so providers can cache the prompt prefix), and unambiguous to
parse. When it would pass `catalog_max_chars` it is cut at a whole entry and the
model is pointed at `list_skills`; the caller warns the user (`Catalog.warning`).
With no skills and no workspace the model gets no system prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
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
- Skill scripts cannot be run here; read them as text when you need to know what they do."""

RULES_NO_TOOLS = """\
The user has Agent Skills: folders of instructions for specific tasks, listed below \
by name and description. You cannot load them yourself; when one would help, tell the \
user to start a message with /<skill-name> to use it."""


@dataclass(frozen=True)
class Catalog:
    """The `available_skills` block, and how many skills it could hold."""

    block: str
    shown: int
    total: int
    max_chars: int

    @property
    def cut(self) -> bool:
        return self.shown < self.total

    def warning(self) -> str | None:
        """The line that tells the user the model does not see every skill up front."""
        if not self.cut:
            return None
        return (
            f"the skill catalog is cut to {self.shown} of {self.total} skills "
            f"(catalog_max_chars = {self.max_chars}); the model can call list_skills "
            "for the rest"
        )


def build_catalog(registry: Registry, max_chars: int) -> Catalog | None:
    """The block for `registry`, cut at a whole entry to fit `max_chars`; None if no skills."""
    names = registry.names()
    if not names:
        return None
    entries: list[str] = []
    size = len(_OPEN) + len(_CLOSE)
    for name in names:
        skill = registry.skills[name]
        entry = json.dumps({"name": name, "description": skill.description}, ensure_ascii=False)
        cost = len(entry) + (2 if entries else 0)  # ", " between entries
        if size + cost > max_chars:
            break
        entries.append(entry)
        size += cost
    return Catalog(_OPEN + ", ".join(entries) + _CLOSE, len(entries), len(names), max_chars)


WORKSPACE_TOOLS = """\
The user's workspace, the folder '{name}', is open read-only: read its text files \
with read_file, paths relative to that folder (e.g. 'src/app.py'). Hidden files and \
files its .gitignore ignores cannot be read. Files the user attached are already in \
the conversation as read_file results: use those instead of reading them again."""

WORKSPACE_NO_TOOLS = """\
The user works in the folder '{name}'. Files they attach appear in their messages \
as <file path="..."> blocks; you cannot read other files."""


@dataclass(frozen=True)
class InjectedSkill:
    """A SKILL.md body put into the system prompt for one request (tools off, `/name`)."""

    name: str
    body: str


def system_prompt(
    catalog: Catalog | None,
    *,
    tools: bool,
    activated: Sequence[str] = (),
    injected: InjectedSkill | None = None,
    workspace: str | None = None,
    tool_rules: Sequence[str] = (),
    commands: bool = False,
) -> str | None:
    """The system message text, or None when there is nothing to say (no skills, no
    workspace, no tool rules). `workspace` is the workspace folder's name;
    `tool_rules` are the lines the offered tools ask for (`Tool.prompt_rule`), last;
    `commands` says run_command is offered, so scripts can run."""
    if catalog is None and injected is None and workspace is None and not tool_rules:
        return None
    parts: list[str] = []
    if catalog is not None:
        rules = RULES_TOOLS if commands else f"{RULES_TOOLS}\n{SCRIPTS_CANNOT_RUN}"
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
    if activated:
        parts.append(
            "Skills activated in this chat (call get_skill again if their instructions "
            "are no longer in the conversation): " + ", ".join(activated)
        )
    if injected is not None:
        parts.append(
            f"The user invoked the skill '{injected.name}' for this message. "
            f'Follow its instructions:\n<skill name="{injected.name}">\n'
            f"{injected.body.strip()}\n</skill>"
        )
    if workspace is not None:
        parts.append((WORKSPACE_TOOLS if tools else WORKSPACE_NO_TOOLS).format(name=workspace))
    parts += tool_rules
    return "\n\n".join(parts)
