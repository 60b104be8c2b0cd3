"""Saving a conversation as it happens: a listener of the loop's events
(engine/emit.py), backed by a `ChatStore`.

The loop emits each message once it is complete; the recorder commits it at
once, so a crash loses at most the reply in flight. Two choices:

- The chat row is created with the first message, so opening the REPL and leaving
  (or `/new` twice) leaves no empty chats behind.
- A write that fails (database locked past its timeout, disk full, chat deleted by
  another process) never ends the session and is never silent: the message stays
  queued, the user is told once, and every later message retries the queue in
  order. `unsaved` says what is left, so a command can report it and exit 1.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from skillchat.chats.store import ChatStore
from skillchat.engine.emit import Compacted, Event, FilesAttached, ForkEnded, MessageAdded
from skillchat.errors import SkillchatError, StorageError
from skillchat.safe_io.read import FileText

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image
    from skillchat.target import Target


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM, which `ask` turns into the same interruption)
    until the block ends.

    A KeyboardInterrupt inside a write rolls it back while the loop keeps the
    message; the store would then refuse the tool results answering it. Writes are
    short (one transaction), so the wait is not felt.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[signal.Signals] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {
        sig: signal.signal(sig, lambda signum, _: caught.append(signal.Signals(signum)))
        for sig in held
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            handler = previous[sig]
            if callable(handler):
                handler(sig, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(sig)


class ChatRecorder:
    """Saves one chat's messages, in order; `chat_id` is None until the first one."""

    def __init__(
        self,
        store: ChatStore,
        target: Target,
        chat_id: str | None = None,
        notify: Callable[[str], None] | None = None,
        *,
        folder: str | None = None,
        workspace: str | None = None,
    ) -> None:
        self.store = store
        # The model and its server, or its local model file, saved with the chat.
        self.model, self.api_base, self.backend, self.gguf = target.saved()
        self.folder, self.workspace = folder, workspace  # where it started, and its workspace
        self.chat_id = chat_id
        # (message, interrupted, usage), or (messages of a compaction, kept, info)
        self.unsaved: list[tuple[Any, Any, Any]] = []
        # (workspace, path, sha256, size) of attached files, written after the messages
        self.unsaved_files: list[tuple[str, str, str, int]] = []
        self.unsaved_forks: list[dict[str, Any]] = []  # ended forks (chats/forks.py)
        self.failure: str | None = None  # why the last write failed; None once it works
        self._notify = notify or (lambda message: None)

    @property
    def pending(self) -> int:
        """How many writes (messages, attached files) still wait for the database."""
        return len(self.unsaved) + len(self.unsaved_files) + len(self.unsaved_forks)

    def __call__(self, event: Event) -> None:
        """Save what a chat's events say joined it; the rest is for the views."""
        match event:
            case MessageAdded(message, interrupted, usage):
                self.message(message, interrupted=interrupted, usage=usage)
            case FilesAttached(workspace, files):
                self.attached(workspace, files)
            case Compacted(messages, kept, info):
                self.compacted(messages, kept, info)
            case ForkEnded(_, skill, model, task, summary, messages):
                outcome = summary.get("outcome", "")
                fork: dict[str, Any] = {"skill": skill, "model": model, "task": task}
                fork |= {"outcome": outcome, "summary": summary, "messages": messages}
                self.unsaved_forks.append(fork)
                self.flush()

    def message(
        self, message: Mapping[str, Any], *, interrupted: bool = False, usage: Any = None
    ) -> None:
        """Save a complete message (after any that could not be saved before it)."""
        self.unsaved.append((dict(message), interrupted, usage))
        self.flush()

    def switched(self, target: Target) -> None:
        """`/model`: the chat goes on at `target` (a model on a server, or a local
        model file), and a resumed chat will too. Not saved yet (no message): it is
        created with them."""
        model, api_base, backend, gguf = target.saved()
        self.model, self.api_base, self.backend, self.gguf = model, api_base, backend, gguf
        if self.chat_id is not None:
            try:
                self.store.set_model(self.chat_id, model, api_base, backend, gguf)
            except StorageError as exc:
                self._notify(f"the model switch is not saved: {exc}")

    def compacted(self, messages: list[dict[str, Any]], kept: int, info: dict[str, Any]) -> None:
        """Save a compaction (chats/store.py `append_compaction`), in order with the rest."""
        self.unsaved.append(([dict(m) for m in messages], kept, info))
        self.flush()

    def attached(self, workspace: str, files: Sequence[FileText | Image]) -> None:
        """Record which files were attached: path and content hash, never content."""
        self.unsaved_files += [(workspace, f.path, f.sha256, f.size) for f in files]
        self.flush()

    def flush(self) -> bool:
        """Write the queue; False when the database refused (the user was told)."""
        try:
            with sigint_deferred():
                if self.chat_id is None and self.unsaved:
                    chat = self.store.create_chat(
                        self.model,
                        self.api_base,
                        self.backend,
                        folder=self.folder,
                        workspace=self.workspace,
                        gguf=self.gguf,
                    )
                    self.chat_id = chat.id
                while self.unsaved and self.chat_id is not None:
                    message, flag, more = self.unsaved[0]
                    if isinstance(message, list):
                        self.store.append_compaction(self.chat_id, message, flag, more)
                    else:
                        self.store.append_message(
                            self.chat_id, message, interrupted=flag, usage=more
                        )
                    del self.unsaved[0]
                while self.unsaved_files and self.chat_id is not None:
                    workspace, path, sha256, size = self.unsaved_files[0]
                    self.store.record_attachment(self.chat_id, workspace, path, sha256, size)
                    del self.unsaved_files[0]
                while self.unsaved_forks and self.chat_id is not None:
                    self.store.add_fork(self.chat_id, self.unsaved_forks[0])
                    del self.unsaved_forks[0]
        except SkillchatError as exc:  # StorageError, or the chat was deleted meanwhile
            if self.failure is None:
                self._notify(f"chat not saved: {exc} (retried with each message)")
            self.failure = str(exc)
            return False
        if self.failure is not None:
            self._notify(f"chat {self.chat_id} saved again")
            self.failure = None
        return True
