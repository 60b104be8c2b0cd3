"""The interactive session: `skillchat` with no command.

    Repl(settings, registry, store, transcript).run()  -> exit code

Each line is a built-in command (ui/commands.py) or a message for the loop; every
message is saved as it completes (recorder.py). What the session guarantees:

- The prompt comes first. The model library (openai ~0.5 s, litellm seconds) and
  Rich's Markdown load in daemon threads started once the prompt is on screen, so
  typing the first message overlaps them.
- A failure ends the message, never the session: provider errors, tool-round
  limits and a Ctrl-C during a reply print a line and return to the prompt, the
  chat intact (an interrupted reply is kept, marked, and saved as such).
- Nothing the session did not write reaches the terminal: warnings are dropped
  unless `--debug`; what others wrote (titles, replies, errors) is printed through
  ui/safe.py, and error lines and tracebacks have their secrets masked.
"""

from __future__ import annotations

import os
import sys
import warnings
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import merge_completers

from skillchat import __version__
from skillchat.config import Settings
from skillchat.engine.backends.background import BackgroundBackend
from skillchat.engine.emit import Event, ForkEnded
from skillchat.engine.invocation import unknown_name
from skillchat.engine.questions import Questions
from skillchat.errors import SkillchatError
from skillchat.sections import user_data_dir
from skillchat.session import Session
from skillchat.ui import commands
from skillchat.ui.background import is_light
from skillchat.ui.chat_commands import CHATS_SHOWN
from skillchat.ui.completion import ResourceCompleter, SlashCompleter
from skillchat.ui.consent import McpAsk, ReplConsent, live_card
from skillchat.ui.console import Consoles, error_line, keys_unechoed, stdout_is_terminal
from skillchat.ui.line_editor import LineEditor
from skillchat.ui.model_choices import model_choices
from skillchat.ui.notify import Notifier
from skillchat.ui.path_completion import PathCompleter
from skillchat.ui.safe import counted, one_line
from skillchat.ui.status_line import status_items, status_line
from skillchat.ui.views import ReplView
from skillchat.workspace.project import PROJECT_SOURCES

if TYPE_CHECKING:
    from skillchat.chats.loaded import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.engine.resolve import Sources
    from skillchat.recorder import ChatRecorder
    from skillchat.skills.registry import Registry
    from skillchat.target import Target
    from skillchat.ui.elicit_card import ElicitCard
    from skillchat.workspace.files import Workspace

RESUME_PREVIEW_LINES = 12
MCP_PROMPT = "/mcp__"  # `/mcp__SERVER__PROMPT args`: a server's prompt (mcp/prompts.py)
LEAVE_WORDS = {"exit", "quit"}  # alone on the line: leave, as /exit does


def _unwatched(stream: str, text: str) -> None:
    """The output sink of a command no card shows (a fork's, beside others)."""


def _elicit_card(consoles: Consoles, questions: Questions) -> ElicitCard:
    """The card for an MCP server's question, loaded at the first one asked."""
    from skillchat.ui.elicit_card import ElicitCard

    return ElicitCard(consoles, questions)


