"""The external editor for a long message: Ctrl-X Ctrl-E (as in bash and zsh)
opens the line being typed in `$VISUAL`, else `$EDITOR`, else the first of
`editor`, `nano`, `vi` found; what the editor saves replaces the line, which is
then sent with Enter as any other.

prompt-toolkit's own binding is not used: an editor's non-zero exit is silent
there and a file that is not UTF-8 ends in a traceback. Here the file is private
(0600, in the temp folder), and each failure is one line with the typed line
kept as it was: an editor that cannot start or exits non-zero, a file that is not
UTF-8 text (or holds NUL bytes), one over `MAX_BYTES`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile

from skillchat.errors import TerminalError

FALLBACKS = ("editor", "nano", "vi")
MAX_BYTES = 1_000_000  # the limit of a piped message too (`ask -`)
KEPT = "the line is as it was"


def editor_command() -> list[str]:
    """`$VISUAL` or `$EDITOR` as shell words, else the first fallback installed."""
    for variable in ("VISUAL", "EDITOR"):
        if value := os.environ.get(variable, "").strip():
            try:
                return shlex.split(value)
            except ValueError as exc:
                raise TerminalError(f"${variable} cannot be read as a command: {exc}") from None
    for name in FALLBACKS:
        if (path := shutil.which(name)) is not None:
            return [path]
    raise TerminalError("no editor: set $VISUAL or $EDITOR")


def edit(text: str) -> str:
    """`text` as the user left it in their editor (one trailing newline dropped).
    Raises TerminalError, saying why, when the editor gives nothing usable."""
    command = editor_command()
    handle, path = tempfile.mkstemp(prefix="skillchat-message-", suffix=".md")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            done = subprocess.run([*command, path], check=False)
        except OSError as exc:
            raise TerminalError(
                f"the editor {command[0]!r} did not start: {exc.strerror}; {KEPT}"
            ) from None
        if done.returncode != 0:
            raise TerminalError(f"the editor exited with status {done.returncode}; {KEPT}")
        with open(path, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    finally:
        os.unlink(path)
    if len(data) > MAX_BYTES:
        raise TerminalError(f"the edited message is over {MAX_BYTES:,} bytes; {KEPT}")
    try:
        edited = data.decode("utf-8")
    except UnicodeDecodeError:
        edited = "\0"
    if "\0" in edited:
        raise TerminalError(f"the editor's file is not UTF-8 text; {KEPT}")
    return edited.removesuffix("\n")
