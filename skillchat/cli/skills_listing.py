"""How `skills list` shows skills on a terminal: one line each by default, as `gh`
lists (211 real skills took 1,590 lines as a folded table), the grid with `--long`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillchat.sections import BUNDLED_SKILLS
from skillchat.skills.model import Skill
from skillchat.skills.trust import TrustState
from skillchat.ui import safe


def invocation_note(s: Skill) -> str:
    """Where the skill comes from when it ships with skillchat, and what other
    clients' keys change about who may start it ("" if nothing)."""
    notes = ["bundled"] if s.source_dir == BUNDLED_SKILLS else []
    if s.remote is not None:
        notes.append(f"{s.origin}: read only, its scripts do not run")
    if not s.model_invocable:
        notes.append("user only: not shown to the model")
    if not s.user_invocable:
        notes.append("model only: no /name")
    return "; ".join(notes)


def _rows(skills: list[Skill], trust: dict[str, TrustState]) -> list[tuple[str, Any, str]]:
    """Name, trust (words and style) and one-line description of each skill."""
    rows = []
    for s in skills:
        state = trust[s.name]
        description = safe.one_line(s.description)
        if note := invocation_note(s):
            description = f"({note}) {description}"
        rows.append((s.name, (state.describe(), "ok" if state.trusted else "warning"), description))
    return rows


def short_lines(
    skills: list[Skill],
    trust: dict[str, TrustState],
    width: int,
    overrides: Mapping[str, str] | None = None,
) -> list[Any]:
    """One line per skill, as `gh` lists, cut to the terminal's width, so 200 skills
    take 200 lines, not 1,500. The name column takes at most half the width: one
    name of 64 characters would otherwise leave every other skill no description
    (it is cut, with an ellipsis; `--long` shows it whole). `overrides` (the user's,
    skills/overrides.py, as shown) is a column when there are any."""
    rows = _rows(skills, trust)
    name_w = min(max(len(safe.one_line(name)) for name, _, _ in rows), max(width // 2, 12))
    trust_w = max(len(shown[0]) for _, shown, _ in rows)
    override_w = max(map(len, overrides.values()), default=0) if overrides else 0
    lines = []
    for name, shown, description in rows:
        shown_name = safe.one_line(name)
        if len(shown_name) > name_w:
            shown_name = shown_name[: name_w - 1] + "…"
        override = (overrides or {}).get(name, "")
        column: list[str | tuple[str, str]] = [(override.ljust(override_w), "warning"), "  "]
        line = safe.line(
            (shown_name.ljust(name_w), "skill"),
            "  ",
            (shown[0].ljust(trust_w), shown[1]),
            "  ",
            *(column if override_w else []),
            description,
        )
        line.truncate(width, overflow="ellipsis")
        lines.append(line)
    return lines


def long_table(
    skills: list[Skill], trust: dict[str, TrustState], overrides: Mapping[str, str] | None = None
) -> Any:
    """`--long`: whole descriptions, folded, in a grid (an `override` column when
    there are any)."""
    from rich.table import Table

    table = Table(title=None, show_lines=False, expand=False)
    table.add_column("skill", style="skill", no_wrap=True)
    table.add_column("trust", no_wrap=True)
    if overrides:
        table.add_column("override", no_wrap=True, style="warning")
    table.add_column("description", overflow="fold")
    for name, shown, description in _rows(skills, trust):
        override = [safe.text(overrides.get(name, ""))] if overrides else []
        table.add_row(safe.text(name), safe.line(shown), *override, safe.text(description))
    return table
