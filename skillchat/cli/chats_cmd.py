"""`skillchat chats list | show | export | rm`: the saved chats.

The store is imported inside each command: every skillchat command loads this module,
and only these four need sqlite3. No command here creates a database that does not
exist yet: listing nothing is not a reason to write a file.

A chat holds text from the model, from skills and from files: every form printed
here (the table, the tab-separated lines, `show`, the Markdown export) goes through
ui/safe.py, and the JSON forms through its `json_text`, so nothing in a chat can
drive the terminal of the person reading it.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from skillchat.cli.common import ConfigOpt, JsonOpt
from skillchat.cli.invocation import consoles_of, load
from skillchat.ui.safe import clean, json_text, one_line

if TYPE_CHECKING:
    from pathlib import Path

    from skillchat.chats.records import ChatSummary
    from skillchat.chats.store import ChatStore

app = typer.Typer(no_args_is_help=True)  # its help: cli/app.py

IdArg = Annotated[str, typer.Argument(help="Chat id, or a unique prefix of it.")]
MODEL_WIDTH = 24


class Format(StrEnum):
    md = "md"
    json = "json"


@contextmanager
def _opened(ctx: typer.Context, config: Path | None) -> Iterator[ChatStore | None]:
    """The store named by the settings (closed after), or None when no chat was ever saved."""
    from skillchat.chats.store import ChatStore

    path = load(ctx, config).storage.database_path()
    if not path.exists() and not path.is_symlink():  # a dangling link: ChatStore says why
        yield None
        return
    with ChatStore.open(path) as store:
        yield store


def _missing(chat_id: str) -> Exception:
    from skillchat.errors import UnknownChatError

    return UnknownChatError(f"no saved chat '{chat_id}'")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(chats: list[ChatSummary]) -> str:
    """Aligned columns for a terminal, titles cut to its width (no Rich: 10,000 rows
    must print in milliseconds)."""
    from skillchat.chats.export import local_time

    rows = [
        (
            c.id,
            local_time(c.updated_at),
            _cut(one_line(c.model), MODEL_WIDTH),
            str(c.message_count),
            # No reply saved: every turn failed (resume it and /retry).
            ("(no answer) " if not c.answered else "") + one_line(c.title or ""),
        )
        for c in chats
    ]
    head = ("ID", "UPDATED", "MODEL", "MSGS", "TITLE")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    room = max(shutil.get_terminal_size().columns - sum(widths) - 8, 10)
    lines = []
    for r in [head, *rows]:
        cells = (r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].ljust(widths[2]))
        lines.append(f"{'  '.join(cells)}  {r[3].rjust(widths[3])}  {_cut(r[4], room)}")
    return "\n".join(lines) + "\n"


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    config: ConfigOpt = None,
    json_out: JsonOpt = False,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show only the N newest.")
    ] = None,
) -> None:
    """Saved chats, most recently updated first.

    On a terminal: a table. Otherwise one tab-separated line per chat:
    id, updated (ISO UTC), model, message count, title.
    """
    from skillchat.ui.console import stdout_is_terminal

    with _opened(ctx, config) as store:
        chats = [] if store is None else store.list_chats(limit)
    if json_out:
        doc = [
            {
                "id": c.id,
                "model": c.model,
                "title": c.title,
                "created_at": c.created_at,
                "updated_at": c.updated_at,
                "message_count": c.message_count,
            }
            for c in chats
        ]
        # One chat per line: json's C encoder is not used with indent=, and 10,000
        # chats pretty-printed cost more than the whole listing.
        lines = ",\n".join(json_text(chat) for chat in doc)
        sys.stdout.write(f"[\n{lines}\n]\n" if doc else "[]\n")
    elif stdout_is_terminal():
        sys.stdout.write(_table(chats) if chats else "no saved chats\n")
    else:
        sys.stdout.writelines(
            f"{c.id}\t{c.updated_at}\t{one_line(c.model)}\t{c.message_count}"
            f"\t{one_line(c.title or '')}\n"
            for c in chats
        )


@app.command("show", short_help="Show a saved chat (--json: all of it).")
def show_cmd(
    ctx: typer.Context, chat_id: IdArg, config: ConfigOpt = None, json_out: JsonOpt = False
) -> None:
    """The transcript: messages in order, tool calls and results as one-line summaries
    (--json: the whole chat, as `chats export -f json`)."""
    from skillchat.chats.export import show_lines, to_json
    from skillchat.ui.console import stdout_is_terminal

    with _opened(ctx, config) as store:
        if store is None:
            raise _missing(chat_id)
        chat = store.get_chat(chat_id)
        messages = store.load_messages(chat.id)
    if json_out:
        sys.stdout.write(json_text(to_json(chat, messages), indent=2) + "\n")
        return
    lines = show_lines(chat, messages)
    if stdout_is_terminal():
        from skillchat.ui.safe import text as safe_text

        out = consoles_of(ctx).out
        for style, line in lines:
            out.print(safe_text(line, style))
    else:
        sys.stdout.writelines(clean(text) + "\n" for _, text in lines)


@app.command("export", short_help="Write a chat as Markdown or JSON.")
def export_cmd(
    ctx: typer.Context,
    chat_id: IdArg,
    config: ConfigOpt = None,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="md or json.")] = Format.md,
) -> None:
    """Write the whole chat to stdout, as Markdown or JSON (metadata + messages)."""
    from skillchat.chats.export import to_json, to_markdown

    with _opened(ctx, config) as store:
        if store is None:
            raise _missing(chat_id)
        chat = store.get_chat(chat_id)
        messages = store.load_messages(chat.id)
    if fmt is Format.json:
        sys.stdout.write(json_text(to_json(chat, messages), indent=2) + "\n")
    else:
        sys.stdout.write(clean(to_markdown(chat, messages)))


@app.command("rm")
def rm_cmd(
    ctx: typer.Context,
    chat_ids: Annotated[list[str], typer.Argument(help="Chat ids or unique prefixes.")],
    config: ConfigOpt = None,
) -> None:
    """Delete chats. Every id is checked first: one unknown id deletes nothing."""
    with _opened(ctx, config) as store:
        if store is None:
            raise _missing(chat_ids[0])
        chats = {chat.id: chat for chat in map(store.get_chat, chat_ids)}
        for chat in chats.values():
            store.delete_chat(chat.id)
            typer.echo(f"deleted {chat.id} ({one_line(chat.title or 'untitled')})")
