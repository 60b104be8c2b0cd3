"""A server's question to the user in the middle of a call (`elicitation/create`).

    form = read_form("docs", params)        # McpError: a schema the form cannot show
    value = checked(field, "42")            # McpError: not of the field's type
    answer = from_defaults(form)            # `ask --allow-elicit`: defaults, or decline

A form is the request's flat schema read into `Field`s: a string (optionally one of
an enum, or `oneOf` consts with titles), a number, an integer, a boolean, or an
array of strings from an enum (several choices). Anything else (nesting, a `$ref`,
a type the spec does not allow) is a malformed schema: the question is declined
in one line and the call goes on, the server decides what a decline means.

Every text of the server's (its message, a field's title and description, an enum's
titles, a URL) is untrusted: it is read here through `neutral` (no control character,
no escape sequence, cut), so nothing that reaches a card or a line can move the
cursor or retitle the terminal. A URL-mode request is shown, never opened.
"""

from __future__ import annotations

import asyncio
import queue
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Literal

from skillchat.errors import McpError
from skillchat.mcp.catalog import neutral
from skillchat.sections import McpSettings

MAX_FIELDS = 50  # a form longer than this is not one a person fills
MAX_MESSAGE = 2_000
MAX_TITLE = 200
MAX_CHOICES = 100
KINDS = ("string", "number", "integer", "boolean", "array")


@dataclass(frozen=True)
class Field:
    """One requested value: its name, type, text (cleaned) and constraints."""

    name: str  # as the server sent it: the answer's key (shown cleaned)
    kind: str  # one of KINDS ("array": several of `choices`)
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None  # None: no default
    choices: tuple[str, ...] = ()  # enum values, if any
    labels: tuple[str, ...] = ()  # their titles, as many as `choices`, or none
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Form:
    """What a server asks: form mode (`fields`) or URL mode (`url`)."""

    server: str
    message: str
    fields: tuple[Field, ...] = ()
    url: str | None = None
    problem: str = ""  # a malformed request: said in one line, and declined


@dataclass(frozen=True)
class ElicitAnswer:
    """The user's answer: accept (with `content` in form mode), decline or cancel."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    why: str = ""  # said to the user when the question was never shown


Elicit = Callable[[Form], ElicitAnswer]  # the front end's: a card, or `flag_elicit`


def form_of(server: str, params: Any) -> Form:
    """`read_form`, or a form carrying why it cannot be one (`problem`)."""
    try:
        return read_form(server, params)
    except McpError as exc:
        return Form(server, "", problem=str(exc))


def read_form(server: str, params: Any) -> Form:
    """The request of `server` as a form, its texts cleaned; McpError (what is wrong
    with it) for a schema it cannot be."""
    message = neutral(str(getattr(params, "message", "") or ""), MAX_MESSAGE)
    if getattr(params, "mode", "form") == "url":
        return Form(server, message, url=neutral(str(getattr(params, "url", "")), MAX_MESSAGE))
    schema = getattr(params, "requested_schema", None)
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise McpError("its schema is not an object")
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise McpError("its schema has no valid properties")
    if len(properties) > MAX_FIELDS:
        raise McpError(f"it has {len(properties)} fields (at most {MAX_FIELDS})")
    fields = tuple(_field(str(name), spec, name in required)
                   for name, spec in properties.items())  # fmt: skip
    return Form(server, message, fields)


def _field(name: str, spec: Any, required: bool) -> Field:
    where = f"its field '{neutral(name, MAX_TITLE)}'"
    if not isinstance(spec, dict) or spec.get("type") not in KINDS:
        raise McpError(f"{where} is not a string, number, integer, boolean or list of choices")
    kind = spec["type"]
    choices, labels = _choices(spec if kind != "array" else spec.get("items"), where)
    if kind == "array" and not choices:
        raise McpError(f"{where} is a list without choices")
    if choices and kind not in ("string", "array"):
        raise McpError(f"{where} has choices but is not a string")
    bounds = [spec.get("minimum"), spec.get("maximum")]
    if any(b is not None and (isinstance(b, bool) or not isinstance(b, int | float))
           for b in bounds):  # fmt: skip
        raise McpError(f"{where} has a bound that is not a number")
    made = Field(
        name=name,
        kind=kind,
        title=neutral(str(spec.get("title", "")), MAX_TITLE),
        description=neutral(str(spec.get("description", "")), MAX_TITLE * 2),
        required=required,
        choices=choices,
        labels=labels,
        minimum=bounds[0],
        maximum=bounds[1],
    )
    default = spec.get("default")
    if default is None:
        return made
    try:
        return Field(**{**made.__dict__, "default": checked(made, default)})
    except McpError:
        raise McpError(f"{where} has a default that does not fit it") from None


def _choices(spec: Any, where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An enum's values and their titles (`enum` + `enumNames`, or `oneOf`/`anyOf`
    consts with titles)."""
    if not isinstance(spec, dict):
        return (), ()
    listed = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(listed, list):
        pairs = [(o.get("const"), o.get("title", o.get("const"))) for o in listed
                 if isinstance(o, dict)]  # fmt: skip
        values, titles = [p[0] for p in pairs], [p[1] for p in pairs]
    else:
        values = spec.get("enum") or []
        titles = spec.get("enumNames") or []
    if not isinstance(values, list) or not isinstance(titles, list):
        raise McpError(f"{where} has choices that are not a list")
    if len(values) > MAX_CHOICES or not all(isinstance(v, str) for v in values):
        raise McpError(f"{where} has choices that are not strings")
    labels = tuple(neutral(str(t), MAX_TITLE) for t in titles)
    return tuple(values), labels if len(labels) == len(values) else ()


