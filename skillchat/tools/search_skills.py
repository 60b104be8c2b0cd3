"""search_skills: whole descriptions of the skills that match a few words.

    search_skills(query) -> {"query", "matches": [{"name", "description"}], "total_matches"}
                            | {"error", "error_code"}

The catalog in the system prompt fits `catalog_max_chars` by shortening every long
description to one common length (and, past that, by listing names only). This tool
is what keeps every skill within reach anyway: the model searches the skills' names
and whole descriptions with words from the request. It is offered only while the
catalog is incomplete (`ToolContext.catalog_incomplete`): with every description
whole it would add a schema to each request and find nothing new.

Ranking is plain word overlap, which a model's own query words suit well: a query
word in the name counts more than one in the description, a whole-name match most;
ties go by name so results are stable. At most `MAX_MATCHES` come back, with the
total, so the model knows when to narrow its query.
"""

from __future__ import annotations

import re
from typing import Any

from skillchat.skills.model import Skill
from skillchat.tools.base import Tool, ToolContext, ToolResult, function_schema, string_arg, to_json

SEARCH_SKILLS = "search_skills"
MAX_MATCHES = 10
# Words this short or this common match nearly every description and rank nothing.
_STOP = frozenset(
    {"an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on"}
    | {"or", "the", "to", "use", "with"}
)
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP}


def _score(skill: Skill, query: set[str], phrase: str) -> int:
    """How well `skill` matches: 0 is no match at all."""
    if skill.name == phrase:
        return 100
    name_words, description_words = _words(skill.name), _words(skill.model_description)
    score = 3 * len(query & name_words) + len(query & description_words)
    # A query word that starts a longer word ("deploy" in "deployment") still counts.
    rest = query - name_words - description_words
    every = name_words | description_words
    score += sum(1 for q in rest if len(q) > 3 and any(w.startswith(q) for w in every))
    return score


class SearchSkills(Tool):
    """Find skills by words; their descriptions come back whole."""

    name = SEARCH_SKILLS
    schema = function_schema(
        SEARCH_SKILLS,
        "Search all available skills by name and description. Returns the whole "
        "descriptions of the best matches (the available_skills list may shorten "
        "them). Use words from the user's request.",
        {"query": {"type": "string", "description": "A few words describing the task."}},
        ["query"],
    )

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        return bool(context.registry.skills) and context.catalog_incomplete

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        query = string_arg(args, "query")
        phrase = query.strip().lower()
        words = _words(query)
        ranked = sorted(
            (-score, skill.name, skill)
            for skill in context.registry.skills.values()
            if skill.model_invocable
            and skill.name not in context.unlisted  # its `paths` match no file: as the catalog
            and (score := _score(skill, words, phrase)) > 0
        )
        matches = [{"name": s.name, "description": s.model_description} for _, _, s in ranked]
        payload: dict[str, Any] = {
            "query": query,
            "matches": matches[:MAX_MATCHES],
            "total_matches": len(matches),
        }
        if len(matches) > MAX_MATCHES:
            payload["notice"] = f"showing the best {MAX_MATCHES}: add words to narrow the search"
        elif not matches:
            payload["notice"] = "no skill matches: try other words, or list_skills for every name"
        shown = ", ".join(m["name"] for m in matches[:MAX_MATCHES]) or "(no match)"
        return ToolResult(to_json(payload), preview=shown, size=len(matches))
