"""Build the backend a target names, from its row (skillchat/backend_table.py).

This is where a `Target` (skillchat/target.py) meets the table: which row it
chooses, its key check, and its class, built from the target and its `Timeouts`
(never the whole settings). This module imports no backend: `make_backend`
imports the chosen backend's module (wire.py's standard library for the native
ones, `litellm`, seconds, for the rest) only when called. Call it when a model is
about to be used, not at start-up.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from skillchat.backend_table import backend_row
from skillchat.engine.backends.base import Backend, Timeouts
from skillchat.errors import ProviderError
from skillchat.target import Target


class Where(Protocol):
    """Where requests go, as a `Target` or a `Place` says it (doctor: the settings'
    `asked` place): enough to choose a row and check its key."""

    @property
    def model(self) -> str: ...
    @property
    def api_base(self) -> str | None: ...
    @property
    def backend(self) -> str: ...
    @property
    def gguf(self) -> str | None: ...


def backend_name(where: Where) -> str:
    """The name of the backend `where` goes to (`openai`, `gemini`, `litellm`)."""
    return backend_row(where.model, where.backend, where.api_base).name


def make_backend(target: Target, timeouts: Timeouts) -> Backend:
    """Build the backend for `target`; raises ProviderError when it cannot work at
    all (no API key and no local server), before any network call. With a local
    model (`target.gguf`, whose server resolve started) it waits for its server to
    load (engine/local/server.py)."""
    if target.gguf:
        from skillchat.engine.local.server import local_api_base

        target = replace(target, api_base=local_api_base(target.gguf), backend="openai")
    row = backend_row(target.model, target.backend, target.api_base)
    if problem := key_problem(target):
        raise ProviderError(problem)
    module, name = row.make.split(":")
    import_on_fresh_stack(module)
    make: Callable[[Target, Timeouts], Backend] = getattr(sys.modules[module], name)
    return make(target, timeouts)


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


def key_problem(where: Where) -> str | None:
    """The one-line error `make_backend` would raise for a missing key, or None.

    Cheap (no backend imported), so the REPL and `doctor` can say it before the
    first message rather than after it."""
    if where.gguf:
        return None
    row = backend_row(where.model, where.backend, where.api_base)
    return row.key_problem(where.model, where.api_base)
