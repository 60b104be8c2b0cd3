"""What a skill's body says that depends on how it was started: Claude Code's
argument placeholders and the skill-folder variables.

`/name a b "c d"` (the user's explicit invocation) fills, in the SKILL.md body:

- `$ARGUMENTS`: the whole text after the name, exactly as typed (quotes kept);
- `$ARGUMENTS[N]` and its shorthand `$N`: the Nth word, 0-based, split as a shell
  splits (quotes group and are taken off, a backslash escapes), so `$1` is `b` and
  `$2` is `c d`; nothing is expanded (`$HOME`, `$(...)` and backticks are words);
  text whose quotes do not balance is split at whitespace instead;
- `$name` for each name of an `arguments` frontmatter list (or space-separated
  string), by position: `arguments: [issue, branch]` makes `$issue` the first word.

If nothing was filled and the text is not empty, it is appended as
`ARGUMENTS: <text>`, as Claude Code does, so the model still sees it. Every
placeholder is replaced in one pass over the body, so an argument that itself
contains `$1` or `$ARGUMENTS` is never expanded again. Text that looks like a
placeholder but is not one stays as written: `$1x`, `$name_more`, `$ARGUMENTSX`,
an amount such as `$5.00` or `$1,000`, and a word that was not given (`$3` with
two words: what Claude Code does today, and the model sees what is missing).

`${CLAUDE_SKILL_DIR}` (Claude Code) and `${SKILL_DIR}` become the skill's folder as
the model must name it: `/skills/<name>` where commands run in the sandbox, else
the skill-relative form `read_file_in_skill` takes (`${CLAUDE_SKILL_DIR}/x.md` is
`x.md`, the folder alone is `.`). Never a host path: the model passes these to tools.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from skillchat.mounts import SKILLS_MOUNT
from skillchat.skills.shell_words import contexts, quoted

ARGUMENTS_KEY = "arguments"
ARGUMENT_HINT_KEY = "argument-hint"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEXED = r"\$ARGUMENTS\[(?P<index>\d+)\]"
_SHORT = r"\$(?P<short>\d+)(?!\w)(?![.,]\d)"
_WHOLE = r"(?P<whole>\$ARGUMENTS)(?![\w\[])"
_DIR_VARIABLES = re.compile(r"\$\{(?:CLAUDE_SKILL_DIR|SKILL_DIR)\}(?P<slash>/+)?")


def split_arguments(text: str) -> list[str]:
    """The words of `text` as a shell splits them, nothing expanded; at whitespace
    when its quotes do not balance (or a backslash ends it)."""
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        return text.split()


def argument_names(frontmatter: Mapping[str, Any]) -> list[str]:
    """The names an `arguments` list (or space-separated string) declares, in order.

    A name that is not an identifier (`[A-Za-z_][A-Za-z0-9_-]*`) is skipped, as is
    `ARGUMENTS`: it would shadow the placeholders. Numbers are `$N` already.
    """
    value = frontmatter.get(ARGUMENTS_KEY)
    items = value.split() if isinstance(value, str) else value
    if not isinstance(items, list):
        return []
    return [
        item
        for item in items
        if isinstance(item, str) and _NAME.fullmatch(item) and item != "ARGUMENTS"
    ]


def argument_hint(frontmatter: Mapping[str, Any]) -> str | None:
    """The `argument-hint` to show after `/name` (completion, `/help`), if any."""
    value = frontmatter.get(ARGUMENT_HINT_KEY)
    if isinstance(value, list):  # `[file]` unquoted is a YAML list
        value = " ".join(f"[{item}]" for item in value if isinstance(item, str))
    if not isinstance(value, str):
        return None
    return value.strip() or None


class ArgumentFiller:
    """Fills the placeholders of the invocation text `text` into pieces of one body
    (the text between inline commands, and the commands, are filled apart: text
    that came from the arguments never becomes a command), counting what it filled."""

    def __init__(self, text: str, names: Sequence[str] = ()) -> None:
        self.text = text
        self.words = split_arguments(text)
        parts = [_INDEXED, _SHORT, _WHOLE]
        if names:  # longest first, so `$issue_id` is not read as `$issue` + `_id`
            ordered = sorted(set(names), key=len, reverse=True)
            alternatives = "|".join(re.escape(n) for n in ordered)
            parts.insert(0, rf"\$(?P<named>{alternatives})(?![\w\[])")
        self.names = bool(names)
        self.position = {name: i for i, name in reversed(list(enumerate(names)))}
        self.pattern = re.compile("|".join(parts))
        self.filled = 0

    def __call__(self, piece: str) -> str:
        return self.pattern.sub(self._fill, piece)

    def fill_command(self, command: str) -> str:
        """`command` (an inline command as the skill wrote it) with each value
        quoted as data for where it stands (skills/shell_words.py): a word the user
        typed is never shell code. ToolArgumentError where no quoting holds."""
        where = contexts(command)

        def fill(match: re.Match[str]) -> str:
            value = self._value(match)
            if value is None:
                return match.group(0)
            word = quoted(value, where[match.start()])
            self.filled += 1
            return word

        return self.pattern.sub(fill, command)

    def fills(self, body: str) -> bool:
        """Whether `body` has a placeholder these words fill (else the body is the
        same for any words, but for the text appended)."""
        return any(self._value(m) is not None for m in self.pattern.finditer(body))

    def _value(self, match: re.Match[str]) -> str | None:
        if match.group("whole") is not None:
            return self.text
        if self.names and match.group("named") is not None:
            index = self.position[match.group("named")]
        else:
            index = int(match.group("index") or match.group("short"))
        return self.words[index] if index < len(self.words) else None

    def _fill(self, match: re.Match[str]) -> str:
        value = self._value(match)
        if value is None:
            return match.group(0)  # not given: stays as written
        self.filled += 1
        return value

    def finish(self, body: str) -> str:
        """The filled body, with the text appended when nothing was filled."""
        if self.filled == 0 and self.text:
            return f"{body}\n\nARGUMENTS: {self.text}"
        return body


def substitute_skill_dir(body: str, skill_name: str, *, sandbox: bool) -> str:
    """`${CLAUDE_SKILL_DIR}` and `${SKILL_DIR}` as the model must use them:
    `/skills/<name>` when commands run in the sandbox, else relative to the skill's
    folder (what `read_file_in_skill` takes)."""

    def folder(match: re.Match[str]) -> str:
        if sandbox:
            return f"{SKILLS_MOUNT}/{skill_name}" + ("/" if match.group("slash") else "")
        return "" if match.group("slash") else "."

    return _DIR_VARIABLES.sub(folder, body)
