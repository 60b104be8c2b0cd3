"""A session's MCP servers as its chats use them: the hub (started when first
needed, mcp/hub.py), the skills the servers serve joining the chat's registry,
their prompts and resources for the REPL, and their questions (elicitation) asked
through the chat's one consent owner.

Apart from the `Session` (session.py) because it is a part of its own that only a
session with `[mcp.NAME]` servers uses, and that reaches the chat only through
what it is handed (the current chat, its events, its questions): the MCP SDK is
imported only with a server, and nothing here runs without one.

    mcp = SessionMcp(settings, lambda: session.chat, emit, questions, consent, elicit)
    mcp.start_servers()      # the REPL: in the background
    mcp.tools(settings)      # a new chat's tool source (None without a server)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from skillchat.session_settings import load_registry

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.engine.emit import Emitter
    from skillchat.engine.loop import Chat
    from skillchat.engine.questions import Questions
    from skillchat.mcp.elicit import Elicit, ElicitAnswer, Form
    from skillchat.mcp.hub import McpHub
    from skillchat.mcp.policy import McpConsent
    from skillchat.mcp.prompts import Prompt, Resource
    from skillchat.skills.model import Skill
    from skillchat.skills.registry import Registry
    from skillchat.tools.toolbox import ToolSource


class SessionMcp:
    """The MCP servers of one session, for each of its chats in turn: `hub` is None
    without a server. `mcp_consent` is called for each chat ("always" is per chat);
    `elicit` is the REPL's card (`ask`'s and eval's: flag_elicit)."""

    def __init__(
        self,
        settings: Settings,
        chat: Callable[[], Chat],
        emit: Emitter,
        questions: Questions,
        mcp_consent: Callable[[], McpConsent] | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        self._chat = chat
        self.emit = emit
        self.questions = questions
        self._mcp_consent = mcp_consent
        self._elicit = elicit  # the REPL's card; `ask`'s and eval's: flag_elicit
        self.hub: McpHub | None = None
        self._served: list[Skill] = []  # the skills MCP servers serve, as last listed
        if settings.mcp.active():  # the SDK is imported only with a server
            from skillchat.mcp.hub import McpHub

            # Started when first needed (mcp/hub.py): nothing here starts or waits.
            self.hub = McpHub(settings.mcp.active(), self._answer)

    @property
    def chat(self) -> Chat:
        return self._chat()

    @property
    def settings(self) -> Settings:
        """The current chat's settings (its tool context holds the one copy)."""
        return self.chat.settings

    def prompt(self, typed: str) -> str:
        """`/mcp__SERVER__PROMPT args`: the prompt's messages, to send as the user's
        turn (mcp/prompts.py); McpError when no server of the session has it."""
        from skillchat.errors import McpError
        from skillchat.mcp.prompts import run_prompt

        if self.hub is None:
            raise McpError("no MCP server in this session")
        return run_prompt(self.hub, typed)

    def listed(self) -> tuple[list[Prompt], list[tuple[str, Resource]]]:
        """The prompts and resources of the servers up now (for completion)."""
        if self.hub is None:
            return [], []
        states = self.hub.servers.items()
        prompts = [p for _, state in states for p in state.prompts]
        return prompts, [(name, r) for name, state in states for r in state.resources]

    def start_servers(self) -> None:
        """Start every MCP server now, in the background, instead of when first
        needed (the REPL: the user types meanwhile, and served skills reach
        `/skills` and the first call finds its server up)."""
        if self.hub is not None:
            self.hub.start()

    def refresh_served(self) -> None:
        """The skills of MCP servers that came up since the last look join the chat
        now, with their notices; a server still starting is not waited for."""
        if self.hub is None:
            return
        from skillchat.mcp.tools import McpTools

        source = self.chat.toolbox.source
        if isinstance(source, McpTools):
            for line in source.served_now():
                self.emit.notice(line)

    def tools(self, settings: Settings) -> ToolSource | None:
        """The servers' tools for a new chat, with a consent of its own ("always"
        is per chat); `ask` and eval never ask (`flag_consent`)."""
        if self.hub is None:
            return None
        from skillchat.mcp.policy import flag_consent
        from skillchat.mcp.tools import McpTools

        consent = self._mcp_consent() if self._mcp_consent else flag_consent(settings.mcp)
        return McpTools(
            self.hub, lambda request: self.questions.ask(consent, request), self._served_changed
        )

    def _answer(self, form: Form) -> ElicitAnswer:
        """A server's question (on the thread of the call it came in), asked through
        the chat's one consent owner, as every question is."""
        from skillchat.mcp.elicit import flag_elicit

        elicit = self._elicit or flag_elicit(self.settings.mcp, self.emit.notice)
        return self.questions.ask(elicit, form)

    def with_served(self, registry: Registry) -> Registry:
        from skillchat.skills.registry import with_served

        return with_served(registry, self._served, self.settings.skills.disabled)

    def _served_changed(self, served: list[Skill]) -> list[str]:
        """The servers' skills changed (or were first listed): the chat serves them
        from this message on; a local skill of the same name wins, and is said."""
        self._served = served
        registry = self.with_served(load_registry(self.settings))
        self.chat.use_registry(registry)
        roots = {skill.root: skill.origin for skill in served}
        return [
            f"skill '{e.name}' of {roots[e.path]} is shadowed by {e.shadowed_by}"
            for e in registry.excluded
            if e.reason == "shadowed" and e.path in roots
        ]

    def close(self) -> None:
        """Stop the MCP servers (also done at exit; a killed skillchat's die with it)."""
        if self.hub is not None:
            self.hub.close()
