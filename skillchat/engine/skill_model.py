"""Which model a skill's turns go to: the config's `[skill_models]`, else its `model:`.

    settings, note = skill_settings(chat_settings, skill)
    SkillModels(...)   # a chat's listener: an inline skill's model becomes the chat's

A `[skill_models]` entry is the user's choice: a `[models.NAME]` (its server and
limits come with it, or its local `gguf` file, run on the embedded llama.cpp while
the chat stays on its own server) or any model id, on the chat's server. A SKILL.md's `model:` is
the author's, and a skill from anywhere must not choose what the user pays for: it
is honoured when it names a `[models.NAME]` of this config (`inherit` is the chat's
model). Anything else falls back to the chat's model, and `note` says so in one line:
Claude Code's aliases (`sonnet`, `opus`, `haiku`...) unless the config has a
`[models.sonnet]`, and a model id unless `[skill_models]` names it for the skill.
"""

from __future__ import annotations

from collections.abc import Callable

from skillchat.config import Settings, with_model
from skillchat.engine.emit import Event, ToolFinished
from skillchat.errors import SkillchatError
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry

INHERIT = "inherit"
CLAUDE_ALIASES = frozenset(
    {"sonnet", "opus", "haiku", "opusplan", "sonnet[1m]", "opus[1m]", "default", "best"}
)


def wanted_model(settings: Settings, skill: Skill) -> str | None:
    """The model asked for the skill (config first, then its SKILL.md), if any."""
    return settings.skill_models.get(skill.name) or skill.model


def skill_settings(settings: Settings, skill: Skill) -> tuple[Settings, str | None]:
    """The settings the skill's requests go with, and a line when its model
    could not be mapped (then they are the chat's). A named model that is a local
    file (`gguf`) has its llama.cpp server started here (once per file and process),
    and the settings fitted to it, as `--gguf` would; if it cannot start (no
    xllamacpp, no such file), the chat's model it is, with the reason. A model on
    another server is fitted to its own window (its table's, or its `/props`), never
    to the chat's server's or local file's."""
    chosen, note = _mapped(settings, skill)
    if chosen.gguf is None:
        if chosen.api_base == settings.api_base and settings.gguf is None:
            return chosen, note
        from skillchat.engine.context_window import fit_to_server, unfitted

        return fit_to_server(unfitted(chosen)), note
    if chosen.gguf == settings.gguf:
        return chosen, note
    from skillchat.engine.local.server import start_local

    try:
        return start_local(chosen), note
    except SkillchatError as exc:
        return settings, (
            f"skill '{skill.name}' asks for the local model {chosen.gguf}, which cannot "
            f"start ({exc}): it runs on the chat's model {settings.model}"
        )


def _mapped(settings: Settings, skill: Skill) -> tuple[Settings, str | None]:
    wanted = wanted_model(settings, skill)
    if wanted is None or wanted == INHERIT or wanted == settings.model:
        return settings, None
    if wanted in settings.named_models:
        return with_model(settings, wanted), None
    if skill.name in settings.skill_models:  # the user's own choice: any model id
        return with_model(settings, wanted), None
    if wanted.lower() in CLAUDE_ALIASES:
        return settings, (
            f"skill '{skill.name}' asks for model '{wanted}', a Claude Code alias with no "
            f"[models.{wanted}] in the config: it runs on the chat's model {settings.model}"
        )
    return settings, (
        f"skill '{skill.name}' asks for model '{wanted}', which the config does not name: "
        f"it runs on the chat's model {settings.model} ([skill_models] {skill.name} = "
        f'"{wanted}" allows it)'
    )


def same_server(a: Settings, b: Settings) -> bool:
    """Whether requests under `a` and `b` go to one model on one server with the
    same limits (one backend serves both)."""
    return _server(a) == _server(b)


def _server(s: Settings) -> tuple[object, ...]:
    return (s.model, s.api_base, s.backend, s.gguf, s.max_tokens, s.context_window)


class SkillModels:
    """A listener of the chat: a skill loaded inline whose model differs from the
    chat's switches the chat to it from the next request on (as `/model` would: the
    toolbar and the saved chat say so), with one line saying why. A forked skill's
    model is its fork's alone (engine/fork.py)."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        registry: Callable[[], Registry],
        use: Callable[[Settings], None],
        notice: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.use = use
        self.notice = notice

    def __call__(self, event: Event) -> None:
        if not isinstance(event, ToolFinished) or event.record.result.activated is None:
            return
        skill = self.registry().get(event.record.result.activated)
        if skill is None or wanted_model(self.settings(), skill) is None:
            return
        now = self.settings()
        settings, note = skill_settings(now, skill)
        if note is not None:
            self.notice(note)
        elif not same_server(settings, now):
            self.use(settings)
            self.notice(
                f"skill '{skill.name}' is active: this chat's turns go to its model "
                f"{settings.model} (/model switches back)"
            )
