"""`.gitignore` rules, in pure Python: which workspace paths git would ignore.

The workspace tool must not hand the model what the user keeps out of git (build
output, `node_modules`, secrets in `.env.local`...). Asking `git check-ignore` would
need git installed and a repository; these rules are small enough to implement,
following gitignore(5):

- blank lines and `#` comments are skipped; `\\#` and `\\!` start a literal pattern;
  trailing spaces are dropped unless escaped (`\\ `);
- `!pattern` re-includes what an earlier pattern excluded, except inside an excluded
  directory (git never looks into one, so neither do we);
- a trailing `/` matches directories only;
- a `/` at the start or in the middle anchors the pattern to the `.gitignore`'s own
  folder; otherwise it matches a name at any depth below it;
- `*` and `?` never match `/`; `[a-z]`, `[!a-z]` and `[[:digit:]]`-style classes;
  `**/` is zero or more folders, a trailing `/**` everything inside, any other `**`
  is `*`; a class that never closes matches nothing, as in git;
- a deeper `.gitignore` overrides a shallower one, and within one file the last
  matching line wins.

Not read: `.git/info/exclude` and the user's global excludes file (they are about
one clone or one user, not the project). Matching is case-sensitive, as git's
default on Linux.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Rule:
    """One pattern line of a `.gitignore`."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the whole path below the file's folder, not a name


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


def translate(pattern: str) -> str:
    """A gitignore glob (without `!`, leading or trailing `/`) as a regex body."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars, after = j - i, pattern[j : j + 1]
            at_segment_start = i == 0 or pattern[i - 1] == "/"
            if stars >= 2 and at_segment_start and after == "/":
                out.append("(?:.*/)?")  # '**/': zero or more folders
                j += 1
            elif stars >= 2 and at_segment_start and after == "":
                out.append(".*")  # trailing '/**' (or a lone '**'): everything below
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls = _bracket(pattern, i)
            if cls is None:  # git's wildmatch: an unclosed class matches nothing
                return "(?!)"
            out.append(cls[0])
            i = cls[1]
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _strip_trailing_spaces(line: str) -> str:
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def parse_rule(line: str) -> Rule | None:
    """The rule of one `.gitignore` line, or None for blanks and comments."""
    line = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith(("\\#", "\\!")):  # '!' or the escape goes
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    regex = re.compile(translate(line), re.DOTALL)
    return Rule(regex, negated, dir_only, anchored)


def parse_rules(text: str) -> tuple[Rule, ...]:
    """Every rule of a `.gitignore` file's text, in order."""
    return tuple(rule for line in text.splitlines() if (rule := parse_rule(line)) is not None)


def _verdict(rules: Sequence[Rule], rel: str, is_dir: bool) -> bool | None:
    """True (ignored), False (re-included) or None (no rule matches) for `rel`,
    a path relative to the folder of the file that holds `rules`."""
    name = rel.rsplit("/", 1)[-1]
    for rule in reversed(rules):
        if rule.dir_only and not is_dir:
            continue
        if rule.regex.fullmatch(rel if rule.anchored else name):
            return not rule.negated
    return None


class GitIgnore:
    """The ignore rules of one tree. `load(folder)` gives the rules of the `.gitignore`
    in `folder` (a '/'-joined path below the root, '' for the root; () if none)."""

    def __init__(self, load: Callable[[str], tuple[Rule, ...]]) -> None:
        self._load = load

    def _ignored_entry(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether the entry `parts` itself matches, deepest `.gitignore` first."""
        for depth in range(len(parts) - 1, -1, -1):
            folder = "/".join(parts[:depth])
            verdict = _verdict(self._load(folder), "/".join(parts[depth:]), is_dir)
            if verdict is not None:
                return verdict
        return False

    def ignored(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether git would ignore the '/'-separated path `rel` (a file unless `is_dir`).

        Every folder on the way is checked first: inside an ignored folder everything
        is ignored, whatever a `!` line says.
        """
        parts = [p for p in rel.split("/") if p]
        for end in range(1, len(parts) + 1):
            if self._ignored_entry(parts[:end], is_dir or end < len(parts)):
                return True
        return False
