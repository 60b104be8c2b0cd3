"""The REPL's commands about the chat itself: `/new`, `/retry`, `/chats`, `/resume`
and `/show` (a tool card's whole result, a fork's transcript).

Apart from the other commands (ui/commands.py holds the table and `/help`) because
they act on the current chat and the saved ones: its messages, the store, the tool
cards the view kept. Each prints through `Repl.say`, every part made safe.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from skillchat.errors import UsageError
from skillchat.ui.safe import one_line

if TYPE_CHECKING:
    from skillchat.ui.repl import Repl

CHATS_SHOWN = 20


def retry_last(repl: Repl, arg: str) -> None:
    """`/retry`: send the last message again, as typed. After a failure it is the
    turn that got no answer (the failed copy is not sent twice); after an answer it
    asks for another, both answers staying in the chat."""
    text = repl.last_sent
    if text is None:  # a resumed chat: its last message as stored (`/name` applied)
        users = [m for m in repl.session.chat.messages if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        text = content if isinstance(content, str) else None
    if not text:
        raise UsageError("nothing to retry: no message was sent in this chat")
    repl.say(("retrying: ", "muted"), (one_line(text)[:80], "muted"))
    repl.send(text)


def new_chat(repl: Repl, arg: str) -> None:
    repl.start_chat(None)
    repl.say(("new chat", "muted"))


def list_chats(repl: Repl, arg: str) -> None:
    from skillchat.chats.export import local_time

    chats = repl.session.store.list_chats(limit=CHATS_SHOWN) if repl.session.store else []
    if not chats:
        repl.say(("no saved chats yet", "muted"))
    for chat in chats:
        current = chat.id == repl.session.chat_id
        repl.say(
            ("* " if current else "  ", "ok"),
            (chat.id, "strong"),
            f"  {local_time(chat.updated_at)}  {chat.message_count:>4} msgs  ",
            one_line(chat.title or "(untitled)"),
        )


def resume_chat(repl: Repl, arg: str) -> None:
    if not arg:
        raise UsageError("/resume needs a chat id (see /chats; Tab completes)")
    store = repl.session.store
    if store is None:
        raise UsageError("/resume needs the chat database")
    repl.start_chat(store.load_transcript(arg))
    repl.show_resumed()


def show_card(repl: Repl, arg: str) -> None:
    records = repl.view.records
    if not arg.isdigit() or not 1 <= int(arg) <= len(records):
        shown = f"1-{len(records)}" if records else "none yet in this chat"
        raise UsageError(f"/show needs the number of a tool card ({shown})")
    record = records[int(arg) - 1]
    from skillchat.ui import safe

    head = safe.exact(f"#{arg} {record.name}", "strong")  # invisible characters marked
    repl.consoles.out.print(head.append("  ").append(safe.exact(record.arguments, "muted")))
    try:
        value = json.loads(record.result.content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        repl.say(record.result.content)
        return
    for key, item in value.items():  # get_skill's documentation as text, not one JSON line
        if isinstance(item, str) and "\n" in item:
            repl.say((f"{key}:", "key"))
            repl.say(item)
        else:
            repl.say((f"{key}: ", "key"), json.dumps(item, ensure_ascii=False))
    if (fork := repl.view.forks.get(int(arg))) is not None:  # a fork's card: its transcript
        from skillchat.ui.fork_view import transcript_lines

        for part in transcript_lines(fork):
            repl.say(part)
