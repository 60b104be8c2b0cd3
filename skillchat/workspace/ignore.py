"""Which workspace paths git would ignore: `.gitignore` files and `.git/info/exclude`.

The workspace tools must not hand the model what the user keeps out of git (build
output, `node_modules`, secrets in `.env.local`...). Asking `git check-ignore` would
need git installed and a repository, so the rules are implemented here, following
gitignore(5) and checked case by case against `git check-ignore`
(tests/test_gitignore.py):

- blank lines and `#` comments are skipped; `\\#` and `\\!` start a literal pattern;
  trailing spaces are dropped unless escaped (`\\ `);
- `!pattern` re-includes what an earlier pattern excluded;
- a trailing `/` matches directories only;
- a `/` at the start or in the middle anchors the pattern to the file's own folder;
  otherwise it matches a name at any depth below it;
- `*` and `?` never match `/`; `[a-z]`, `[!a-z]` and `[[:digit:]]`-style classes;
  `**/` is zero or more folders, a trailing `/**` everything inside, any other `**`
  is `*`; a class that never closes matches nothing, as in git; each line is matched
  in bounded work (globmatch.py), so a hostile `**/**/…` line cannot hang a walk;

- a deeper `.gitignore` overrides a shallower one, `.git/info/exclude` comes last;
  within one file the last matching line wins;
- inside an ignored folder everything is ignored, whatever a `!` line says (git never
  looks into one, so neither do we): every folder on the way is checked first.

git matches bytes, not characters: a `.gitignore` is not text in any encoding, and
`?` matches one byte of a name. So both sides are read as Latin-1 (one character per
byte, any byte sequence decodes): a Latin-1 `caf\\xe9` pattern matches the file
whose name is those bytes, and `caf?` does not match a UTF-8 `café` (two bytes).

A rules file that exists but cannot be read (unreadable, not a regular file, a link
leading out, NUL bytes, over `MAX_IGNORE_FILE_BYTES`) fails closed: `IgnoreFileError`
for every path below its folder, until it can be read. Serving files its rules may
have excluded would be the worse mistake. Not read: the user's global excludes file
(it is about one user, not the project).

Why not the `pathspec` library: measured against `git check-ignore`, pathspec 1.1.1
got 4 of this file's 62 cases wrong (`[[:digit:]]` classes are not supported, a
class can match '/', `a/**/` ignores files directly in `a`, a lone `!` line raises),
the first of them serving files git ignores. Matching is case-sensitive, as git's
default on Linux.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillchat.errors import IgnoreFileError
from skillchat.workspace.globmatch import compile_pattern

# A rules file past this is not a real one; refusing it beats reading half of it.
MAX_IGNORE_FILE_BYTES = 1024 * 1024
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Rule:
    """One pattern line of a `.gitignore`."""

    matches: Callable[[str], bool]  # a whole name or path, in bounded work (globmatch.py)
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the whole path below the file's folder, not a name
    pattern: str  # the glob (its `!` and slashes taken off)


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
    line = line[:-1] if dir_only else line  # one slash, as git: `a//` is `a/`, matching nothing
    if not line:
        return None
    anchored = "/" in line
    line = line[1:] if line.startswith("/") else line  # one slash, as git: `//a` matches nothing
    if not line:
        return None
    return Rule(compile_pattern(line, pathname=anchored), negated, dir_only, anchored, line)


@dataclass(frozen=True)
class Rules:
    """The patterns of one rules file, or why it could not be read."""

    rules: tuple[Rule, ...] = ()
    error: str | None = None

    def verdict(self, parts: Sequence[str], is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by a `!` line) or None (no line matches)
        for the path `parts` (Latin-1 names) relative to the file's folder."""
        rel = None  # joined only for a rule that needs the whole path
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.anchored:
                rel = "/".join(parts) if rel is None else rel
                matched = rule.matches(rel)
            else:
                matched = rule.matches(parts[-1])
            if matched:
                return not rule.negated
        return None


NO_RULES = Rules()


def parse_rules(data: bytes) -> Rules:
    """The rules of a `.gitignore` file's bytes, lines split as git splits them."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    lines = data.decode("latin-1").split("\n")
    return Rules(tuple(rule for line in lines if (rule := parse_rule(line)) is not None))


def as_bytes_path(rel: str) -> str:
    """A path as the file system names it, one character per byte (see the module)."""
    return rel if rel.isascii() else os.fsencode(rel).decode("latin-1")


# The rules files that apply in one folder: (depth of their folder, rules), root first,
# only folders that have rules. A walk extends it folder by folder.
Chain = tuple[tuple[int, Rules], ...]


class GitIgnore:
    """The ignore rules of one tree.

    `load(folder)` gives the `.gitignore` rules of `folder` (a '/'-joined path below
    the root, '' for the root; `NO_RULES` if there is none); `exclude` are the rules
    of `.git/info/exclude`, relative to the root. Cache `load` when a walk asks
    about many paths.
    """

    def __init__(self, load: Callable[[str], Rules], exclude: Rules = NO_RULES) -> None:
        self._load = load
        self._exclude = exclude

    @staticmethod
    def extend(chain: Chain, depth: int, folder: str, rules: Rules) -> Chain:
        """`chain` with the rules of the folder `folder` at `depth` (raises
        `IgnoreFileError` when they could not be read)."""
        if rules.error is not None:
            raise IgnoreFileError(folder, ".gitignore", rules.error)
        return (*chain, (depth, rules)) if rules.rules else chain

    def chain(self, parts: Sequence[str]) -> Chain:
        """The rules that apply in the folder `parts` (Latin-1 names), root first."""
        if self._exclude.error is not None:
            raise IgnoreFileError("", ".git/info/exclude", self._exclude.error)
        chain: Chain = ()
        for depth in range(len(parts) + 1):
            folder = "/".join(parts[:depth])
            chain = self.extend(chain, depth, folder, self._load(folder))
        return chain

    def ignored_entry(self, chain: Chain, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether the entry `parts` (Latin-1 names, see `as_bytes_path`) itself
        matches, in a folder whose rules are `chain`: the deepest rules file first,
        `.git/info/exclude` last. Its folders are the caller's business."""
        for depth, rules in reversed(chain):
            verdict = rules.verdict(parts[depth:], is_dir)
            if verdict is not None:
                return verdict
        return self._exclude.verdict(parts, is_dir) is True

    def ignored(self, rel: str, *, is_dir: bool = False) -> bool:
        """Whether git would ignore the '/'-separated path `rel` (a file unless `is_dir`).

        Every folder on the way is checked first: inside an ignored folder everything
        is ignored. Raises `IgnoreFileError` when a rules file on the way is unreadable.
        """
        parts = [p for p in as_bytes_path(rel).split("/") if p]
        for end in range(1, len(parts) + 1):
            chain = self.chain(parts[: end - 1])
            if self.ignored_entry(chain, parts[:end], is_dir or end < len(parts)):
                return True
        return False
