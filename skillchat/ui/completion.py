"""Tab completion for the REPL: `/commands`, `/skill-names`, `/skill NAME`, `/resume ID`,
`/model NAME` (the configured and recently used models: ui/model_choices.py),
`/mcp__SERVER__PROMPT` (a server's prompt, with its arguments), `@SERVER:URI` (a resource).

Only the first word of a line that starts with `/` is completed (plus the argument of
`/skill`, `/resume` and `/model`): anything else is a message to the model, where completing
words would get in the way. Each completion carries its meta text (a command's help,
a skill's description, a chat's title), shown beside it in the menu, on one line
with control characters visible (ui/safe.py). The sources are callables, so
`/reload` and new chats are seen without rebuilding the completer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from skillchat.ui.safe import one_line

Pairs = Callable[[], Iterable[tuple[str, str]]]  # (name, meta) pairs
META_CHARS = 70


def _meta(text: str) -> str:
    return one_line(text, META_CHARS)


class SlashCompleter(Completer):
    """Completes built-in commands, skills, and the arguments of `/skill`, `/resume`
    and `/model`."""

    def __init__(
        self, commands: Pairs, skills: Pairs, chats: Pairs, models: Pairs = lambda: []
    ) -> None:
        self.commands = commands
        self.skills = skills
        # The commands whose one argument is completed, and from what.
        self.arguments = {"/skill": skills, "/resume": chats, "/model": models}

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        line = document.text_before_cursor
        if not line.startswith("/") or "\n" in line:
            return
        head, space, arg = line.partition(" ")
        if not space:
            yield from self._matches(head, self._first_words(), prefix="/")
        elif " " not in arg and (pairs := self.arguments.get(head)) is not None:
            yield from self._matches(arg, pairs())

    def _first_words(self) -> list[tuple[str, str]]:
        """Commands, then the skills no command shadows (those stay under `/skill`)."""
        commands = list(self.commands())
        taken = {name for name, _ in commands}
        return commands + [(name, meta) for name, meta in self.skills() if name not in taken]

    @staticmethod
    def _matches(
        typed: str, pairs: Iterable[tuple[str, str]], prefix: str = ""
    ) -> Iterator[Completion]:
        word = typed.removeprefix(prefix)
        for name, meta in pairs:
            if name.startswith(word):
                yield Completion(
                    prefix + name,
                    start_position=-len(typed),
                    display=one_line(prefix + name),
                    display_meta=_meta(meta),
                )


class ResourceCompleter(Completer):
    """Completes `@SERVER:URI`, the resources the MCP servers list, in a message
    (the word being typed starts with `@` and names a server, or part of one)."""

    def __init__(self, resources: Callable[[], Iterable[tuple[str, Any]]]) -> None:
        self.resources = resources

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@") or document.text_before_cursor.startswith("/"):
            return
        pairs = [(f"{server}:{r.uri}", r.name) for server, r in self.resources()]
        yield from SlashCompleter._matches(word, pairs, prefix="@")
