"""skillchat: a terminal chat runner that gives any LLM its user's Agent Skills.

The public Python API (docs/api.md) is the names of `__all__`:

    from skillchat import Session, TextDelta, load_settings

    with Session(load_settings(model="gpt-4.1-mini")) as session:
        for event in session.stream("What is 17% of 230?"):
            if isinstance(event, TextDelta):
                print(event.text, end="")

Each is imported when it is first read (PEP 562's module `__getattr__`): Python
runs this file before any module of the package, the command line's included, so
importing the API here would put the whole chat on the path of `skillchat --help`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers see (`X`: re-exported);
    # at run time, `__getattr__` below
    from skillchat.config import Settings, load_settings
    from skillchat.engine.emit import (
        Compacted,
        Event,
        FilesAttached,
        ForkEnded,
        ForkStarted,
        ForkStep,
        Listener,
        MessageAdded,
        Notice,
        TextDelta,
        TextEnded,
        ToolFinished,
        ToolRecord,
        ToolStarted,
        TurnFailed,
        UsageReported,
        Waiting,
    )
    from skillchat.engine.events import Usage
    from skillchat.engine.turn import TurnResult
    from skillchat.errors import SkillchatError
    from skillchat.session import Session

__all__ = [
    "Compacted",
    "Event",
    "FilesAttached",
    "ForkEnded",
    "ForkStarted",
    "ForkStep",
    "Listener",
    "MessageAdded",
    "Notice",
    "Session",
    "Settings",
    "SkillchatError",
    "TextDelta",
    "TextEnded",
    "ToolFinished",
    "ToolRecord",
    "ToolStarted",
    "TurnFailed",
    "TurnResult",
    "Usage",
    "UsageReported",
    "Waiting",
    "__version__",
    "load_settings",
]

# The modules that define them, lightest first: a name is taken from the first that
# has it, so reading an event type does not import the session.
_HOMES = (
    "skillchat.errors",
    "skillchat.engine.events",
    "skillchat.engine.emit",
    "skillchat.engine.turn",
    "skillchat.config",
    "skillchat.session",
)


def __getattr__(name: str) -> object:
    """A public name, imported from its module the first time it is read."""
    if name in __all__:
        for home in _HOMES:
            module = import_module(home)
            if hasattr(module, name):
                globals()[name] = value = getattr(module, name)
                return value
    raise AttributeError(f"module 'skillchat' has no attribute '{name}'")
