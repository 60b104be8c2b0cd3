"""`skillchat "QUESTION"` and `skillchat -p "QUESTION"`, as `claude` and `llm` take them.

Click reads the root's first word as a subcommand's name. Before it parses, the
command line is rewritten: a first word that is no command and no near miss of one
(`aks` keeps click's "did you mean") is the question; `help` alone or before a
command's name is `--help`. With `-p`/`--print` it
becomes `ask` (one answer, then exit); without, the REPL's first message.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any

PRINT_FLAGS = ("-p", "--print")


def _value_options(command: Any, printing: bool) -> set[str]:
    """The root's options that take a value (`--model NAME`), and with `-p` `ask`'s
    own too (`--output-format FORMAT`): the word after one is its value, not a
    question. (`ask`'s table is read only then: `--help` imports no command's code.)"""
    names: set[str] = set()
    if printing:
        from skillchat.cli.ask_line import OPTIONS

        names = {name for name, (_, kind) in OPTIONS.items() if kind.type is not bool}
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option" and not param.is_flag:
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def _first_word(argv: list[str], takes_value: set[str]) -> int | None:
    """The index of the first word that is not an option or an option's value."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1 if i + 1 < len(argv) else None
        if word.startswith("-") and word != "-":
            i += 2 if word in takes_value else 1
            continue
        return i
    return None


def _one_edit(word: str, name: str) -> bool:
    """`word` is `name` with one letter added, dropped, changed, or two swapped."""
    if sorted(word) == sorted(name) and len(word) == len(name):
        return sum(a != b for a, b in zip(word, name, strict=True)) <= 2
    if abs(len(word) - len(name)) > 1:
        return False
    short, long = sorted((word, name), key=len)
    for i in range(len(long)):
        if (
            long[:i] + long[i + 1 :] == short
            or long[:i] + long[i + 1 :] == short[:i] + short[i + 1 :]
        ):
            return True
    return False


def _typo(word: str, commands: list[str], *, alone: bool) -> bool:
    """A command's name mistyped: alone, anything near one (`doctr`); followed by
    more words, only one edit away (`aks hi`, `chat list`), as "what is 2+2"
    starts near `chats` but is a question."""
    if not (word.isidentifier() or word.replace("-", "").isalnum()):
        return False
    if any(_one_edit(word.lower(), name) for name in commands):
        return True
    return alone and bool(get_close_matches(word, commands))


def question_argv(argv: list[str], command: Any) -> list[str]:
    """`argv` with a question turned into `ask ... QUESTION` (`-p`) or the hidden
    `--first-message QUESTION`; unchanged when the first word is a command (or a typo
    of one) or there is no question at all."""
    commands = list(command.list_commands(None))
    printing = any(flag in argv for flag in PRINT_FLAGS)
    at = _first_word(argv, _value_options(command, printing))
    if at is None:
        if printing:  # `git diff | skillchat -p`: ask reads the pipe
            return ["ask", *(a for a in argv if a not in PRINT_FLAGS)]
        return argv
    word = argv[at]
    if word in commands:
        return argv
    after_dashes = at > 0 and argv[at - 1] == "--"
    end = at
    while end < len(argv) and (after_dashes or not argv[end].startswith("-")):
        end += 1
    if word == "help" and not after_dashes:  # `skillchat help [COMMAND...]`, as git and gh
        named = argv[at + 1 : end]
        if all(name in commands for name in named[:1]) and len(named) <= 2:
            return [*argv[:at], *named, "--help", *argv[end:]]
    if _typo(word, commands, alone=end == at + 1):
        return argv  # a typo of a command: click says "did you mean"
    question = " ".join(argv[at:end])
    rest = argv[: at - 1 if after_dashes else at] + argv[end:]
    if any(flag in rest for flag in PRINT_FLAGS):
        return ["ask", *(a for a in rest if a not in PRINT_FLAGS), "--", question]
    return [*rest, "--first-message", question]
