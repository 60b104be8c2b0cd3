"""A backend that loads in a daemon thread while the user types.

Importing `litellm` costs seconds (a native backend's module, tens of
milliseconds). The REPL shows its prompt first and loads the backend behind it, so
neither the prompt nor (usually) the first message waits. `stream` joins the
loader: if the user is faster than the import, the first message waits only for
what is left of it.

Nothing the load prints may reach the terminal the REPL owns: litellm's logging
and banners are silenced by its backend module, and the REPL filters warnings.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from skillchat.engine.backends.base import Backend, Timeouts
from skillchat.engine.backends.select import backend_name, make_backend
from skillchat.engine.events import Delta
from skillchat.target import Target


class BackgroundBackend:
    """`make_backend(target, timeouts)`, run in a daemon thread started by `start()`."""

    def __init__(self, target: Target, timeouts: Timeouts) -> None:
        self.name = backend_name(target)
        self._target = target
        self._timeouts = timeouts
        self._backend: Backend | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, name="backend-loader", daemon=True)

    def start(self) -> BackgroundBackend:
        """Start loading (once; later calls do nothing)."""
        if self._thread.ident is None:
            self._thread.start()
        return self

    def _load(self) -> None:
        try:
            self._backend = make_backend(self._target, self._timeouts)
        except Exception as exc:  # raised to the caller of `stream`, where it can be shown
            self._error = exc

    def ready(self) -> Backend:
        """The loaded backend, waiting for the loader; its error (no API key...) if it failed."""
        self.start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._backend is not None
        return self._backend

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Iterator[Delta]:
        return self.ready().stream(messages, tools)

    def context_window(self) -> int | None:
        return self.ready().context_window()
