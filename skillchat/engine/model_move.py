"""What the user is asked before an untrusted skill's `model:` is honoured
(engine/skill_model.py). Its own module, imported when a skill names a model of
the config: the question is rare, and its dataclass need not be compiled at every
start."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelMove:
    """What the user is asked before an untrusted skill's `model:` is honoured."""

    skill: str
    wanted: str  # as the skill names it: a `[models.NAME]`
    model: str  # that table's model id
    server: str  # where it runs: a URL, a local file, or the provider's own
    forked: bool  # its fork's turns (with the task), else the chat's from now on
