"""A skill loaded inline whose model differs from the chat's switches the chat to
it from the next request on (as `/model` would: the toolbar and the saved chat say
so), with one line saying why; engine/skill_model.py says which model that is, and
when an untrusted skill's choice needs the user's yes. A forked skill's model is
its fork's alone (engine/fork.py), so a fork's chat has no such step."""

from __future__ import annotations

from collections.abc import Callable

from skillchat.config import Settings
from skillchat.engine.emit import ToolRecord
from skillchat.engine.skill_model import MoveConsent, same_server, skill_target, wanted_model
from skillchat.engine.turn import Step, StepContext
from skillchat.target import Target


class SkillModel(Step):
    """Made by the session (session.py) for each of its chats: `asked` is what the
    user asked for (a skill's model is resolved from it), `use` moves the chat to
    another target and tells its recorder, `allow` asks the user."""

    def __init__(
        self,
        asked: Callable[[], Settings],
        use: Callable[[Target], None],
        allow: MoveConsent,
    ) -> None:
        self.asked = asked
        self.use = use
        self.allow = allow

    def after_tool(self, chat: StepContext, record: ToolRecord) -> None:
        if record.result.activated is None:
            return
        skill = chat.registry.get(record.result.activated)
        now = chat.settings
        if skill is None or wanted_model(now, skill) is None:
            return
        target, note = skill_target(now, self.asked(), skill, self.allow)
        if note is not None:
            chat.emit.notice(note)
        elif target is not None and not same_server(target.over(now), now):
            self.use(target)
            chat.emit.notice(
                f"skill '{skill.name}' is active: this chat's turns go to its model "
                f"{target.model} (/model switches back)"
            )
