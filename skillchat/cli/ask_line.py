"""`skillchat ask ...` read without Typer, when the line is plain.

Importing Typer (and the click it vendors), building the root and `ask` commands
and parsing cost each start of `ask` some 18 ms of CPU and 92 M instructions before
its first request (docs/performance.md). So a line made only of `ask`'s own options,
each well formed, is read here into the values Typer would give; for anything else
(`--help`, an unknown or misspelt option, `--opt=value`, bundled short options, a
value Typer would refuse, a second argument) `read` returns None and Typer reads the
line as before, with its help, its errors and its exit codes.

The table of options is made from the declarations themselves (`SessionOptions`'
fields and `OWN`, each an `Opt`, cli/opts.py): an option added there is read here
too. tests/test_ask_line.py checks the table against the options Typer declares for
`ask`, and the values read here against Typer's for a corpus of lines.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, get_args, get_origin

from skillchat.cli.opts import JsonFlag, Opt, opt_of
from skillchat.cli.session_options import HINTS, AllowInstallOpt, SessionOptions
from skillchat.errors import UsageError

AttachOpt = Annotated[
    list[str] | None,
    Opt(
        "--attach",
        "-a",
        metavar="PATH",
        help="Attach a workspace file to the question (relative to the workspace, or "
        "absolute inside it); repeatable.",
    ),
]
OutputFormatOpt = Annotated[
    str | None,
    Opt(
        "--output-format",
        metavar="FORMAT",
        choices=("text", "json", "stream-json"),
        help="text (default); json: one object at the end (as --json); stream-json: one "
        "JSON event per line as the turn happens (docs/stream-json.md).",
    ),
]
# `ask`'s own options (not the session's), as cli/ask_cmd.py's `ask` declares them.
OWN: dict[str, Any] = {
    "attach": AttachOpt,
    "json_out": JsonFlag,
    "allow_install": AllowInstallOpt,
    "output_format": OutputFormatOpt,
}


@dataclass(frozen=True)
class Kind:
    """How an option's value is read: `type` (bool for a flag, str, int, float,
    Path), whether it repeats (a list), the least number it takes, the only values
    it takes, and whether a path may name a directory."""

    type: type
    many: bool
    least: float | None
    choices: tuple[str, ...] | None
    dir_okay: bool


def _kind(hint: Any, declared: Opt) -> Kind:
    """The `Kind` of an option declared as `hint`: `T`, `T | None`, `list[T] | None`."""
    base = get_args(hint)[0]
    if isinstance(base, UnionType):
        base = next(arg for arg in get_args(base) if arg is not type(None))
    many = get_origin(base) is list
    return Kind(
        type=get_args(base)[0] if many else base,
        many=many,
        least=declared.given.get("min"),
        choices=declared.choices,
        dir_okay=declared.given.get("dir_okay", True),
    )


def _table() -> dict[str, tuple[str, Kind]]:
    """Each name an option of `ask` goes by: its field and its `Kind`."""
    table: dict[str, tuple[str, Kind]] = {}
    for field, hint in {**HINTS, **OWN}.items():
        declared = opt_of(hint)
        assert declared is not None, field  # every field is an option
        for name in declared.names:
            table[name] = (field, _kind(hint, declared))
    return table


OPTIONS = _table()


@dataclass(frozen=True)
class AskLine:
    """`ask`'s arguments, as its Typer command receives them."""

    prompt: str | None
    attach: list[str] | None
    json_out: bool
    allow_install: bool
    options: SessionOptions
    output_format: str | None = None  # --output-format; --json is "json"

    def format(self) -> str:
        """text, json or stream-json: `--output-format`, with `--json` its alias."""
        if self.json_out and self.output_format not in (None, "json"):
            raise UsageError(f"--json and --output-format {self.output_format} exclude each other")
        return "json" if self.json_out else self.output_format or "text"


# What a value that Typer must read (and may refuse) is read as here.
TYPERS = object()


def _path(value: str, *, dir_okay: bool) -> object:
    """A path option's value as Typer converts it: checked only when it exists
    (readable, a directory only where one is allowed)."""
    try:
        st = os.stat(value)
    except OSError:
        return Path(value)
    if (not dir_okay and stat.S_ISDIR(st.st_mode)) or not os.access(value, os.R_OK):
        return TYPERS
    return Path(value)


def _value(kind: Kind, value: str) -> object:
    """An option's value, converted as Typer would; TYPERS where Typer decides."""
    if value.startswith("-") and value != "-":
        return TYPERS  # an option's name where its value should be
    if kind.type is str:
        return value if kind.choices is None or value in kind.choices else TYPERS
    if kind.type is Path:
        return _path(value, dir_okay=kind.dir_okay)
    try:
        number: float = float(value) if kind.type is float else int(value)
    except ValueError:
        return TYPERS
    if kind.least is None or number >= kind.least or number != number:  # NaN passes
        return number
    return TYPERS


def read(argv: list[str]) -> AskLine | None:
    """`ask`'s arguments (the words after `ask`), or None when Typer must read them."""
    given: dict[str, Any] = {}
    prompt: str | None = None
    words = iter(argv)
    dashes = False
    for word in words:
        if not dashes and word == "--":
            dashes = True
        elif dashes or not word.startswith("-") or word == "-":
            if prompt is not None:
                return None  # a second argument: Typer's error
            prompt = word
        elif word not in OPTIONS:
            return None  # --help, a typo, --opt=value, -cw...
        elif (kind := OPTIONS[word][1]).type is bool:
            given[OPTIONS[word][0]] = True
        else:
            field, raw = OPTIONS[word][0], next(words, None)
            value = TYPERS if raw is None else _value(kind, raw)
            if value is TYPERS:
                return None  # no value, or one Typer reads (and may refuse)
            if kind.many:
                given.setdefault(field, []).append(value)
            else:
                given[field] = value
    own = {name: given.pop(name, None) for name in OWN}
    return AskLine(
        prompt=prompt,
        attach=own["attach"],
        json_out=bool(own["json_out"]),
        allow_install=bool(own["allow_install"]),
        options=SessionOptions(**given),
        output_format=own["output_format"],
    )
