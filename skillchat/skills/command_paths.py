"""Which file a command runs, for the `allowed-tools` rules that name a skill's own
files: reading rule words, command words, folders and `*` patterns as paths
(allowed_tools.py parses the rules, splits command lines and applies the policy).

A rule such as `Bash(python3 scripts/fill.py:*)` means the skill's
`scripts/fill.py`. Inside the sandbox that file is `/skills/NAME/scripts/fill.py`,
while a command starts in `/workspace` (or `/scratch`), where `scripts/fill.py` is
whatever the user's repository holds. So a rule word that names a file of the skill
is compared by *where it leads*: a command word matches it when, read from the
folder that command runs in, it resolves to that very file. `python3
/skills/NAME/scripts/fill.py`, `cd /skills/NAME && python3 scripts/fill.py` and
`cd "$SKILL_DIR" && python scripts/fill.py` match; `python3 scripts/fill.py` run
from the workspace does not. Likewise `python3 -m MODULE`, when MODULE is the
skill's, matches only when run from the skill's folder (Python imports it from the
folder it runs in).

Anything that cannot be read with certainty resolves to nothing, so it never
matches (the user is asked): a word holding `$`, `~`, a glob or brace character,
or a `..` component (the kernel follows `..` through symlinks, a lexical reading
does not), and any folder after shell state that could move it (see
`working_folders`).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# `python`, `python3`, `python3.12`: one interpreter, however the model spells it.
PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")
# `$SKILL_DIR` or `${SKILL_DIR}` as bash expands it (the run's environment sets it).
_SKILL_DIR_VAR = re.compile(r"\$(?:\{SKILL_DIR\}|SKILL_DIR(?![A-Za-z0-9_]))")
_OTHER_VAR = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[-$!#?@*0-9])")
# Characters that make bash rewrite a word (expansion, globbing, braces, home).
_UNSURE = frozenset("$~*?[]{}\\")
# First words after which the shell's folder or variables may have moved in ways
# not followed here: builtins that change the folder, run code in this shell,
# set variables (`CDPATH`, `SKILL_DIR`), and reserved words that open compounds.
_SHELL_STATE_WORDS = """pushd popd source . eval builtin command exec trap enable hash export
declare typeset readonly local unset set shopt alias read mapfile readarray printf getopts let
! { } if then else elif fi case esac for select while until do done function time coproc [[ ]]"""
_SHELL_STATE = frozenset(_SHELL_STATE_WORDS.split())
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@dataclass(frozen=True)
class Place:
    """Where one command runs: the claimed skill's folder in the sandbox
    (`/skills/NAME`), the same folder on the host (to tell which rule words name its
    files), and the folder the command starts in (`/workspace` or `/scratch`)."""

    skill_dir: str
    root: Path
    cwd: str

    def inside(self, path: str) -> bool:
        return path == self.skill_dir or path.startswith(self.skill_dir + "/")

    def has(self, path: str) -> bool:
        """Whether `path` (in the sandbox) is an entry of the skill's folder."""
        if not path.startswith(self.skill_dir + "/"):
            return False
        try:
            return os.path.lexists(self.root / path[len(self.skill_dir) + 1 :])
        except (OSError, ValueError):
            return False


