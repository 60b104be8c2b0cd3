"""`/name rest` parsing: known skills only, `/skill NAME` always a skill."""

from __future__ import annotations

import pytest

from skillchat.engine.invocation import Invocation, parse_invocation
from skillchat.errors import UsageError

SKILLS = {"calculator", "pdf", "skill-creator"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/calculator what is 2+2", Invocation("calculator", "what is 2+2", "what is 2+2")),
        (
            "/pdf\n\nsummarise this\nplease",
            Invocation("pdf", "summarise this\nplease", "summarise this\nplease"),
        ),
        ("/pdf\tx", Invocation("pdf", "x", "x")),
        # Nothing after the name: the message stays "/pdf" (providers refuse empty text).
        ("/pdf", Invocation("pdf", "", "/pdf")),
        ("/pdf   ", Invocation("pdf", "", "/pdf")),
        ("/skill pdf read it", Invocation("pdf", "read it", "read it")),
        ("/skill skill-creator", Invocation("skill-creator", "", "/skill skill-creator")),
    ],
)
def test_known_skill_is_invoked_and_prefix_stripped(text: str, expected: Invocation) -> None:
    assert parse_invocation(text, SKILLS) == expected


@pytest.mark.parametrize(
    "text",
    [
        "/etc/hosts is broken",  # a path, not a skill
        "/unknown do it",
        "/pdfx nope",  # a prefix of nothing known
        "/pdf: colon",  # the token is "pdf:"
        "please /pdf this",  # not at the start
        " /pdf leading space",
        "pdf",
        "",
        "/",
    ],
)
def test_anything_else_is_plain_text(text: str) -> None:
    assert parse_invocation(text, SKILLS) is None


def test_skill_command_with_unknown_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown skill 'nope'"):
        parse_invocation("/skill nope do it", SKILLS)
    with pytest.raises(UsageError, match="needs a skill name"):
        parse_invocation("/skill", SKILLS)


def test_a_skill_named_skill_is_still_reachable() -> None:
    skills = SKILLS | {"skill"}
    assert parse_invocation("/skill pdf x", skills) == Invocation("pdf", "x", "x")
    assert parse_invocation("/skill write one", skills) == Invocation(
        "skill", "write one", "write one"
    )
