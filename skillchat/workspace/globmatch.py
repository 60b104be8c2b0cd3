"""A gitignore-style glob matched without backtracking, for `list_files`/`search_files`.

The glob's rules are `ignore.translate`'s (`*`, `?`, classes, `**/`, a trailing `/**`,
git's literal-prefix rule), but a regex engine given `(?:.*/)?` ten times over a path
40 folders deep (`**/**/**/…/*.txt`) tries every way to split the path between them:
a model's glob must not hang a search for minutes. So the glob is compiled to a list
of steps and matched by keeping the set of steps every prefix of the path can be at
(a Thompson simulation): the work is at most (path length × glob length), whatever
the glob, with no backtracking. Each set met is numbered and each move between sets
remembered, so a common glob costs one lookup per character. A run of `**/` is one
step (they mean the same), and the caller's deadline is checked as the path is read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from skillchat.errors import GlobTimeout
from skillchat.workspace.ignore import bracket

# Step kinds: one character ("lit" equal to `arg`, "one" any but '/', "class" matched
# by the compiled `arg`), or a repeat: "star" ([^/]*), "dirs" ((?:.*/)?), "all" (.*).
_REPEATS = ("star", "dirs", "all")
# The deadline is looked at once per this many characters of a path.
_CHECK_EVERY = 64
# Past this many sets of steps remembered, a new match forgets them (memory bound).
_MAX_SETS = 10_000


@dataclass(frozen=True)
class _Step:
    kind: str
    arg: str | re.Pattern[str] | None = None

    def takes(self, c: str) -> bool:
        if self.kind == "lit":
            return c == self.arg
        if self.kind == "class":
            assert isinstance(self.arg, re.Pattern)
            return self.arg.fullmatch(c) is not None
        return self.kind == "all" or self.kind == "dirs" or c != "/"


def _steps(pattern: str, *, pathname: bool) -> list[_Step] | None:
    """The steps of `pattern`, as `ignore.translate` reads it; None when it can
    match nothing (a class that never closes)."""
    steps: list[_Step] = []
    i, n = 0, len(pattern)
    literal = next((k for k, ch in enumerate(pattern) if ch in "*?[\\"), n)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars, after = j - i, pattern[j : j + 1]
            at_segment_start = i == 0 or pattern[i - 1] == "/" or (pathname and i == literal)
            if stars >= 2 and at_segment_start and after == "/":
                if not steps or steps[-1].kind != "dirs":  # '**/**/' is '**/'
                    steps.append(_Step("dirs"))
                j += 1
            elif stars >= 2 and at_segment_start and after == "":
                steps.append(_Step("all"))
            else:
                steps.append(_Step("star"))
            i = j
        elif c == "?":
            steps.append(_Step("one"))
            i += 1
        elif c == "[":
            cls = bracket(pattern, i)
            if cls is None:
                return None
            steps.append(_Step("class", re.compile(cls[0], re.DOTALL)))
            i = cls[1]
        elif c == "\\" and i + 1 < n:
            steps.append(_Step("lit", pattern[i + 1]))
            i += 2
        else:
            steps.append(_Step("lit", c))
            i += 1
    return steps


def compile_pattern(
    pattern: str, *, pathname: bool, deadline: float | None = None
) -> Callable[[str], bool]:
    """A test of whole strings against the glob `pattern` (what `re.fullmatch` of
    `ignore.translate(pattern, pathname=...)` says, in bounded work). Raises
    GlobTimeout when `deadline` (a `time.monotonic()` value) passes mid-match."""
    steps = _steps(pattern, pathname=pathname)
    if steps is None:
        return lambda text: False
    end = len(steps)
    # A state is a step index; a "dirs" step that has read a name but not yet its
    # '/' is the state -1 - index (it may not be skipped until the '/' comes).

    def close(states: set[int]) -> set[int]:
        """Add the states reached without reading: a repeat may match nothing."""
        out, todo = set(states), list(states)
        while todo:
            i = todo.pop()
            if 0 <= i < end and steps[i].kind in _REPEATS and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return out

    def step(states: set[int], c: str) -> set[int]:
        nxt: set[int] = set()
        for s in states:
            i = s if s >= 0 else -1 - s
            if i >= end or not steps[i].takes(c):
                continue
            kind = steps[i].kind
            if kind == "dirs" and c != "/":
                nxt.add(-1 - i)
            else:
                nxt.add(i if kind in _REPEATS else i + 1)
        return close(nxt)

    # The sets met so far, each named by a number, and the moves between them: each
    # move is computed once (a lazily built DFA), so a path costs a lookup a character.
    ids: dict[frozenset[int], int] = {}
    sets: list[frozenset[int]] = []
    moves: dict[tuple[int, str], int] = {}

    def named(states: set[int]) -> int:
        key = frozenset(states)
        if key not in ids:
            ids[key] = len(sets)
            sets.append(key)
        return ids[key]

    start = named(close({0}))
    dead = named(set())

    def matches(text: str) -> bool:
        if len(sets) > _MAX_SETS:  # a glob that keeps making new sets: start over
            moves.clear()
            del sets[2:]
            for key in [k for k, v in ids.items() if v >= 2]:
                del ids[key]
        here = start
        for k, c in enumerate(text):
            if deadline is not None and k % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise GlobTimeout
            there = moves.get((here, c))
            if there is None:
                there = moves[here, c] = named(step(set(sets[here]), c))
            if there == dead:
                return False
            here = there
        return end in sets[here]

    return matches
