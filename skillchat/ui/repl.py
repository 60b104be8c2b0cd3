"""The interactive session: `skillchat` with no command.

    Repl(settings, registry, store, transcript).run()  -> exit code

Each line is a built-in command (ui/commands.py) or a message for the loop; every
message is saved as it completes (chats/recorder.py). What the session guarantees:

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

import warnings
from dataclasses import replace
from typing import TYPE_CHECKING

from prompt_toolkit.completion import merge_completers

from skillchat import __version__
from skillchat.config import Settings, user_data_dir, with_model
from skillchat.engine.backends.background import BackgroundBackend
from skillchat.engine.invocation import unknown_name
from skillchat.errors import SkillchatError
from skillchat.sandbox.command_tool import SandboxCommands
from skillchat.session import load_registry, recording_chat, resumed_settings
from skillchat.ui import commands
from skillchat.ui.completion import SlashCompleter
from skillchat.ui.consent import ReplConsent, live_card
from skillchat.ui.console import error_line, keys_unechoed
from skillchat.ui.line_editor import LineEditor
from skillchat.ui.path_completion import PathCompleter
from skillchat.ui.safe import counted, one_line
from skillchat.ui.views import ReplView

if TYPE_CHECKING:
    from skillchat.chats.records import Transcript
    from skillchat.chats.store import ChatStore
    from skillchat.skills.registry import Registry
    from skillchat.workspace.files import Workspace

RESUME_PREVIEW_LINES = 12


def _line(text: str, style: str = "") -> None:
    from skillchat.ui import safe
    from skillchat.ui.console import out

    out().print(safe.text(text, style))


class Repl:
    """One interactive session: the prompt, the current chat, the built-in commands."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        store: ChatStore,
        transcript: Transcript | None = None,
        *,
        debug: bool = False,
        workspace: Workspace | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.consent = ReplConsent(settings)  # "always" answers last for the current chat
        self.registry = registry
        self.store = store
        self.debug = debug
        self.view = ReplView()
        self.backend = BackgroundBackend(settings)
        self.tokens = 0
        self._warned: set[str] = set()
        self.last_sent: str | None = None  # as typed, `/name` included: what /retry sends
        self._resumed = transcript
        self.start_chat(transcript)
        slash = SlashCompleter(commands.completions, self._skill_pairs, self._chat_pairs)
        self.editor = LineEditor(
            user_data_dir() / "history",
            merge_completers([slash, PathCompleter(lambda: self.workspace)]),
            self.toolbar,
        )

    # -------------------------------------------------------------- the session

    def run(self) -> int:
        """Read and answer until /exit or Ctrl-D; 1 if some messages could not be saved."""
        if not self.debug:
            warnings.simplefilter("ignore")
        count = len(self.registry.skills)
        where = f"workspace '{self.workspace.name}' · " if self.workspace else ""
        print(
            one_line(
                f"skillchat {__version__} · {self.settings.model} · "
                f"{counted(count, 'skill')} · {where}"
                "/help for commands, Ctrl-D to quit"
            )
        )
        self._warn_shadowed()
        if self._resumed is not None:
            self.show_resumed()
        while (text := self.editor.read(on_shown=self._preload)) is not None:
            if text.strip() and self.handle(text):
                break
        return self._close()

    def _preload(self) -> None:
        """Once a prompt is on screen: load what the next message needs (both idempotent)."""
        self.backend.start()
        self.view.preload()

    def handle(self, text: str) -> bool:
        """Run one line; True when it ends the session."""
        found = commands.find(text)
        try:
            if found is not None:
                command, arg = found
                return bool(command.run(self, arg))
            if mistake := unknown_name(text, self.registry, commands.COMMANDS):
                # Not sent: a typo would cost a request and an answer to the wrong text.
                _line(f"{mistake} (not sent; Up brings the line back)", "warning")
                return False
            self.send(text)
        except KeyboardInterrupt:  # a reply (or a command) stopped; what was shown stays
            _line("⏹ interrupted", "warning")
        except SkillchatError as exc:
            _line(f"error: {error_line(str(exc))}", "error")
        except Exception as exc:  # a bug must not end the session (the chat is saved)
            if self.debug:
                from skillchat.ui.redact import traceback_text

                _line(traceback_text(exc))
            detail = error_line(f"{exc.__class__.__name__}: {exc}")
            _line(f"internal error: {detail} (rerun with --debug)", "error")
        return False

    def send(self, text: str) -> None:
        """One message to the model (the loop keeps and saves a reply cut by Ctrl-C)."""
        if self.backend.loading:
            _line(f"(loading the {self.backend.name} library…)", "muted")
        self.last_sent = text
        with keys_unechoed():
            result = self.chat.send(text)
        if result.usage is not None:
            self.tokens += result.usage.total_tokens

    def _close(self) -> int:
        if self.recorder.pending and not self.recorder.flush():
            n, chat = self.recorder.pending, self.recorder.chat_id or "(new)"
            failure = error_line(str(self.recorder.failure))
            _line(f"error: {counted(n, 'write')} of chat {chat} not saved: {failure}", "error")
            return 1
        if self.recorder.chat_id is not None:
            chat = self.recorder.chat_id
            _line(f"chat {chat} saved: skillchat -c (or --chat {chat}) goes on with it", "muted")
        return 0

    # ------------------------------------------------------------ chat switching

    def start_chat(self, transcript: Transcript | None) -> None:
        """Make `transcript`'s chat (or a new one) the current chat."""
        model = resumed_settings(self.settings, transcript).model
        if model != self.settings.model:
            self._use_model(model)
        self.view.records.clear()
        self.consent.forget()  # "always" was said about the chat being left
        self.chat, self.recorder = recording_chat(
            self.settings,
            self.registry,
            self.backend,
            self.view,
            self.store,
            transcript,
            self.consent,
            workspace=self.workspace,
        )
        if isinstance(runner := self.chat.context.commands, SandboxCommands):
            runner.watch = live_card
        self.tokens = 0
        if transcript is not None:
            stored = self.store.load_messages(transcript.chat.id)
            self.tokens = sum((m.usage or {}).get("total_tokens", 0) for m in stored)

    def show_resumed(self) -> None:
        """Say which chat goes on, and where it stopped."""
        chat = self.store.get_chat(self.recorder.chat_id or "")
        title = one_line(chat.title or "untitled")
        _line(
            f"resumed chat {chat.id} · {counted(chat.message_count, 'message')} · {title}", "strong"
        )
        replies = [m for m in self.chat.messages if m["role"] == "assistant" and m["content"]]
        last = replies[-1] if replies else None
        if last is not None:
            lines = str(last["content"]).splitlines()
            cut = lines[-RESUME_PREVIEW_LINES:]
            if len(lines) > len(cut):
                cut.insert(0, "…")
            _line("\n".join(cut), "muted")

    def switch_model(self, model: str) -> None:
        """`/model`: the current chat goes on with `model` from the next message."""
        self._use_model(model)
        self.chat.settings, self.chat.backend = self.settings, self.backend
        s = self.settings
        self.recorder.switched(s.model, s.api_base, s.backend)

    def _use_model(self, model: str) -> None:
        """A backend for `model` (a `[models.NAME]` brings its server and limits); its
        library loads once the next prompt is shown."""
        self.settings = with_model(self.settings, model)
        self.backend = BackgroundBackend(self.settings)

    def use_disabled(self, names: tuple[str, ...]) -> None:
        """`/skills disable|enable`: these names left out from the next message on."""
        self.settings = replace(self.settings, skills_disabled=names)
        self.reload_skills()

    def reload_skills(self) -> None:
        """`/reload`: scan the skill directories again; the chat keeps its transcript."""
        self.registry = load_registry(self.settings)
        self.chat.use_registry(self.registry)
        self._warn_shadowed()

    # --------------------------------------------------------- toolbar, completion

    def toolbar(self) -> str:
        """The bottom line: model, chat, activated skills, attachments, tokens; one
        line, control characters visible (names come from skills and the config)."""
        parts = [self.settings.model, f"chat {self.recorder.chat_id or 'new'}"]
        if self.chat.activated:
            parts.append("skills: " + ", ".join(self.chat.activated))
        if self.chat.attachments and self.chat.attachments.pending:
            parts.append(f"attached: {len(self.chat.attachments.pending)} for the next message")
        parts.append(f"{self.tokens:,} tokens")
        if self.recorder.failure:
            parts.append("NOT SAVED")
        return one_line(" · ".join(parts))

    def _skill_pairs(self) -> list[tuple[str, str]]:
        skills = self.registry.skills
        return [
            (n, skills[n].description) for n in self.registry.names() if skills[n].user_invocable
        ]

    def _chat_pairs(self) -> list[tuple[str, str]]:
        return [(c.id, c.title or "") for c in self.store.list_chats(limit=commands.CHATS_SHOWN)]

    def _warn_shadowed(self) -> None:
        """Once per name: a skill a built-in command hides is still reachable."""
        for name in sorted(set(self.registry.skills) & set(commands.COMMANDS) - self._warned):
            self._warned.add(name)
            self.view.notice(f"/{name} is a built-in command; use the skill with /skill {name}")
