"""What a turn emits, and the one interface everything that follows a chat implements.

The loop and its steps report each thing as it happens as one event value; every
consumer is a `Listener` (a callable taking an event) and takes the events it
cares about: the terminal views (ui/views.py) show text, cards and notices, the
chat recorder (recorder.py) saves messages, attachments and compactions,
eval's tally (evals/runner.py) counts files read and usage. A new consumer is one
more listener; a new kind of event is one more class here.

    Waiting        a request is out, nothing of its reply has arrived yet
    TextDelta      a piece of the reply's text
    TextEnded      the reply's text is complete: answer, narration, interrupted, failed
    ToolStarted    a tool call is about to run (the model's, or added for /name, @file)
    ToolFinished   it ran: its record (name, arguments, result)
    UsageReported  one request's token counts
    Notice         a warning or progress line for the user
    TurnFailed     the turn ended without an answer (the error is raised as well)
    MessageAdded   a complete message joined the transcript
    FilesAttached  workspace files went in with the messages just added
    Compacted      a summary replaced the older messages
    ForkStarted    a forked skill's conversation began (engine/fork.py)
    ForkStep       one event of that conversation
    ForkEnded      it ended: how, its requests, tool calls and tokens

Each event is a `NamedTuple`: immutable, matched by position and by name as a
dataclass is, and made at import with one small `eval`, where a frozen dataclass
compiles six methods (`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`,
`__delattr__`; about 0.3 ms a class at every start, on `ask`'s path to its first
request). One thing of a tuple would change them: equality, which compares fields
alone, so `TextDelta("answer") == TextEnded("answer")` and an event equals a plain
tuple. So every kind of event below gets an `__eq__` (and `__ne__`) that first asks
for the same kind: set once on each class at import, where a frozen dataclass would
compile it per class. Hashing stays the tuple's (equal events still hash alike).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

from skillchat.engine.events import Usage
from skillchat.safe_io.read import FileText
from skillchat.tools.base import ToolResult

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image

TextEnd = Literal["answer", "narration", "interrupted", "failed"]


class ToolRecord(NamedTuple):
    """One tool call and its result, for cards and `--json`."""

    name: str
    arguments: str  # the raw JSON text the model sent
    result: ToolResult
    synthetic: bool = False  # added by skillchat (`/name`, attachments), not the model
    call_id: str = ""  # the call's id in the transcript (`ask`'s stream-json pairs by it)


class Waiting(NamedTuple):
    """A request is out, nothing of its reply has arrived yet."""

    tools: bool  # the reply may call tools: its text may turn out to be narration


class TextDelta(NamedTuple):
    """A piece of the reply's text."""

    text: str


class TextEnded(NamedTuple):
    """The reply's text is complete: answer, narration, interrupted, failed."""

    how: TextEnd


class ToolStarted(NamedTuple):
    """A tool call is about to run (the model's, or added for /name, @file)."""

    name: str
    arguments: str
    call_id: str = ""  # the call's id, as its `ToolRecord` has it


class ToolFinished(NamedTuple):
    """A tool call ran: its record (name, arguments, result)."""

    record: ToolRecord


class UsageReported(NamedTuple):
    """One request's token counts."""

    usage: Usage


class Notice(NamedTuple):
    """A warning or progress line for the user."""

    message: str
    done: bool = False  # something the user asked for went well: not a warning


class TurnFailed(NamedTuple):
    """The turn ended without an answer (the error is raised as well)."""

    error: BaseException


class MessageAdded(NamedTuple):
    """A complete message joined the transcript."""

    message: dict[str, Any]
    interrupted: bool = False  # a reply cut by Ctrl-C or a failure, kept marked
    usage: Usage | None = None  # an assistant message's own request


class FilesAttached(NamedTuple):
    """Workspace files went in with the messages just added."""

    workspace: str  # the workspace's real path
    files: Sequence[FileText | Image]


class Compacted(NamedTuple):
    """A summary replaced the older messages."""

    messages: list[dict[str, Any]]  # the summary and re-attached skills
    kept: int  # the last `kept` messages of the chat stay after them
    info: dict[str, Any]  # what it was compacted from


