"""`skillchat ask ...` read without Typer, when the line is plain.

Importing Typer (and the click it vendors), building the root and `ask` commands
and parsing the line cost `ask` 18 ms of CPU before its first request (158 vs 176
ms, medians of 12 runs at load 3-7; 92 M of 792 M instructions): the largest
single cost of the command line on the request's way out. So a line made only of
`ask`'s own options, each well formed, is read here into the values Typer would
give; for anything else (`--help`, an unknown or misspelt option, `--opt=value`,
bundled short options, a value Typer would refuse, a second argument) `read`
returns None and Typer reads the line as before, with its help, its errors and
its exit codes. tests/test_ask_line.py checks `OPTIONS` against the options Typer
declares for `ask`, and the values read here against Typer's for a corpus of lines.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from skillchat.backend_table import BACKEND_NAMES
from skillchat.cli.session_open import SessionOptions

# Each option of `ask`: its field (SessionOptions', or `ask`'s own: attach,
# json_out, allow_install) and the kind of its value. "flag" takes none; "file" is
# a path that may not name a directory; "many" options are repeatable (lists).
OPTIONS: dict[str, tuple[str, str]] = {
    "--model": ("model", "str"),
    "-m": ("model", "str"),
    "--api-base": ("api_base", "str"),
    "--backend": ("backend", "backend"),
    "--no-tools": ("no_tools", "flag"),
    "--continue": ("last", "flag"),
    "-c": ("last", "flag"),
    "--chat": ("chat_id", "str"),
    "--skills-dir": ("skills_dir", "many path"),
    "--workspace": ("workspace", "path"),
    "-w": ("workspace", "path"),
    "--no-workspace": ("no_workspace", "flag"),
    "--reply-timeout": ("reply_timeout", "float"),
    "--max-tokens": ("max_tokens", "int"),
    "--gguf": ("gguf", "file"),
    "--local": ("local", "flag"),
    "--chat-template": ("chat_template", "file"),
    "--config": ("config", "file"),
    "--allow-run": ("allow_run", "flag"),
    "--allow-network": ("allow_network", "flag"),
    "--allow-write": ("allow_write", "flag"),
    "--mcp": ("mcp", "many str"),
    "--no-mcp": ("no_mcp", "flag"),
    "--allow-mcp": ("allow_mcp", "flag"),
    "--attach": ("attach", "many str"),
    "-a": ("attach", "many str"),
    "--json": ("json_out", "flag"),
    "--allow-install": ("allow_install", "flag"),
}
# The least value each number option takes (Typer's `min`).
MINIMA = {"reply_timeout": 0.001, "max_tokens": 1}
OWN = ("attach", "json_out", "allow_install")  # `ask`'s, not the session's


@dataclass(frozen=True)
class AskLine:
    """`ask`'s arguments, as its Typer command receives them."""

    prompt: str | None
    attach: list[str] | None
    json_out: bool
    allow_install: bool
    options: SessionOptions


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


def _value(field: str, kind: str, value: str) -> object:
    """An option's value, converted as Typer would; TYPERS where Typer decides."""
    if value.startswith("-") and value != "-":
        return TYPERS  # an option's name where its value should be
    base = kind.removeprefix("many ")
    if base == "str":
        return value
    if base in ("path", "file"):
        return _path(value, dir_okay=base == "path")
    if base == "backend":
        return value if value in BACKEND_NAMES else TYPERS
    try:
        number: float = float(value) if base == "float" else int(value)
    except ValueError:
        return TYPERS
    return number if number >= MINIMA[field] or number != number else TYPERS  # NaN passes


def read(argv: list[str]) -> AskLine | None:
    """`ask`'s arguments (the words after `ask`), or None when Typer must read them."""
    given: dict[str, object] = {}
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
        elif (kind := OPTIONS[word][1]) == "flag":
            given[OPTIONS[word][0]] = True
        else:
            field, raw = OPTIONS[word][0], next(words, None)
            value = TYPERS if raw is None else _value(field, kind, raw)
            if value is TYPERS:
                return None  # no value, or one Typer reads (and may refuse)
            if kind.startswith("many "):
                listed = given.setdefault(field, [])
                assert isinstance(listed, list)
                listed.append(value)
            else:
                given[field] = value
    own = {name: given.pop(name) for name in OWN if name in given}
    attach = own.get("attach")
    return AskLine(
        prompt=prompt,
        attach=attach if isinstance(attach, list) else None,
        json_out=bool(own.get("json_out", False)),
        allow_install=bool(own.get("allow_install", False)),
        options=SessionOptions(**given),  # type: ignore[arg-type]  # values as typed above
    )
