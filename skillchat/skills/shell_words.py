"""A word put into a skill's inline command as data: quoted for where it stands.

A `/name` argument filled into `` !`…` `` (tools/inline_commands.py) must reach the
command as the word the user typed, never as shell code: `$(…)`, backquotes, `;`,
a newline or a quote in it are characters. How to quote a word depends on where the
skill's own text puts it, so the command is read first, as bash reads it:

- unquoted (also inside `$(…)` or `( … )`): `shlex.quote`, one single-quoted word;
- inside `'…'`: each `'` closed, escaped and reopened (`'\\''`);
- inside `"…"`: `\\`, `$`, backquote and `"` escaped with a backslash;
- in a `#` comment: line breaks become spaces (a newline would end the comment).

Where bash reads a word again as code, no quoting holds: `$((…))`, `$[…]`, `((…))`,
`[[ … ]]`, `let`, `declare`, `typeset` and `local` evaluate `a[$(cmd)]` even inside
quotes, and quoting rules differ inside backquotes, `${…}`, `$'…'` and
here-documents (and after `case`, whose patterns end in an unmatched `)`). A
placeholder anywhere after one of those is refused (ToolArgumentError): the command
is not run, and the body says why. The skill's own text is never changed, only the
words put into it. What a program then does with the word it gets (`eval`, `bash
-c`, a variable name for `unset` or `read`) is that program's reading, as it would
be of any word the skill wrote there.
"""

from __future__ import annotations

import re
import shlex

from skillchat.errors import ToolArgumentError

PLAIN, PAREN, SINGLE, DOUBLE, COMMENT = "plain", "paren", "single", "double", "comment"
ESCAPED = "a backslash"
_WORD_START = " \t\n;&|()<>"
# Where bash reads words again as code, or quotes work otherwise: a placeholder
# anywhere after one is refused. Inside "…", only those starting with $ or ` count.
_CODE_AGAIN = (
    ("$((", "arithmetic $((…))"),
    ("$[", "arithmetic $[…]"),
    ("((", "arithmetic ((…))"),
    ("${", "${…}"),
    ("$'", "$'…'"),
    ("`", "backquotes"),
    ("<<", "a here-document"),
)
# The same, as words that start a command. `case` too: its patterns' unmatched `)`
# would make the rest of the line be read at the wrong depth.
_COMMANDS = ("[[", "let", "declare", "typeset", "local", "case")
_DOUBLE_SPECIAL = re.compile(r'([\\$`"])')


def contexts(command: str) -> list[str]:
    """Where each character of `command` stands, as bash reads it: PLAIN, SINGLE,
    DOUBLE, COMMENT, ESCAPED (right after a backslash), or, from the first such
    construct on, the name of a construct where a word cannot be made data."""
    stack = [PLAIN]
    out: list[str] = []
    i = 0
    while i < len(command):
        top = stack[-1]
        char = command[i]
        out.append(PLAIN if top == PAREN else top)
        i += 1
        if top == SINGLE:
            if char == "'":
                stack.pop()
        elif top == COMMENT:
            if char == "\n":
                stack.pop()
        elif char == "\\":
            out.append(ESCAPED)
            i += 1
        elif top == DOUBLE and char == '"':
            stack.pop()
        elif (refused := _refused_at(command, i - 1, top)) is not None:
            return out[: i - 1] + [refused] * (len(command) - i + 1)
        elif command.startswith("$(", i - 1):
            out.append(out[-1])  # the `(`
            i += 1
            stack.append(PAREN)
        elif top == DOUBLE:
            continue
        elif char in "'\"":
            stack.append(SINGLE if char == "'" else DOUBLE)
        elif char == "(":
            stack.append(PAREN)
        elif char == ")" and top == PAREN:
            stack.pop()
        elif char == "#" and _word_start(command, i - 1):
            stack.append(COMMENT)
    return out[: len(command)]


def _word_start(command: str, i: int) -> bool:
    return i == 0 or command[i - 1] in _WORD_START


def _refused_at(command: str, i: int, top: str) -> str | None:
    """The construct starting at `i` after which no placeholder is quoted, if any."""
    for start, name in _CODE_AGAIN:
        if command.startswith(start, i) and (top != DOUBLE or start[0] in "$`"):
            return name
    if top != DOUBLE and _word_start(command, i):
        for word in _COMMANDS:
            after = command[i + len(word) : i + len(word) + 1]
            if command.startswith(word, i) and after in ("", " ", "\t"):
                return word
    return None


def quoted(value: str, context: str) -> str:
    """`value` as one word of data where `context` (from `contexts`) says it stands;
    ToolArgumentError where no quoting holds."""
    if context == PLAIN:
        return shlex.quote(value)
    if context == SINGLE:
        return value.replace("'", "'\\''")
    if context == DOUBLE:
        return _DOUBLE_SPECIAL.sub(r"\\\1", value)
    if context == COMMENT:
        return value.replace("\n", " ")
    raise ToolArgumentError(
        f"an argument after {context} in the command cannot be passed as plain words"
    )