def checked(item: Field, value: Any) -> Any:
    """`value` (typed by the user as a string, or a default) as the field's type;
    McpError saying why it does not fit."""
    if item.kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("y", "yes", "true", "1"):
            return True
        if isinstance(value, str) and value.strip().lower() in ("n", "no", "false", "0"):
            return False
        if isinstance(value, bool):
            return value
        raise McpError("yes or no")
    if item.kind == "array":
        parts = value if isinstance(value, list) else [p.strip() for p in str(value).split(",")]
        picked = [p for p in parts if p != ""]
        if any(p not in item.choices for p in picked):
            raise McpError("choices among: " + ", ".join(item.choices))
        return picked
    if item.kind in ("number", "integer"):
        number = _number(item.kind, value)
        if item.minimum is not None and number < item.minimum:
            raise McpError(f"at least {item.minimum:g}")
        if item.maximum is not None and number > item.maximum:
            raise McpError(f"at most {item.maximum:g}")
        return number
    if not isinstance(value, str):
        raise McpError("text")
    if item.choices and value not in item.choices:
        raise McpError("one of: " + ", ".join(item.choices))
    return value


def _number(kind: str, value: Any) -> int | float:
    if isinstance(value, bool):
        raise McpError("a whole number" if kind == "integer" else "a number")
    try:
        number = float(value) if not isinstance(value, int | float) else value
    except ValueError:
        raise McpError("a whole number" if kind == "integer" else "a number") from None
    if kind == "integer":
        if number != int(number):
            raise McpError("a whole number")
        return int(number)
    return number


def from_defaults(form: Form) -> ElicitAnswer:
    """`ask --allow-elicit`: accepted with the schema's defaults (the fields without
    one left out), or declined when a required field has none or the server asks
    for a URL to be opened (nobody is there to open it)."""
    if form.url is not None:
        return ElicitAnswer("decline", why="a URL to open: nobody is there to open it")
    missing = [f.name for f in form.fields if f.required and f.default is None]
    if missing:
        names = ", ".join(neutral(name, MAX_TITLE) for name in missing)
        return ElicitAnswer("decline", why=f"no default for the required {names}")
    content = {f.name: f.default for f in form.fields if f.default is not None}
    return ElicitAnswer("accept", content, why="answered with the schema's defaults")


def flag_elicit(mcp: McpSettings, say: Callable[[str], None]) -> Elicit:
    """`ask` and `eval`: declined, unless `--allow-elicit` (then the defaults only;
    nothing typed is ever read). Each question is one line on `say`."""

    def elicit(form: Form) -> ElicitAnswer:
        if form.problem:
            answer = ElicitAnswer("decline", why=form.problem)
        elif not mcp.elicit:
            answer = ElicitAnswer("decline", why="answering needs --allow-elicit")
        else:
            answer = from_defaults(form)
        done = {"accept": "accepted", "decline": "declined"}[answer.action]
        say(f"MCP server '{form.server}' asked a question: {done} ({answer.why})")
        return answer

    return elicit


class Relay:
    """A server's questions, asked on the thread of the call they came in.

    The SDK's callback runs on the hub's event loop, where nothing may wait for a
    person; the call waits on its own thread (the chat's, or a fork's), so the
    question is handed there (`callback` puts it in the inbox of the latest call
    waiting), asked through `elicit` (the session's: the chat's one consent owner),
    and its answer handed back. A question when no call waits is declined."""

    def __init__(self, elicit: Elicit | None) -> None:
        self.elicit = elicit
        self._calls: list[queue.Queue[Any]] = []  # the calls waiting, latest last

    def callback(self, server: str) -> Callable[[Any, Any], Awaitable[Any]]:
        """The SDK's `elicitation_callback` for `server`."""

        async def elicited(context: Any, params: Any) -> Any:
            from mcp_types import ElicitResult

            if not self._calls:
                return ElicitResult(action="decline")
            answered: Future[ElicitAnswer] = Future()
            self._calls[-1].put((form_of(server, params), answered))
            answer = await asyncio.wrap_future(answered)
            return ElicitResult(action=answer.action, content=answer.content)

        return elicited

    def wait(self, submit: Callable[[], Future[Any]], timeout: float) -> Any:
        """The result of the call `submit` starts, asking meanwhile the questions the
        servers ask on this thread (the time one is on screen counts in the call's).
        The call is waited for before it starts: a server may ask at once, before
        this thread would have come to wait. A call still running at `timeout` is
        cancelled (FutureTimeout)."""
        inbox: queue.Queue[Any] = queue.Queue()
        self._calls.append(inbox)
        deadline = time.monotonic() + timeout
        future: Future[Any] | None = None
        try:
            future = submit()
            future.add_done_callback(lambda done: inbox.put(None))
            while (asked := inbox.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
                form, answered = asked
                try:
                    answer = self.elicit(form) if self.elicit else ElicitAnswer("decline")
                except BaseException:  # Ctrl-C at the question: the server hears "cancel"
                    answered.set_result(ElicitAnswer("cancel"))
                    raise
                answered.set_result(answer)
        except queue.Empty:
            if future is not None:
                future.cancel()
            raise FutureTimeout from None
        finally:
            self._calls.remove(inbox)
        return future.result(0)