class Repl:
    """One interactive session: the prompt, the built-in commands, and the `Session`
    that owns the current chat's state (commands act on it, ui/commands.py)."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        store: ChatStore,
        transcript: Transcript | None = None,
        *,
        consoles: Consoles,
        debug: bool = False,
        workspace: Workspace | None = None,
        target: Target | None = None,
        sources: Sources | None = None,
        workspace_why: str | None = None,
    ) -> None:
        self.workspace = workspace
        # Why the workspace is on (a project nobody named is said at start).
        self._workspace_why = workspace_why
        self.store = store
        self.debug = debug
        # The REPL's output: its view, consent and run cards, the slash commands' lines.
        self.consoles = consoles
        if is_light(settings.ui.theme):
            consoles.use_light()
        self.view = ReplView(self.consoles)
        self.tokens = 0
        self.cached = 0  # of them, input read from the provider's prompt cache
        self.fork_runs: list[tuple[str, dict[str, Any]]] = []  # (model, summary) for the toolbar
        self.cost: float | None = None  # of this chat's turns, when the prices are known
        self.context_share: float | None = None  # percent of the window, after a turn
        self.status_items = status_items(settings.ui.status_line, self.consoles.warn)
        self._warned: set[str] = set()
        self.last_sent: str | None = None  # as typed, `/name` included: what /retry sends
        self._resumed = transcript
        questions = Questions()  # the chat's consent owner, which the cards ask through
        # stdout itself, not its Rich console: Rich loads after the prompt is drawn.
        terminal = sys.stdout if stdout_is_terminal() else None
        self.notifier = Notifier(settings.ui.notify, settings.ui.notify_after_s, terminal)
        questions.on_question = self.notifier.question
        self.session = Session(
            settings,
            registry=registry,
            store=store,
            transcript=transcript,
            listeners=[self.view, self._count_fork],
            workspace=workspace,
            # One consent per chat: "always" is per chat.
            consent=lambda: ReplConsent(settings, self.consoles, questions),
            mcp_consent=lambda: McpAsk(settings, self.consoles, questions),
            elicit=lambda form: _elicit_card(self.consoles, questions)(form),
            backend_for=BackgroundBackend,
            questions=questions,
            target=target,
            sources=sources,
        )
        self.session.mcp.start_servers()  # in the background: the prompt never waits
        if self.session.runner is not None:
            # The console is read when a command runs: none is made before the prompt.
            # A fork running beside others draws no card of its own (Questions.elsewhere).
            self.session.runner.watch = lambda request: (
                nullcontext(_unwatched)
                if questions.elsewhere()
                else live_card(self.consoles.out, request)
            )
        self._count_tokens(transcript)
        slash = SlashCompleter(
            lambda: [*commands.completions(), *self._prompt_pairs()],
            self._skill_pairs,
            self._chat_pairs,
            lambda: model_choices(self.session.settings, self.session.target.model, self.store),
        )
        resources = ResourceCompleter(lambda: self.session.mcp.listed()[1])
        self.editor = LineEditor(
            user_data_dir() / "history",
            merge_completers([slash, resources, PathCompleter(lambda: self.workspace)]),
            self.toolbar,
            self.view.notice,
            vi=settings.ui.editing_mode == "vi",
        )

    # -------------------------------------------------------------- the session

    def run(self, first: str | None = None) -> int:
        """Read and answer until /exit or Ctrl-D; 1 if some messages could not be saved.
        `first` (`skillchat "QUESTION"`) is handled as if typed at the first prompt."""
        if not self.debug:
            warnings.simplefilter("ignore")
        count = len(self.session.registry.skills)
        why = self._workspace_why
        why = f" ({why})" if why in PROJECT_SOURCES else ""
        where = f"workspace '{self.workspace.name}'{why} · " if self.workspace else ""
        print(
            one_line(
                f"skillchat {__version__} · {self.session.target.model} · "
                f"{counted(count, 'skill')} · {where}"
                "/help for commands, Ctrl-D to quit"
            )
        )
        self.warn_skills()
        if self._resumed is not None:
            self.show_resumed()
        if first and first.strip():
            print(one_line(f"❯ {first}"))
            if self.handle(first):
                return self._close()
        while (text := self._read()) is not None:
            if text.strip() and self.handle(text):
                break
        return self._close()

    def _read(self) -> str | None:
        """The next line; MCP servers' skills that came up meanwhile join first (the
        prompt never waits for a server), and again before a command runs."""
        self.session.mcp.refresh_served()
        text = self.editor.read(on_shown=self._preload)
        if text is not None and commands.find(text) is not None:
            self.session.mcp.refresh_served()
        return text

    def _preload(self) -> None:
        """Once a prompt is on screen: load what the next message needs (both idempotent)."""
        if isinstance(backend := self.session.backend, BackgroundBackend):
            backend.start()
        self.view.preload()

    def handle(self, text: str) -> bool:
        """Run one line; True when it ends the session."""
        if text.strip().lower() in LEAVE_WORDS:  # as in a shell, claude or python's REPL
            return True
        found = commands.find(text)
        try:
            if found is not None:
                command, arg = found
                return bool(command.run(self, arg))
            if text.startswith(MCP_PROMPT):  # a server's prompt: its messages are the turn
                self.send(self.session.mcp.prompt(text))
                return False
            self.session.refresh_skills()  # a skill added since the last turn is no typo
            if mistake := unknown_name(text, self.session.registry, commands.COMMANDS):
                # Not sent: a typo would cost a request and an answer to the wrong text.
                self._line(f"{mistake} (not sent; Up brings the line back)", "warning")
                return False
            self.send(text)
        except KeyboardInterrupt:  # a reply (or a command) stopped; what was shown stays
            self._line("⏹ interrupted", "warning")
        except SkillchatError as exc:
            self._line(f"error: {error_line(str(exc))}", "error")
        except Exception as exc:  # a bug must not end the session (the chat is saved)
            if self.debug:
                from skillchat.redact import traceback_text

                self._line(traceback_text(exc))
            detail = error_line(f"{exc.__class__.__name__}: {exc}")
            self._line(f"internal error: {detail} (rerun with --debug)", "error")
        return False

    def say(self, *parts: str | tuple[str, str]) -> None:
        """One line of a command's output on the stdout console, from plain strings
        and (text, style) pairs, each cleaned."""
        from skillchat.ui import safe

        self.consoles.out.print(safe.line(*parts))

    def _line(self, text: str, style: str = "") -> None:
        """A line of the REPL's own (an error, a notice) on its stdout console."""
        from skillchat.ui import safe

        self.consoles.out.print(safe.text(text, style))

    def send(self, text: str) -> None:
        """One message to the model (the loop keeps and saves a reply cut by Ctrl-C)."""
        self.last_sent = text
        self.notifier.turn_started()
        try:
            with keys_unechoed():
                result = self.session.send(text)
        finally:  # an answer, an error or Ctrl-C: the turn is over either way
            self.notifier.turn_ended()
        if result.usage is not None:
            self.tokens += result.usage.total_tokens
            self.cached += result.usage.cached_tokens
            if result.usage.cost is not None:
                self.cost = (self.cost or 0) + result.usage.cost
        self._measure_context()

    def _close(self) -> int:
        self.session.close()  # the MCP servers stop with the session
        if self.recorder.pending and not self.recorder.flush():
            n, chat = self.recorder.pending, self.recorder.chat_id or "(new)"
            failure = error_line(str(self.recorder.failure))
            self._line(f"error: {counted(n, 'write')} of chat {chat} not saved: {failure}", "error")
            return 1
        if self.recorder.chat_id is not None:
            chat = self.recorder.chat_id
            self._line(f"chat {chat} saved: {self._reopen(chat)} goes on with it", "muted")
        return 0

    def _reopen(self, chat: str) -> str:
        """The command that reopens `chat`: `-c` only while it is the chat `-c` would
        open from here (this folder's most recently updated), which a chat taken up
        with `/resume` and left unchanged, or one of another folder, is not."""
        store = self.session.store
        try:
            last = store.last_chat(folder=os.path.realpath(os.getcwd())) if store else None
        except SkillchatError:
            last = None
        if last is not None and last.id == chat:
            return f"skillchat -c (or --chat {chat})"
        return f"skillchat --chat {chat}"

    # ------------------------------------------------------------ chat switching

    @property
    def recorder(self) -> ChatRecorder:
        """The current chat's recorder (the REPL always has a store)."""
        assert self.session.recorder is not None
        return self.session.recorder

    def start_chat(self, transcript: Transcript | None) -> None:
        """`/new` (None) or `/resume`: make that chat the current one."""
        if transcript is None:
            self.session.new_chat()
        else:
            self.session.resume(transcript)
        self.view.records.clear()
        self._count_tokens(transcript)

    def _count_tokens(self, transcript: Transcript | None) -> None:
        self.tokens = self.cached = 0
        self.cost = self.context_share = None
        self.fork_runs = []
        if transcript is not None:
            stored = self.store.load_messages(transcript.chat.id)
            self.tokens = sum((m.usage or {}).get("total_tokens", 0) for m in stored)
            self.cached = sum((m.usage or {}).get("cached_tokens", 0) for m in stored)
            self.fork_runs = [(f.model, f.summary) for f in transcript.chat.forks]

    def _count_fork(self, event: Event) -> None:
        """A fork's tokens, for the toolbar (its requests are not in the turn's usage)."""
        if isinstance(event, ForkEnded):
            self.fork_runs.append((event.model, event.summary))

    def show_resumed(self) -> None:
        """Say which chat goes on, and where it stopped."""
        chat = self.store.get_chat(self.recorder.chat_id or "")
        title = one_line(chat.title or "untitled")
        self._line(
            f"resumed chat {chat.id} · {counted(chat.message_count, 'message')} · {title}", "strong"
        )
        messages = self.session.chat.messages
        replies = [m for m in messages if m["role"] == "assistant" and m["content"]]
        last = replies[-1] if replies else None
        if last is not None:
            lines = str(last["content"]).splitlines()
            cut = lines[-RESUME_PREVIEW_LINES:]
            if len(lines) > len(cut):
                cut.insert(0, "…")
            from skillchat.ui import safe

            # Rendered as the reply was when it came: not its raw `**bold**`.
            self.consoles.out.print(safe.markdown("\n".join(cut)), style="muted")

    # --------------------------------------------------------- toolbar, completion

    def toolbar(self) -> str:
        """The bottom line: the items of `[ui] status_line` (ui/status_line.py)."""
        return status_line(self, self.status_items)

    def _measure_context(self) -> None:
        """How full the window is, for the status line's `context` (after a turn)."""
        if "context" not in self.status_items:
            return
        from skillchat.engine.context_parts import measure

        parts = measure(self.session.chat)
        self.context_share = parts.total * 100 / parts.window if parts.window else None

    def _skill_pairs(self) -> list[tuple[str, str]]:
        """(name, what to type after it and the description) of each `/name` skill,
        the ones the user pinned first (a skill turned off is not in the registry)."""
        registry = self.session.registry
        skills = [registry.skills[n] for n in registry.names()]
        skills.sort(key=lambda s: s.override != "pin")
        return [(s.name, commands.skill_usage(s)) for s in skills if s.user_invocable]

    def _prompt_pairs(self) -> list[tuple[str, str]]:
        """The MCP servers' prompts, as `/mcp__SERVER__PROMPT` with their arguments."""
        return [(p.command, p.usage()) for p in self.session.mcp.listed()[0]]

    def _chat_pairs(self) -> list[tuple[str, str]]:
        return [(c.id, c.title or "") for c in self.store.list_chats(limit=CHATS_SHOWN)]

    def warn_skills(self) -> None:
        """At start and after the skills change (/reload, /skills disable|enable): a
        skills folder that cannot be listed, an installed skill that changed since it
        was installed (skills/lock.py), a skill a built-in command hides."""
        for problem in self.session.registry.problems:
            self.view.notice(f"{problem.path}: {problem.message}")
        self._warn_shadowed()

    def _warn_shadowed(self) -> None:
        """Once per name: a skill a built-in command hides is still reachable."""
        shadowed = set(self.session.registry.skills) & set(commands.COMMANDS)
        for name in sorted(shadowed - self._warned):
            self._warned.add(name)
            self.view.notice(f"/{name} is a built-in command; use the skill with /skill {name}")
