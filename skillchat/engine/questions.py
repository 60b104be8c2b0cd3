"""The chat's one consent owner: every question the user is asked while a chat runs
(a command to run, packages to install, an MCP tool to call, a skill's own model)
goes through `Questions.ask`, one at a time, on the chat's own thread.

    questions = Questions()                       # the session's, for all its chats
    verdict = questions.ask(consent, request)     # what the consent answers
    with questions.relayed(inbox.put): ...        # forks run at once meanwhile

Forks started by one reply run in worker threads (engine/parallel_forks.py). A
question asked on one of them is handed to the chat's thread (`relayed`), which
asks it when nothing else is on screen, and its answer goes back to that fork.
Two questions never wait on the terminal at once: when a fork's install card and
another fork's command question were both drawn, two threads read the one terminal
and a key typed at the card drawn last answered the other. While a question is on
screen, `waiting` names the forks whose questions come next (the card says so), and
`asker` the fork whose question it is (the card names it).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

Request = TypeVar("Request")
Answer = TypeVar("Answer")
current = threading.local()  # `name`: the fork this thread runs ("digest #2")


@dataclass(frozen=True)
class Question:
    """A fork's question, to be asked on the chat's thread (`Questions.put`)."""

    asker: str | None
    ask: Callable[[], Any]
    answer: queue.Queue[Any]


class Questions:
    """Asks one question at a time, each on the chat's thread, naming the fork."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # held while a question shows
        self._relay: Callable[[Question], None] | None = None
        self._owner: int | None = None
        self._waiting: list[str] = []
        self.asker: str | None = None  # the fork whose question is on screen, if any
        # Called as a question is shown: the REPL's notification (ui/notify.py).
        self.on_question: Callable[[], None] | None = None

    def ask(self, consent: Callable[[Request], Answer], request: Request) -> Answer:
        """`consent(request)`, asked on the chat's thread once nothing else is asked
        (a KeyboardInterrupt when the user pressed Ctrl-C at a relayed question)."""
        asker = getattr(current, "name", None)
        relay = self._relay
        if relay is None or threading.get_ident() == self._owner:
            return self._asked(asker, lambda: consent(request))
        answer: queue.Queue[Any] = queue.Queue(1)
        self._waiting.append(asker or "a skill")
        relay(Question(asker, lambda: consent(request), answer))
        verdict = answer.get()
        if isinstance(verdict, BaseException):
            raise KeyboardInterrupt
        return verdict  # type: ignore[no-any-return]

    def put(self, question: Question) -> None:
        """Ask a relayed question (on the chat's thread) and hand its answer back."""
        self._waiting.remove(question.asker or "a skill")
        try:
            question.answer.put(self._asked(question.asker, question.ask))
        except BaseException as exc:  # Ctrl-C at the question: that fork stops
            question.answer.put(exc)
            raise

    def waiting(self) -> list[str]:
        """The forks whose questions wait for the one on screen to be answered."""
        return list(self._waiting)

    def elsewhere(self) -> bool:
        """Whether this thread is a fork's, running beside others: what it would draw
        itself (a command's live output, an install's progress) would cross what the
        chat's thread draws, so it draws nothing; its card and result say what ran."""
        return self._relay is not None and threading.get_ident() != self._owner

    @contextmanager
    def relayed(self, relay: Callable[[Question], None]) -> Iterator[None]:
        """While forks run at once: questions from other threads than this one go to
        `relay`, whose owner asks them here with `put`."""
        self._relay, self._owner = relay, threading.get_ident()
        try:
            yield
        finally:
            self._relay = self._owner = None

    def _asked(self, asker: str | None, ask: Callable[[], Answer]) -> Answer:
        with self._lock:
            self.asker = asker
            try:
                return ask()
            finally:
                self.asker = None


class OneAtATime:
    """A chat's consent for run_command (with its package installs) and for a skill's
    model, every question of which goes through `questions`. The session hands the
    sandbox runner this one object and replaces `consent` for each new chat ("always"
    is per chat): the runner's installs read it at their first use, so an install
    asks through the chat of the moment too. A consent without `ask_install` or
    `ask_model` (`ask`'s, eval's) says no to those."""

    def __init__(self, consent: Any, questions: Questions) -> None:
        self.consent = consent
        self.questions = questions

    def __call__(self, request: Any) -> Any:
        return self.questions.ask(self.consent, request)

    def ask_install(self, request: Any) -> bool:
        ask = getattr(self.consent, "ask_install", None)
        return ask is not None and bool(self.questions.ask(ask, request))

    def ask_model(self, move: Any) -> bool:
        ask = getattr(self.consent, "ask_model", None)
        return ask is not None and bool(self.questions.ask(ask, move))

    def ask_hook(self, question: Any) -> bool:
        """A hook to trust, or a call a hook wants the user to decide (hooks/)."""
        ask = getattr(self.consent, "ask_hook", None)
        return ask is not None and bool(self.questions.ask(ask, question))

    @contextmanager
    def install_progress(self, request: Any) -> Iterator[Callable[[str], None]]:
        """The consent's own view of an install (none on a fork's thread: `elsewhere`)."""
        progress = getattr(self.consent, "install_progress", None)
        if progress is None or self.questions.elsewhere():
            yield lambda line: None
            return
        with progress(request) as sink:
            yield sink
