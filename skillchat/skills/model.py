"""The data a skill scan produces: skills, problems, and the skills left out.

Plain frozen dataclasses so the registry, the tools, the prompt and the CLI all
share one vocabulary and nothing downstream can mutate a scan's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from skillchat.skills.remote import RemoteSkill

from skillchat.skills import arguments
from skillchat.skills.paths import skill_paths

# A note is information, not a fault: counted in neither errors nor warnings.
Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Problem:
    """One finding about one skill: where, what, and how bad."""

    path: Path
    message: str
    severity: Severity = "error"
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class Declared:
    """What a skill's frontmatter declares that skillchat acts on, typed: each key
    read from the mapping once, a value of the wrong type read as the key's absence
    (validation warns of it: skills/validation.py)."""

    allowed_tools: str | None = None  # `allowed-tools`, as one string
    forked: bool = False  # `context: fork` (Claude Code)
    model: str | None = None  # `model:` its author asked for
    model_invocable: bool = True  # not `disable-model-invocation: true`
    user_invocable: bool = True  # not `user-invocable: false`
    argument_hint: str | None = None  # `argument-hint`
    paths: tuple[str, ...] | None = None  # `paths` globs; None: always listed
    when_to_use: str | None = None  # `when_to_use`, its whitespace folded


def read_declared(frontmatter: Mapping[str, Any]) -> Declared:
    """Read the keys of `Declared` from a parsed frontmatter mapping."""
    tools, model, when = (frontmatter.get(k) for k in ("allowed-tools", "model", "when_to_use"))
    return Declared(
        allowed_tools=tools if isinstance(tools, str) else None,
        forked=frontmatter.get("context") == "fork",
        model=(model.strip() or None) if isinstance(model, str) else None,
        model_invocable=frontmatter.get("disable-model-invocation") is not True,
        user_invocable=frontmatter.get("user-invocable") is not False,
        argument_hint=arguments.argument_hint(frontmatter),
        paths=skill_paths(frontmatter),
        when_to_use=(" ".join(when.split()) or None) if isinstance(when, str) else None,
    )


@dataclass(frozen=True)
class Skill:
    """A usable skill. `root` is the real path of its folder: the only place
    skillchat will ever read its files from.

    `frontmatter` is the whole mapping, for what shows it whole (`get_skill`, `skills
    show`); what skillchat acts on is read from it once, typed, as `declared`."""

    name: str
    description: str
    root: Path
    skill_md: Path
    source_dir: Path
    frontmatter: dict[str, Any] = field(hash=False, compare=False)
    warnings: tuple[Problem, ...] = ()
    # Codex's agents/openai.yaml `policy.allow_implicit_invocation` (True when absent).
    implicit: bool = True
    # Served by an MCP server (skills/remote.py): `root` is its folder in the cache.
    remote: RemoteSkill | None = field(default=None, hash=False, compare=False)
    # The user's lasting override (skills/overrides.py): "pin", "name-only", "manual".
    override: str | None = None

    @cached_property
    def declared(self) -> Declared:
        """The frontmatter's keys skillchat acts on, read at their first use: the
        catalog, the tools and the paths gate read them at every message."""
        return read_declared(self.frontmatter)

    @property
    def origin(self) -> str:
        """Where it comes from, as the user is shown it: `local`, or `mcp:SERVER`."""
        return self.remote.origin if self.remote is not None else "local"

    @property
    def allowed_tools(self) -> str | None:
        return self.declared.allowed_tools

    @property
    def forked(self) -> bool:
        """`context: fork` (Claude Code): its work runs in a conversation of its own,
        and only the answer comes back (engine/fork.py)."""
        return self.declared.forked

    @property
    def model(self) -> str | None:
        """The model its author asked for (`model:`), if any; config may override it."""
        return self.declared.model

    @property
    def model_invocable(self) -> bool:
        """The model may see and load it: not `disable-model-invocation: true` (Claude
        Code) nor `allow_implicit_invocation: false` (Codex), nor made `manual` by the
        user (skills/overrides.py). `/name` still works."""
        return self.declared.model_invocable and self.implicit and self.override != "manual"

    @property
    def user_invocable(self) -> bool:
        """The user may call it as `/name`: not `user-invocable: false` (Claude Code)."""
        return self.declared.user_invocable

    @property
    def argument_hint(self) -> str | None:
        """What to type after `/name` (Claude Code's `argument-hint`), for completion
        and `/help`."""
        return self.declared.argument_hint

    @property
    def paths(self) -> tuple[str, ...] | None:
        """Claude Code's `paths` globs: listed to the model only while a file matches."""
        return self.declared.paths

    @property
    def model_description(self) -> str:
        """What the model is told of it: the description, then Claude Code's
        `when_to_use` when there is one (it says when to pick the skill, which is
        what the catalog is for)."""
        when = self.declared.when_to_use
        text = f"{self.description} When to use: {when}" if when else self.description
        # A served skill is never presented as a local one: its origin leads.
        return f"[{self.origin}] {text}" if self.remote is not None else text


ExclusionReason = Literal["invalid", "shadowed", "over-limit", "disabled", "off"]


@dataclass(frozen=True)
class Excluded:
    """A skill folder that was found but is not usable, and why."""

    path: Path
    reason: ExclusionReason
    name: str | None = None
    problems: tuple[Problem, ...] = ()
    shadowed_by: Path | None = None

    def summary(self) -> str:
        if self.reason == "shadowed":
            return f"name '{self.name}' already taken by {self.shadowed_by}"
        if self.reason == "over-limit":
            return "over the max_skills limit"
        if self.reason == "disabled":
            return "disabled ([skills] disabled, or /skills disable)"
        if self.reason == "off":
            return f"turned off (`skillchat skills reset {self.name}` turns it back on)"
        errors = [p.message for p in self.problems if p.severity == "error"]
        return "; ".join(errors) or "invalid"