def expand_skill_dir(command: str, skill_dir: str) -> str:
    """`command` with each `$SKILL_DIR` / `${SKILL_DIR}` that bash would expand
    replaced by its value. One in single quotes or after a backslash stays as
    written, so its word keeps a `$` and resolves to nothing. A line with ANSI-C or
    locale quoting (`$'...'`, `$"..."`) is left whole: its quotes are not read here."""
    if "$'" in command or '$"' in command:
        return command
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        char = command[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            out.append(command[i : i + 2])
            i += 2
            continue
        elif char == '"' or (char == "'" and not quote):
            quote = "" if quote == char else char
        elif char == "$":
            if found := _SKILL_DIR_VAR.match(command, i):
                out.append(skill_dir)
                i = found.end()
                continue
            if other := _OTHER_VAR.match(command, i):  # `$$SKILL_DIR` is the pid + text
                out.append(other.group())
                i = other.end()
                continue
        out.append(char)
        i += 1
    return "".join(out)


def changes_shell_state(words: list[str]) -> bool:
    """Whether a simple command may move the shell's folder or change its variables
    (anything but `cd`, which `working_folders` follows)."""
    return words[0] in _SHELL_STATE or _ASSIGNMENT.match(words[0]) is not None


def resolve(word: str, cwd: str | None) -> str | None:
    """The absolute path `word` names when read from `cwd`, or None when that is not
    certain (an unknown folder, `..`, or a character bash would rewrite)."""
    if not word or any(char in _UNSURE for char in word):
        return None
    if not word.startswith("/"):
        if cwd is None:
            return None
        word = f"{cwd}/{word}"
    if ".." in word.split("/") or word.startswith("//"):
        return None
    return posixpath.normpath(word)


def working_folders(
    parts: list[list[str]], operators: list[str], place: Place
) -> tuple[list[str | None], list[bool]]:
    """The folder each simple command runs in (None: not certain), and which of them
    are a `cd` into the skill's own folder, which runs nothing and needs no rule.

    A `cd DIR` counts only where bash is sure to have run it before what follows: at
    the start of the line or after `;`, `&` or `&&`, and followed by `&&`. After
    `;`, `||` or `&`, a moved folder is no longer certain (the `cd` may have
    failed, or run in the background), nor is anything after a builtin that may
    move it or change variables (`pushd`, `source`, `export CDPATH=...`)."""
    cwd: str | None = place.cwd
    moved = False
    folders: list[str | None] = []
    skill_cds: list[bool] = []
    for index, words in enumerate(parts):
        before = operators[index - 1] if index else ";"
        after = operators[index] if index < len(operators) else ";"
        if moved and before not in ("&&", "|", "|&"):
            cwd = None
        folders.append(cwd)
        into_skill = False
        if words[0] == "cd":
            ordered = before in (";", "&", "&&") and after == "&&"
            certain = ordered and len(words) == 2 and not words[1].startswith("-")
            cwd = resolve(words[1], cwd) if certain and cwd is not None else None
            into_skill = cwd is not None and place.inside(cwd)
            moved = True
        elif changes_shell_state(words):
            cwd, moved = None, True
        skill_cds.append(into_skill)
    return folders, skill_cds


def rule_target(word: str, place: Place | None, *, program: bool) -> str | None:
    """The skill file a rule word names, as the sandbox sees it
    (`/skills/NAME/scripts/fill.py`); "" when it is a path that names no file of the
    skill for certain (it climbs out with `..`, or no skill is known), so nothing
    matches it; None when it is a plain word, compared as written.

    A relative word names a file of the skill when its first part is an entry of
    the skill's folder: `scripts/fill.py` when the skill has `scripts`, `./run.sh`,
    `fill.py` when it has that file. So is `/skills/NAME/...` or `$SKILL_DIR/...`.
    A path the skill does not have (`bin/rails`, `@scope/pkg`, a URL) is a plain
    word, as in Claude Code: it means whatever the command's folder holds. A
    program (the first word) is a path only with a `/`: a bare name is looked up in
    PATH. Options (`-x`, `--out=a/b`) are plain words."""
    if place is not None:
        word = _SKILL_DIR_VAR.sub(lambda _: place.skill_dir, word)
    if word.startswith(("-", "~")) or (program and "/" not in word):
        return None
    if word.startswith("/"):
        if place is None or not place.inside(word):
            return None
        return resolve(word, None) or ""
    parts = [part for part in word.split("/") if part not in ("", ".")]
    if not parts or (parts == [".."] and "/" not in word):
        return None  # `.` and `..`: the folder the command runs in
    if place is None or parts[0] == ".." or any(char in _UNSURE for char in parts[0]):
        return "" if "/" in word else None
    if not place.has(f"{place.skill_dir}/{parts[0]}"):
        return None
    target = posixpath.normpath(f"{place.skill_dir}/{word}")
    return target if place.inside(target) and target != place.skill_dir else ""


def program(word: str) -> str:
    """A first word, with every spelling of the Python interpreter made one."""
    return "python3" if PYTHON.fullmatch(word) else word


def runs_skill_module(words: tuple[str, ...], place: Place | None) -> bool:
    """Whether the rule is `python -m MODULE ...` with MODULE a package or module of
    the skill's own folder (`scripts.fill`): Python finds it in the folder the
    command runs in, so the command must run in the skill's folder."""
    if place is None or not words or not PYTHON.fullmatch(words[0]) or "-m" not in words:
        return False
    at = words.index("-m") + 1
    top = words[at].split(".")[0] if at < len(words) else ""
    return bool(top) and any(place.has(f"{place.skill_dir}/{n}") for n in (top, f"{top}.py"))


@lru_cache(maxsize=512)
def _wildcard(text: str) -> re.Pattern[str]:
    """`*` as any characters; a single trailing ` *` is optional."""
    head, star, tail = text.rpartition(" *")
    optional_tail = star and not tail and "*" not in head
    parts = (head if optional_tail else text).split("*")
    pattern = ".*".join(re.escape(p) for p in parts) + ("( .*)?" if optional_tail else "")
    return re.compile(pattern, re.S)


def wildcard_matches(text: str, words: list[str], place: Place | None, cwd: str | None) -> bool:
    """A `*` rule matches the command's text. When the rule names files of the skill,
    both sides are compared with the skill's files made absolute: each such rule word
    becomes `/skills/NAME/...`, and so does each command word that leads into the
    skill's folder from `cwd`; a word with a `/` that does not lead anywhere for
    certain fails (a `*` must not stretch over a `..`)."""
    tokens = text.split()
    targets = [rule_target(t, place, program=i == 0) for i, t in enumerate(tokens)]
    if "" in targets:
        return False
    if all(target is None for target in targets):
        return _wildcard(_program_text(text)).fullmatch(_joined(words)) is not None
    rule = " ".join(
        target or (program(t) if i == 0 else t)
        for i, (t, target) in enumerate(zip(tokens, targets, strict=True))
    )
    canonical: list[str] = []
    for index, word in enumerate(words):
        path = None if word.startswith("-") else resolve(word, cwd)
        if "/" in word and not word.startswith("-") and path is None:
            return False
        if path and place and (place.inside(path) if "/" in word else index and place.has(path)):
            word = path  # a file of the skill (`cd /skills/NAME && bash fill.sh` too)
        canonical.append(program(word) if index == 0 else word)
    return _wildcard(rule).fullmatch(shlex.join(canonical)) is not None


def _program_text(text: str) -> str:
    first, space, rest = text.partition(" ")
    return program(first) + space + rest


def _joined(words: list[str]) -> str:
    return shlex.join([program(words[0]), *words[1:]])
