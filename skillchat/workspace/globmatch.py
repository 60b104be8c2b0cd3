"""Gitignore-style globs matched in bounded work: `.gitignore` lines and the globs of
`list_files`/`search_files`.

The rules are git's (ignore.py lists them: `*`, `?`, classes, `**/`, a trailing
`/**`, git's literal-prefix rule), but a regex engine given `(?:.*/)?` ten times over a
path 40 folders deep (`**/**/**/…/*.txt`) tries every way to split the path between
them: a model's glob, or a line in a cloned repository's `.gitignore`, must not hang
a search or a read for minutes. So the glob is compiled to a list
of steps and matched by keeping the set of steps every prefix of the path can be at
(a Thompson simulation): the work is at most (path length × glob length), whatever
the glob, with no backtracking. Each set met is numbered and each move between sets
remembered, so a glob costs one lookup per character. A run of `**/` is one step
(they mean the same), and the caller's deadline is checked as the path is read.

A glob with at most two repeats (`*`, `**/`, a trailing `**`) cannot backtrack far
(a failing match costs at most the path's length squared), so `re` runs it, faster.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from skillchat.errors import GlobTimeout

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "digit": "0-9",
    "lower": "a-z",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}

# Step kinds: one character ("lit" equal to `arg`, "one" any but '/', "class" matched
# by the compiled `arg`), or a repeat: "star" ([^/]*), "dirs" ((?:.*/)?), "all" (.*).
_REPEATS = ("star", "dirs", "all")
# The deadline is looked at once per this many characters of a path.
_CHECK_EVERY = 64
# A glob with at most this many repeats is run by `re`: with two, a failing match
# costs at most (path length)² steps, and most globs (`**/*.py`) are that simple.
_REGEX_REPEATS = 2
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


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """The regex for the class opening at `pattern[start] == '['` and the index after it,
    or None when it never closes."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            inner = "".join(body)
            # A class never matches '/': git matches paths, not names, with it.
            return (f"[^/{inner}]" if negate else f"(?:(?!/)[{inner}])"), i + 1
        first = False
        if c == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2 : end] if end != -1 else ""
            if name in _POSIX_CLASSES:
                body.append(_POSIX_CLASSES[name])
                i = end + 2
                continue
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            c = pattern[i]
        body.append(c if c == "-" else re.escape(c))
        i += 1
    return None


def _regex(step: _Step) -> str:
    """The step as a piece of regex, for `re` to run a glob with few repeats."""
    if step.kind == "lit":
        assert isinstance(step.arg, str)
        return re.escape(step.arg)
    if step.kind == "class":
        assert isinstance(step.arg, re.Pattern)
        return step.arg.pattern
    return {"one": "[^/]", "star": "[^/]*", "dirs": "(?:.*/)?", "all": ".*"}[step.kind]


def _steps(pattern: str, *, pathname: bool) -> list[_Step] | None:
    """The steps of a gitignore glob (without `!`, leading or trailing `/`); None when
    it can match nothing (a class that never closes, as in git's wildmatch).

    `pathname`: the pattern is matched against the whole path (it has a slash). Git
    then compares the literal prefix (up to the first `*?[\\`) as plain text and
    wildmatches only the rest, so a `**` right after that prefix counts as starting
    a segment: `a**/b` ignores `ab` (as `**/b` would `b`). Matched here to agree.
    """
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
            cls = _bracket(pattern, i)
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
    pattern: str,
    *,
    pathname: bool,
    deadline: float | None = None,
    regex_repeats: int = _REGEX_REPEATS,
) -> Callable[[str], bool]:
    """A test of whole strings against the glob `pattern`, in bounded work. Raises
    GlobTimeout when `deadline` (a `time.monotonic()` value) passes mid-match (only
    step by step: `re` runs only globs that cannot take long). A glob with at most
    `regex_repeats` repeats runs on `re` (-1: every glob step by step; the tests
    check that both ways agree)."""
    steps = _steps(pattern, pathname=pathname)
    if steps is None:
        return lambda text: False
    if sum(step.kind in _REPEATS for step in steps) <= regex_repeats:
        regex = re.compile("".join(map(_regex, steps)), re.DOTALL)
        return lambda text: regex.fullmatch(text) is not None
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
