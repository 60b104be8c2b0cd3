"""Build the backend the settings name, from its row (skillchat/backend_table.py).

This is where the settings meet the table: which row they choose, its key check,
and its class. This module imports no SDK: `make_backend` imports the chosen
backend's module (and so `openai`, ~0.5 s, or `litellm`, seconds) only when
called. Call it when a model is about to be used, not at start-up.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from skillchat.backend_table import backend_row
from skillchat.config import Settings
from skillchat.engine.backends.base import Backend
from skillchat.errors import ProviderError


def backend_name(settings: Settings) -> str:
    """The name of the backend `settings` go to (`openai`, `litellm`)."""
    return backend_row(settings.model, settings.backend, settings.api_base).name


def make_backend(settings: Settings) -> Backend:
    """Build the backend for `settings`; raises ProviderError when it cannot work
    at all (no API key and no local server), before any network call. With a local
    model (`settings.gguf`) it waits for its server to load (engine/local/server.py)."""
    if settings.gguf:
        from dataclasses import replace

        from skillchat.engine.local.server import local_api_base

        settings = replace(settings, api_base=local_api_base(settings), backend="openai")
    row = backend_row(settings.model, settings.backend, settings.api_base)
    if problem := key_problem(settings):
        raise ProviderError(problem)
    module, name = row.make.split(":")
    import_on_fresh_stack(module)
    make: Callable[[Settings], Backend] = getattr(sys.modules[module], name)
    return make(settings)


def import_on_fresh_stack(module: str) -> None:
    """Import `module` (and so its SDK) on a thread of its own, the caller waiting.

    CPython 3.11 keeps frames in 16 KiB chunks of memory and unmaps a chunk as soon
    as the frame at its base returns. Imported from deep in `ask`'s stack (Typer,
    click, the command, the session), the SDK's thousands of nested imports and
    class bodies cross one chunk's boundary back and forth: an mmap, page faults and
    a munmap each time, ~3,700 of them for `openai`, ~30 ms of system time at every
    start (the SDK floor, importing at the top, makes two). A new thread's stack
    starts empty. A failed import raises here as it would have; a Ctrl-C while
    waiting leaves the import to finish on its own (a daemon thread).

    A module already in `sys.modules` may still be running on another thread (the
    REPL preloads the SDK while a `/model` or a fork makes its backend): the import
    statement waits for it to finish, where reading `sys.modules` alone would find a
    module without its classes yet."""
    if module in sys.modules:
        __import__(module)
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:  # the import statement's way (importlib.import_module skips -X importtime)
            __import__(module)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=run, name=f"import {module}", daemon=True)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def key_problem(settings: Settings) -> str | None:
    """The one-line error `make_backend` would raise for a missing key, or None.

    Cheap (no SDK imported), so the REPL and `doctor` can say it before the first
    message rather than after it."""
    if settings.gguf:
        return None
    row = backend_row(settings.model, settings.backend, settings.api_base)
    return row.key_problem(settings.model, settings.api_base)
