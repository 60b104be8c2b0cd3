"""Where a chat's requests go: a `Place` asked for, and the frozen `Target` it resolves to.

`Settings` are what the user asked for. A `Place` is where one chat's requests are
asked to go: a model id on a server (`api_base`), on the provider's own, or in a
local GGUF file, with the limits stated for it (a `[models.NAME]` table's window,
`max_tokens`, `vision`). A `Target` is that place resolved (session_settings.py's
`resolve`, the one function that makes one): the local file's model name, the
window found (the place's own, the server's `/props`, the file's context), the
reply's `max_tokens` and the budgets fitted to it. The chats store, the recorder
and the backends read a Target; two compare by value, so "did the place change?"
is `new != old`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillchat.config import Settings


@dataclass(frozen=True)
class Place:
    """Where requests are asked to go, and what is stated about that model."""

    model: str
    api_base: str | None = None
    backend: str = "auto"
    gguf: str | None = None
    window: int | None = None  # a `context_window` stated for this model
    max_tokens: int | None = None
    vision: bool | None = None


@dataclass(frozen=True)
class Target:
    """A `Place` resolved: where the current chat's requests go and what fits there.

    `window` is None when nothing said it yet (the loop may look the model map up
    later, only once a chat is long enough to need it: engine/context_window.py)."""

    place: Place  # what was asked: `/model` goes back to it by its model's name
    model: str
    api_base: str | None
    backend: str
    gguf: str | None
    window: int | None
    max_tokens: int | None
    vision: bool | None
    context_max_chars: int | None  # None: nothing stated or fitted (the defaults)
    catalog_max_chars: int | None
    # Extended thinking's budget (the settings' `thinking_budget`), for a backend
    # that thinks (Anthropic's); None: no thinking.
    thinking: int | None = None

    def saved(self) -> tuple[str, str | None, str | None, str | None]:
        """The model and where it runs, as a chat saves them: model, api_base,
        backend, gguf (a local model's chat has no server URL: its port is this
        run's)."""
        return self.model, self.api_base, self.backend, self.gguf

    def over(self, settings: Settings) -> Settings:
        """`settings` with this target's model, place and fitted limits: what the
        chat's loop and tools read of the place they run on."""
        return settings.replaced(
            model=self.model,
            api_base=self.api_base,
            backend=self.backend,
            gguf=self.gguf,
            context_window=self.window,
            max_tokens=self.max_tokens,
            vision=self.vision,
            context_max_chars=self.context_max_chars,
            catalog_max_chars=self.catalog_max_chars,
        )
