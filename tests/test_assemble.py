"""Tool-call assembly from streamed fragments, for every way providers stream them."""

from __future__ import annotations

import itertools
import random

from hypothesis import given
from hypothesis import strategies as st

from skillchat.engine.assemble import Assembler, assemble
from skillchat.engine.events import Delta, ToolCallFragment, Usage


def frag(
    index: int | None, id: str | None = None, name: str | None = None, arguments: str | None = None
) -> Delta:
    return Delta(tool_calls=(ToolCallFragment(index, id, name, arguments),))


def chunked(text: str, cuts: list[int]) -> list[str]:
    """`text` split at the given positions (pieces may be empty)."""
    points = sorted({min(c, len(text)) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def test_text_is_joined_and_reported_as_it_arrives() -> None:
    seen: list[str] = []
    deltas = [
        Delta(text="Hel"),
        Delta(text="lo"),
        Delta(finish_reason="stop"),
        Delta(usage=Usage(3, 2, 5)),
    ]
    result = assemble(deltas, on_text=seen.append)
    assert seen == ["Hel", "lo"]
    assert (result.text, result.finish_reason, result.usage) == ("Hello", "stop", Usage(3, 2, 5))
    assert result.tool_calls == []


def test_openai_style_parallel_calls_by_index() -> None:
    result = assemble(
        [
            frag(0, "call_a", "get_skill", ""),
            frag(0, arguments='{"skill_name": '),
            frag(1, "call_b", "list_skills", ""),
            frag(0, arguments='"pdf"}'),
            frag(1, arguments="{}"),
            Delta(finish_reason="tool_calls"),
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_a", "get_skill", '{"skill_name": "pdf"}'),
        ("call_b", "list_skills", "{}"),
    ]


def test_calls_all_at_index_zero_with_distinct_ids_do_not_merge() -> None:
    result = assemble(
        [
            frag(0, "x", "get_skill"),
            frag(0, arguments='{"skill_name": "a"}'),
            frag(0, "y", "get_skill"),
            frag(0, arguments='{"skill_name": "b"}'),
        ]
    )
    assert [(c.id, c.arguments) for c in result.tool_calls] == [
        ("x", '{"skill_name": "a"}'),
        ("y", '{"skill_name": "b"}'),
    ]


def test_repeated_id_and_name_on_every_fragment_continue_the_call() -> None:
    result = assemble([frag(0, "x", "get_skill", '{"a"'), frag(0, "x", "get_skill", ": 1}")])
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("x", "get_skill", '{"a": 1}')
    ]


def test_index_none_continues_the_last_call_and_missing_ids_are_filled() -> None:
    result = assemble(
        [
            frag(None, name="list_skills"),
            frag(None, arguments=""),
            frag(None, None, "get_skill"),
            frag(None, arguments='{"a": 1}'),
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_0", "list_skills", "{}"),
        ("call_1", "get_skill", '{"a": 1}'),
    ]


def test_empty_arguments_become_an_empty_object() -> None:
    result = assemble([frag(0, "x", "list_skills", ""), frag(0, arguments="  ")])
    assert result.tool_calls[0].arguments == "{}"


def test_assembler_keeps_what_arrived_when_interrupted() -> None:
    assembler = Assembler()
    for delta in [Delta(text="partial "), frag(0, "x", "get_skill", '{"skill')]:
        assembler.add(delta)
    reply = assembler.reply()
    assert reply.text == "partial " and reply.finish_reason is None
    assert reply.tool_calls[0].arguments == '{"skill'


@given(
    calls=st.lists(
        st.tuples(st.text(min_size=1, max_size=40), st.lists(st.integers(0, 60))),
        min_size=1,
        max_size=5,
    ),
    same_index=st.booleans(),
    text_cuts=st.lists(st.integers(0, 30)),
    text=st.text(max_size=30),
)
def test_any_split_reassembles_exactly(
    calls: list[tuple[str, list[int]]], same_index: bool, text_cuts: list[int], text: str
) -> None:
    """However the text and each call's arguments are cut into chunks (empty pieces
    included), the assembled reply holds exactly what was sent, calls in order."""
    deltas = [Delta(text=piece) for piece in chunked(text, text_cuts)]
    for n, (arguments, cuts) in enumerate(calls):
        index = 0 if same_index else n
        deltas.append(frag(index, f"id{n}", f"tool{n}", ""))
        deltas += [frag(index, arguments=piece) for piece in chunked(arguments, cuts)]
    result = assemble(deltas)
    assert result.text == text
    expected = [(f"id{n}", f"tool{n}", a if a.strip() else "{}") for n, (a, _) in enumerate(calls)]
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == expected


@given(
    calls=st.lists(
        st.tuples(st.text(min_size=2, max_size=40), st.lists(st.integers(0, 60))),
        min_size=2,
        max_size=4,
    ),
    rng=st.randoms(use_true_random=False),
)
def test_interleaved_calls_with_distinct_indexes(
    calls: list[tuple[str, list[int]]], rng: random.Random
) -> None:
    """OpenAI-style calls (id only on the first fragment) interleaved in any order:
    each fragment without id goes to the call of its index."""
    streams = [
        [frag(n, f"id{n}", f"tool{n}", "")] + [frag(n, arguments=p) for p in chunked(a, cuts)]
        for n, (a, cuts) in enumerate(calls)
    ]
    deltas = []
    while any(streams):
        pick = rng.choice([s for s in streams if s])
        deltas.append(pick.pop(0))
    result = assemble(deltas)
    assert sorted((c.id, c.arguments) for c in result.tool_calls) == sorted(
        (f"id{n}", a if a.strip() else "{}") for n, (a, _) in enumerate(calls)
    )
