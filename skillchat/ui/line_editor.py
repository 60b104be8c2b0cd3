"""The REPL's input line: prompt-toolkit with the keys people expect from a chat.

- Enter sends; Esc Enter (what Alt+Enter sends) adds a line. A pasted block arrives
  whole (bracketed paste), newlines and all, and is sent only on Enter.
- Emacs keys, or vi's with `[ui] editing_mode = "vi"` (Esc to normal mode).
- Ctrl-X Ctrl-E opens the line in the external editor (ui/external_editor.py).
- Ctrl-C clears a line being typed; on an empty line it says how to leave rather
  than leaving, so a Ctrl-C meant for a reply that just ended loses nothing.
  Ctrl-D on an empty line ends the session.
- History is a file in the user data dir, shared by every session, private to the
  user (0600 in a 0700 folder, tightened if it was wider: it holds every line
  typed, chats/private.py); one that cannot be read or written is said in one
  line, and the session keeps its lines in memory only; completion is
  ui/completion.py; the bottom toolbar is whatever `toolbar()` returns, redrawn
  on every keystroke.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from skillchat.chats.private import private_dir, private_file
from skillchat.errors import TerminalError
from skillchat.ui.external_editor import edit

PROMPT = "❯ "
CONTINUATION = "· "
QUIT_HINT = "(press Ctrl-D or type /exit to quit)"


def _bindings(warn: Callable[[str], None]) -> KeyBindings:
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")
    def _clear_or_hint(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            run_in_terminal(lambda: print(QUIT_HINT))

    @keys.add("c-x", "c-e")
    def _external_editor(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        typed = buffer.text

        def in_editor() -> str | None:
            try:
                return edit(typed)
            except TerminalError as exc:
                warn(str(exc))
                return None

        async def run() -> None:
            edited = await run_in_terminal(in_editor, in_executor=True)
            if edited is not None:
                buffer.document = Document(edited, len(edited))

        event.app.create_background_task(run())

    return keys


def _history(path: Path, warn: Callable[[str], None]) -> History:
    """The history file, opened once here to learn whether it can be read and written:
    prompt-toolkit would raise at the first prompt (and at each line sent) instead."""
    try:
        private_dir(path.parent)
        private_file(path)
        with open(path, "a+b"):
            pass
    except OSError as exc:
        warn(f"input history is off this session: {path}: {exc.strerror or exc}")
        return InMemoryHistory()
    return FileHistory(str(path))


class LineEditor:
    """Reads one message or command at a time."""

    def __init__(
        self,
        history: Path,
        completer: Completer,
        toolbar: Callable[[], str],
        warn: Callable[[str], None],
        *,
        vi: bool = False,
    ) -> None:
        self._session: PromptSession[str] = PromptSession(
            vi_mode=vi,
            history=_history(history, warn),
            completer=completer,
            complete_while_typing=True,
            bottom_toolbar=lambda: " " + toolbar(),
            key_bindings=_bindings(warn),
            prompt_continuation=lambda width, line_number, wrap_count: CONTINUATION.rjust(width),
            enable_open_in_editor=False,
        )

    def read(self, on_shown: Callable[[], None] | None = None) -> str | None:
        """The next input, trailing whitespace removed; None when the user quits.

        `on_shown` runs once the prompt is first drawn: work started there (loading
        libraries) cannot delay the prompt.
        """

        def hook() -> None:
            app = self._session.app

            def fire(_: object) -> None:
                app.after_render -= fire
                if on_shown is not None:
                    on_shown()

            app.after_render += fire

        try:
            return self._session.prompt(PROMPT, pre_run=hook).rstrip()
        except EOFError:
            return None
