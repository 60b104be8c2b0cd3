"""Which model a skill's turns go to: the config's `[skill_models]`, else its `model:`.

    target, note = skill_target(chat_settings, asked, skill, allow)  # None: the chat's
    SkillModel(asked, use, allow)   # a chat's step: an inline skill's model becomes the chat's

A `[skill_models]` entry is the user's choice: a `[models.NAME]` (its server and
limits come with it, or its local `gguf` file, run on the embedded llama.cpp while
the chat stays on its own server) or any model id, on the chat's server. A SKILL.md's `model:` is
the author's, and a skill from anywhere must not choose what the user pays for: it
is honoured when it names a `[models.NAME]` of this config (`inherit` is the chat's
model). Anything else falls back to the chat's model, and `note` says so in one line:
Claude Code's aliases (`sonnet`, `opus`, `haiku`...) unless the config has a
`[models.sonnet]`, and a model id unless `[skill_models]` names it for the skill.

Nor may a skill from anywhere send the chat elsewhere: its model takes the chat's
next turns (inline) or the user's message (a fork's task), with everything said so
far, to that model's server. So a `model:` naming a `[models.NAME]` is honoured for
a trusted skill (skills/trust.py), else only when `allow` (the user, asked in the
REPL; `ask` and eval say no) agrees to the `ModelMove` (engine/model_move.py);
declined, the chat's model it is, and `note` says how to allow it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from skillchat.config import Settings
from skillchat.engine.resolve import asked, named, resolve
from skillchat.errors import SkillchatError
from skillchat.skills.model import Skill
from skillchat.target import Place, Target

if TYPE_CHECKING:
    from skillchat.engine.model_move import ModelMove

INHERIT = "inherit"
CLAUDE_ALIASES = frozenset(
    {"sonnet", "opus", "haiku", "opusplan", "sonnet[1m]", "opus[1m]", "default", "best"}
)


MoveConsent = Callable[["ModelMove"], bool]


def wanted_model(settings: Settings, skill: Skill) -> str | None:
    """The model asked for the skill (config first, then its SKILL.md), if any."""
    return settings.model.by_skill.get(skill.name) or skill.model


def skill_target(
    settings: Settings, asked_settings: Settings, skill: Skill, allow: MoveConsent
) -> tuple[Target | None, str | None]:
    """Where the skill's requests go (None: where the chat's do), and a line when its
    model could not be mapped or was not allowed. Resolved afresh (engine/resolve.py):
    a named model that is a local file (`gguf`) has its llama.cpp server started
    here (once per file and process) and is fitted to it, as `--gguf` would; if it
    cannot start (no xllamacpp, no such file), the chat's model it is, with the
    reason. A model on another server is fitted to its own window (its table's, or
    its `/props`), never to the chat's server's or local file's: `settings` are the
    chat's (its place), `asked_settings` what the user asked for, which every place
    is resolved from."""
    place, note = _mapped(settings, asked_settings, skill, allow)
    if place is None:
        return None, note
    try:
        return resolve(asked_settings, place), note
    except SkillchatError as exc:
        return None, (
            f"skill '{skill.name}' asks for the local model {place.gguf}, which cannot "
            f"start ({exc}): it runs on the chat's model {settings.model.name}"
        )


def _mapped(
    settings: Settings, asked_settings: Settings, skill: Skill, allow: MoveConsent
) -> tuple[Place | None, str | None]:
    wanted = wanted_model(settings, skill)
    if wanted is None or wanted == INHERIT or wanted == settings.model.name:
        return None, None
    # The chat's place, with what the user stated (never what was fitted to it).
    here = replace(
        asked(asked_settings),
        model=settings.model.name,
        api_base=settings.model.api_base,
        backend=settings.model.backend,
        gguf=settings.model.gguf,
    )
    if skill.name in settings.model.by_skill:  # the user's own choice: any model id
        return named(asked_settings, wanted, here), None
    if wanted in settings.model.named:
        from skillchat.engine.model_move import ModelMove  # a skill's own model, asked

        chosen = named(asked_settings, wanted, here)
        move = ModelMove(skill.name, wanted, chosen.model, _where(chosen), skill.forked)
        if _trusted(settings, skill) or allow(move):
            return chosen, None
        return None, (
            f"skill '{skill.name}' is not trusted to choose its model '{wanted}' "
            f"({move.model} on {move.server}): it runs on the chat's model {settings.model.name} "
            f'(skillchat skills trust {skill.name}, or [skill_models] {skill.name} = "{wanted}", '
            "allows it)"
        )
    if wanted.lower() in CLAUDE_ALIASES:
        return None, (
            f"skill '{skill.name}' asks for model '{wanted}', a Claude Code alias with no "
            f"[models.{wanted}] in the config: it runs on the chat's model {settings.model.name}"
        )
    return None, (
        f"skill '{skill.name}' asks for model '{wanted}', which the config does not name: "
        f"it runs on the chat's model {settings.model.name} ([skill_models] {skill.name} = "
        f'"{wanted}" allows it)'
    )


def _trusted(settings: Settings, skill: Skill) -> bool:
    from skillchat.skills.trust import TrustStore

    return TrustStore.load(packages=settings.run.packages).is_trusted(skill)


def _where(place: Place) -> str:
    """Where the model runs, for the question and the line (a URL's `user:password@`
    left out: the line may be saved or printed as JSON, where nothing masks it)."""
    if place.gguf is not None:
        return f"the local model file {place.gguf}"
    from skillchat.chats.store import without_credentials

    return without_credentials(place.api_base) or "its provider's own server"


def same_server(a: Settings, b: Settings) -> bool:
    """Whether requests under `a` and `b` go to one model on one server with the
    same limits (one backend serves both)."""
    return _server(a) == _server(b)


def _server(s: Settings) -> tuple[object, ...]:
    m = s.model
    return (m.name, m.api_base, m.backend, m.gguf, m.max_tokens, m.context_window)
