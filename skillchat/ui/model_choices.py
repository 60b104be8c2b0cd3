"""What `/model` offers on Tab: the current model, the config's `[models.NAME]`
tables, then the models of the most recently updated saved chats, each once, with
what it is beside it. Names come from the config and the chat database: shown
through the completion menu's one-line cleaning (ui/completion.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings

RECENT_CHATS = 50  # the newest chats whose models count as recently used


def model_choices(
    settings: Settings, current: str, store: ChatStore | None
) -> list[tuple[str, str]]:
    choices: dict[str, str] = {current: "the current model"}
    for name, table in settings.model.named.items():
        model = table.get("model")
        choices.setdefault(name, f"[models.{name}]" + (f": {model}" if model else ""))
    for chat in store.list_chats(limit=RECENT_CHATS) if store is not None else []:
        choices.setdefault(chat.model, f"used in chat {chat.id}")
    return list(choices.items())
