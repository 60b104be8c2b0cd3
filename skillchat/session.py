"""What `ask`, the REPL and eval share to hold a chat, above the chats layer and
below evals, ui and cli: the `Session` that owns one chat's live state (its skill
registry comes from session_settings.py's `load_registry`).

    store = open_store(settings.storage)            # session_settings.py, with the chat to resume
    transcript = chosen_transcript(store, last=..., chat_id=..., notify=warn)
    session = Session(settings, store=store, transcript=transcript,
                      listeners=[view], workspace=workspace, consent=...)

Settings themselves come from the command line (cli/open_chat.py `open_chat`),
the workspace from `workspace_from_settings`; the UI picks the view (a listener of
the chat's events, engine/emit.py) and how a backend is made.
Where the chat's requests go is its `Target` (target.py), made by engine/resolve.py's
`resolve` from the settings; `/model`, `/resume`, `-c` and a skill's model each make
a new one. With a local model (`--gguf`, `--local`) resolving starts its server: it
loads while the rest starts up, stays warm between turns, and ends with the process,
however it ends (engine/local/server.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.session_mcp import SessionMcp
from skillchat.session_settings import continued_target, load_registry

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.config import Settings
    from skillchat.engine.backends.base import Backend, BackendFor
    from skillchat.engine.emit import Event, Listener
    from skillchat.engine.fork import SkillFork
    from skillchat.engine.loop import Chat
    from skillchat.engine.model_move import ModelMove
    from skillchat.engine.questions import OneAtATime, Questions
    from skillchat.engine.resolve import Sources
    from skillchat.engine.steps.hooks import HookStep
    from skillchat.engine.turn import TurnResult
    from skillchat.hooks.dispatch import Hooks
    from skillchat.mcp.elicit import Elicit
    from skillchat.mcp.policy import McpConsent
    from skillchat.recorder import ChatRecorder
    from skillchat.sandbox.command_tool import Consent, SandboxCommands
    from skillchat.skills.registry import Registry
    from skillchat.target import Target
    from skillchat.tools.base import ToolContext, ToolResult
    from skillchat.workspace.files import Workspace


class Session:
    """One chat's live state in one place, and the operations the front ends need.

    It owns the settings and the skill registry (both held by the chat's tool
    context, the one copy the loop, the tools and the sandbox runner read), the
    backend, the tools (run_command made with the runner), the runner itself, the
    consent of the current chat, the store and the recorder, and its MCP servers
    (`mcp`: session_mcp.py, their tools, prompts and served skills). Each operation
    changes one thing, and everything that depends on it sees the change:

        session = Session(settings, store=store, listeners=[view],
                          consent=lambda: ReplConsent(settings, consoles, questions),
                          questions=questions)
        session.send("hello")           # a TurnResult; the listeners get its events
        session.stream("hello")         # the same, its events pulled (a for loop)
        session.refresh_skills()        # what send does first: edited skills picked up
        session.reload_skills()         # /reload: catalog, tools, sandbox mounts
        session.disable_skills(names)   # /skills disable|enable: the same, fewer skills
        session.switch_model("gpt-x")   # /model: backend, settings the tools read
        session.new_chat()              # /new, /resume ID: a fresh transcript and
        session.resume(transcript)      # consent ("always" is per chat)

    Without a store nothing is saved (eval); without `consent` there is no
    run_command. `consent` is called for each chat to make its consent, so an
    "always" answered in one chat is never carried into the next. Every question
    (a command, an install, an MCP call, a skill's model), a fork's too, goes
    through `questions`, the chat's one consent owner (engine/questions.py), and so
    does an MCP server's question (`elicit`: the REPL's card; else `ask`'s flags).
    """

    chat: Chat  # the current chat: its transcript, tool context and loop

    def __init__(
        self,
        settings: Settings,
        *,
        registry: Registry | None = None,
        store: ChatStore | None = None,
        transcript: Transcript | None = None,
        listeners: Sequence[Listener] = (),
        workspace: Workspace | None = None,
        consent: Callable[[], Consent] | None = None,
        backend_for: BackendFor | None = None,
        mcp_consent: Callable[[], McpConsent] | None = None,
        elicit: Elicit | None = None,
        questions: Questions | None = None,
        target: Target | None = None,
        sources: Sources | None = None,
    ) -> None:
        from skillchat.engine.backends.select import make_backend
        from skillchat.engine.emit import Emitter
        from skillchat.engine.questions import OneAtATime, Questions
        from skillchat.engine.resolve import asked, resolve

        self.store = store
        self.workspace = workspace
        self.emit = Emitter(listeners)
        self._consent = consent
        self._backend_for = backend_for or make_backend
        # What the user asked for; every target is resolved from these, never from
        # the one it replaces. `target`: where the command line resolved the chat
        # (`transcript`'s continued already), else resolved here.
        self._asked = settings
        # Which values the command line set (they win over a resumed chat's place).
        self._sources = sources or {}
        if target is None:
            start = resolve(settings, asked(settings), probe=False)
            target = continued_target(settings, start, transcript, self._sources)
        # The chat's own target: a `/model NAME` table's place lasts only until the
        # next `/model`, which starts again from this one (a `/resume`d chat's own).
        self._own = self.target = target
        settings = target.over(settings)
        self.questions = questions or Questions()
        self._asking: OneAtATime | None = None
        self.runner: SandboxCommands | None = None
        if consent is not None:
            from skillchat.sandbox.setup import command_runner

            self._asking = OneAtATime(consent(), self.questions)
            self.runner = command_runner(settings, workspace, self, self._asking)
        self.recorder: ChatRecorder | None = None
        self.mcp = SessionMcp(
            settings, lambda: self.chat, self.emit, self.questions, mcp_consent, elicit
        )
        registry = load_registry(settings) if registry is None else registry
        self.hooks = self._hooks(settings, registry, workspace)
        self._start(transcript, settings, registry, self._backend(target))

    @property
    def settings(self) -> Settings:
        """The settings of the moment (the chat's tool context holds the one copy)."""
        return self.chat.settings

    @property
    def registry(self) -> Registry:
        """The skills of the moment (held by the chat's tool context too)."""
        return self.chat.registry

    @property
    def context(self) -> ToolContext:
        """The chat's tools' state: its active skills (a served one gates commands,
        a fork's too: sandbox/setup.py)."""
        return self.chat.context

    @property
    def backend(self) -> Backend:
        return self.chat.backend

    @property
    def chat_id(self) -> str | None:
        """The saved chat's id; None until its first message is saved (or unsaved)."""
        return self.recorder.chat_id if self.recorder is not None else None

    # ------------------------------------------------------------- operations

    def send(self, text: str) -> TurnResult:
        """One user message through the loop; its events go to the listeners. The
        skills edited, added or removed since the last message count for it."""
        self.refresh_skills()
        if self.mcp.hub is not None:  # `@SERVER:URI`: a server's resource attached
            from skillchat.mcp.prompts import with_resources

            text = with_resources(self.mcp.hub, text, self.emit.notice)
        return self.chat.send(text)

    def stream(self, text: str) -> Generator[Event, None, TurnResult]:
        """`send` for a caller that pulls: the turn's events, as the listeners get
        them, while it runs (`for event in session.stream("hi")`); the generator
        returns the `TurnResult`. Stopping early stops the turn as Ctrl-C does
        (engine/pull.py); the session is not used by anything else meanwhile."""
        from skillchat.engine.pull import pulled

        return pulled(self.emit, lambda: self.send(text))

    def refresh_skills(self) -> None:
        """Live reload: when a skill folder or SKILL.md changed since the registry
        was read (a stat of each, skills/changes.py), read them again and serve the
        new set as `/reload` does, with one line saying what changed; a skill that
        broke keeps its last good version."""
        if not self.registry.changed():
            return
        from skillchat.skills.changes import compare

        changes = compare(self.registry, load_registry(self.settings))
        self.chat.use_registry(changes.registry, changes.edited)
        if (line := changes.line()) is not None:
            self.emit.notice(line)

    def run_tool(self, name: str, raw_arguments: str) -> ToolResult:
        """Run one of the chat's tools as the model would (`/files`, `/grep`), its
        result shown to the user only: nothing joins the transcript."""
        return self.chat.toolbox.run(name, raw_arguments)

    def reload_skills(self) -> None:
        """`/reload`: scan the skill directories again; the chat keeps its transcript,
        and the catalog, the tools and the sandbox serve the new set."""
        self.chat.use_registry(self.mcp.with_served(load_registry(self.settings)))

    def disable_skills(self, names: tuple[str, ...]) -> None:
        """`/skills disable|enable`: these names left out from the next message on."""
        self.chat.use_settings(self.settings.replaced(skills_disabled=names))
        self.reload_skills()

    def switch_model(self, model: str) -> None:
        """`/model`: the current chat goes on with `model` (a `[models.NAME]` brings
        its server and limits, until the next `/model` goes back to the session's)
        from the next message, saved with the chat. Another server or local file is
        fitted to its own window (`fitted_elsewhere`); the session's own model, by
        its name (a local file's is the name `/model` shows), gets back the
        session's server or file and its fitting."""
        from skillchat.engine.resolve import named, resolve

        own = self._own
        place = own.place if model == own.model else named(self._asked, model, own.place)
        self._use(own if place == own.place else resolve(self._asked, place))

    def _use(self, target: Target) -> None:
        """The current chat goes on at `target` (another model: `/model`, a skill's
        own model), saved with the chat."""
        self.target = target
        settings = target.over(self.settings)
        self.chat.use_settings(settings, self._backend(target))
        if self.recorder is not None:
            self.recorder.switched(target)

    def new_chat(self) -> None:
        """`/new`: a fresh chat with the same settings, skills and model."""
        self._fresh_consent()
        self._start(None, self.settings, self.registry, self.backend)

    def resume(self, transcript: Transcript) -> None:
        """`/resume`: go on with a saved chat, on its own model and server (or local
        model file), unless the command line chose them."""
        target = continued_target(self._asked, self._own, transcript, self._sources)
        settings = target.over(self.settings)
        backend = self.backend if target == self.target else self._backend(target)
        self._fresh_consent()
        # This chat's own target: where a later `/model` comes back to.
        self._own = self.target = target
        self._start(transcript, settings, self.registry, backend)

    # ----------------------------------------------------------------- inside

    def _backend(self, target: Target) -> Backend:
        """The backend for `target`, with the timeouts the user asked for."""
        from skillchat.engine.backends.base import Timeouts

        return self._backend_for(target, Timeouts.of(self._asked.model))

    def _fresh_consent(self) -> None:
        """The chat being left takes its "always" answers with it."""
        if self._asking is not None and self._consent is not None:
            self._asking.consent = self._consent()

    def _allow_model(self, move: ModelMove) -> bool:
        """Whether an untrusted skill's own model may take its turns (asked in the
        REPL; no where nobody is asked)."""
        return self._asking is not None and self._asking.ask_model(move)

    def _fork(self) -> SkillFork:
        """What runs `context: fork` skills for the current chat (engine/fork.py)."""
        from skillchat.engine.fork import SkillFork
        from skillchat.tools.toolbox import chat_tools

        return SkillFork(
            lambda: self.chat,
            self._backend_for,
            lambda: chat_tools(self.runner),
            self.questions,
            self._allow_model,
            lambda: self._asked,
            self._hook_steps,
        )

    def _hooks(
        self, settings: Settings, first: Registry, workspace: Workspace | None
    ) -> Hooks | None:
        """The session's hooks (skillchat/hooks): asked about in the REPL (a consent
        with `ask_hook`), never run untrusted where nobody is asked."""
        from skillchat.hooks import may_have_hooks

        if not settings.hooks_enabled or not may_have_hooks(
            settings.hooks, Path.cwd(), first.skills.values()
        ):
            return None
        from skillchat.sandbox.hooks import session_hooks

        asking = self._asking
        ask = asking.ask_hook if asking and hasattr(asking.consent, "ask_hook") else None
        return session_hooks(
            settings,
            lambda: self.chat.registry if hasattr(self, "chat") else first,
            workspace.root if workspace is not None else None,
            self.emit.notice,
            ask,
            lambda: self.chat_id,
        )

    def _hook_steps(self) -> list[HookStep]:
        """The hooks' step of a chat or fork, when the session has hooks (their
        machinery is imported only then)."""
        if self.hooks is None:
            return []
        from skillchat.engine.steps.hooks import HookStep

        return [HookStep(self.hooks)]

    def _start(
        self,
        transcript: Transcript | None,
        settings: Settings,
        registry: Registry,
        backend: Backend,
    ) -> None:
        """Make `transcript`'s chat (or a new one) the current chat, recorded by a
        recorder of its own."""
        from skillchat.engine.loop import Chat
        from skillchat.engine.steps.skill_model import SkillModel
        from skillchat.tools.toolbox import chat_tools

        listeners: list[Listener] = [self.emit]
        if self.store is not None:
            from skillchat.recorder import ChatRecorder

            self.recorder = ChatRecorder(
                self.store,
                self.target,
                transcript.chat.id if transcript else None,
                notify=self.emit.notice,
                folder=os.path.realpath(os.getcwd()),
                workspace=str(self.workspace.root) if self.workspace else None,
            )
            listeners.append(self.recorder)
        hooks = self._hook_steps()
        listeners += hooks  # a notice is a `notification`
        self.chat = Chat(
            settings,
            registry,
            backend,
            *listeners,
            workspace=self.workspace,
            tools=chat_tools(self.runner, self._fork()),
            source=self.mcp.tools(settings),
            steps=[SkillModel(lambda: self._asked, self._use, self._allow_model), *hooks],
        )
        for step in hooks:
            step.started("resume" if transcript is not None else "startup")
        if transcript is not None:
            chat = transcript.chat
            self.chat.restore(transcript.messages, chat.activated_skills, chat.served_skills)

    def close(self) -> None:
        """Stop the MCP servers (also done at exit; a killed skillchat's die with it)."""
        self.mcp.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