class ForkStarted(NamedTuple):
    fork: int  # numbers the forks of the process
    skill: str
    model: str  # the model the fork's requests go to
    task: str


class ForkStep(NamedTuple):
    """What a forked skill's conversation did: `event` is that child chat's own."""

    fork: int
    skill: str
    model: str
    event: Event


class ForkEnded(NamedTuple):
    fork: int
    skill: str
    model: str
    task: str
    summary: dict[str, Any]  # engine/fork_run.py `ForkRun.summary`: outcome, counts, tokens
    messages: list[dict[str, Any]]  # its transcript (its system prompt apart)


Event = (
    Waiting
    | TextDelta
    | TextEnded
    | ToolStarted
    | ToolFinished
    | UsageReported
    | Notice
    | TurnFailed
    | MessageAdded
    | FilesAttached
    | Compacted
    | ForkStarted
    | ForkStep
    | ForkEnded
)
Listener = Callable[[Event], None]


def _same_event(event: tuple[Any, ...], other: object) -> bool:
    """An event equals only an event of its own kind with equal fields."""
    return type(event) is type(other) and tuple.__eq__(event, other)


def _other_event(event: tuple[Any, ...], other: object) -> bool:
    return not _same_event(event, other)


for _kind in get_args(Event):
    _kind.__eq__, _kind.__ne__ = _same_event, _other_event


class Emitter:
    """Hands each event to every listener, in the order they were added; a
    listener must return quickly (the reply streams through it)."""

    def __init__(self, listeners: Iterable[Listener] = ()) -> None:
        self.listeners: list[Listener] = list(listeners)

    def __call__(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)

    def notice(self, message: str, done: bool = False) -> None:
        self(Notice(message, done))


class ViewListener:
    """A listener for what the user sees, as five methods a view overrides (each a
    no-op here, so this class alone is the view that shows nothing)."""

    def __call__(self, event: Event) -> None:
        match event:
            case Waiting(tools):
                self.waiting(tools)
            case TextDelta(text):
                self.text(text)
            case TextEnded(how):
                self.end_text(how)
            case ToolFinished(record):
                self.tool(record)
            case Notice(message, done=True):
                self.done(message)
            case Notice(message):
                self.notice(message)
            case ForkStarted() | ForkEnded():
                self.fork(event)
            case ForkStep(fork, _, _, ToolStarted()):
                self.fork_tool_started(fork)
            case ForkStep(fork, _, _, ToolFinished(record)):
                self.fork_tool(fork, record)
            case ForkStep(fork, skill, _, Notice(message)):  # a fork's retry, cut reply...
                self.notice(f"{skill} #{fork}: {message}")
            case ForkStep(fork, _, _, UsageReported(usage)):
                self.fork_usage(fork, usage)
            case ForkStep(fork, _, _, Waiting()):
                self.fork_waiting(fork, True)
            case ForkStep(fork, _, _, TextDelta() | TextEnded()):
                self.fork_waiting(fork, False)

    def waiting(self, tools: bool) -> None:
        """A request is out and nothing of its reply has arrived yet."""

    def text(self, chunk: str) -> None:
        """A piece of the reply's text, as it arrives."""

    def end_text(self, how: TextEnd) -> None:
        """The reply's text is complete: the answer, narration before tool calls, or cut."""

    def tool(self, record: ToolRecord) -> None:
        """A tool call ran (or was added for `/name`)."""

    def notice(self, message: str) -> None:
        """A warning or progress line for the user (retries, a cut catalog)."""

    def done(self, message: str) -> None:
        """What a command the user ran did (`/compact`): said plainly, not as a warning."""

    def fork(self, event: ForkStarted | ForkEnded) -> None:
        """A forked skill's conversation started or ended (engine/fork.py)."""

    def fork_tool_started(self, fork: int) -> None:
        """A tool call of fork number `fork` is about to run (it may ask the user)."""

    def fork_tool(self, fork: int, record: ToolRecord) -> None:
        """A tool call of fork number `fork` ran."""

    def fork_usage(self, fork: int, usage: Usage) -> None:
        """One request of fork number `fork` reported its tokens."""

    def fork_waiting(self, fork: int, waiting: bool) -> None:
        """A fork's request is out (True), or its reply began or ended (False)."""
