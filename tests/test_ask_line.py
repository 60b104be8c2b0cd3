"""`ask`'s line read without Typer (cli/ask_line.py): the same values as Typer's for
a plain line, and Typer's to read (None) for anything else.

Typer's values come from Typer itself: a command made with the very declarations
of `ask` (its parameters' annotations and the session options), run by Typer on
the same line, hands back what it was called with. (No `from __future__ import
annotations`: the probe's annotations are Typer's objects, as `ask`'s are.)
"""

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer

from skillchat.backend_table import BACKEND_NAMES
from skillchat.cli import ask_cmd, root_cmd
from skillchat.cli.ask_line import MINIMA, OPTIONS, AskLine, read
from skillchat.cli.common import AllowInstallOpt, JsonOpt, SessionOptions, session_command

PromptArg = ask_cmd.PromptArg
AttachOpt = ask_cmd.AttachOpt


def test_the_table_is_the_options_typer_declares_for_ask() -> None:
    command = root_cmd._subcommand("ask")
    declared: dict[str, tuple[str, str]] = {}
    for param in command.params:
        if param.param_type_name == "argument":
            assert param.name == "prompt"
            continue
        kind = type(param.type).__name__
        if param.is_flag:
            value = "flag"
        elif kind == "TyperPath":
            value = "path" if param.type.dir_okay else "file"
        elif kind in ("FloatRange", "IntRange"):
            value = "float" if kind == "FloatRange" else "int"
            assert param.type.min == MINIMA[param.name]
        elif kind == "TyperChoice":
            value = "backend"
            assert tuple(param.type.choices) == tuple(BACKEND_NAMES)
        else:
            assert kind == "StringParamType", (param.name, kind)
            value = "str"
        if param.multiple:
            value = f"many {value}"
        for name in (*param.opts, *param.secondary_opts):
            declared[name] = (param.name, value)
    assert declared == OPTIONS


@session_command
def _probe(
    ctx: typer.Context,
    prompt: PromptArg = None,
    attach: AttachOpt = None,
    json_out: JsonOpt = False,
    allow_install: AllowInstallOpt = False,
    *,
    options: SessionOptions,
) -> AskLine:
    """`ask`'s parameters as Typer hands them over."""
    return AskLine(prompt, attach, json_out, allow_install, options)


def test_the_probe_takes_what_ask_takes() -> None:
    ours, theirs = inspect.signature(_probe), inspect.signature(ask_cmd.ask)
    assert list(ours.parameters.values()) == list(theirs.parameters.values())


def typer_reads(argv: list[str]) -> AskLine | None:
    """What Typer calls `ask` with for `argv`; None for a usage error or help."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(_probe)
    try:
        found = typer.main.get_command(app).main(
            argv, prog_name="ask", standalone_mode=False
        )  # fmt: skip
    except typer.TyperException:
        return None
    return found if isinstance(found, AskLine) else None  # --help returns 0


@pytest.fixture
def places(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file.toml").write_text("")
    return {"dir": str(tmp_path / "dir"), "file": str(tmp_path / "file.toml")}


def plain_lines(p: dict[str, str]) -> list[list[str]]:
    return [
        ["hi"],
        [],
        ["-"],
        ["--", "-starts with a dash"],
        ["-m", "openai/x", "--api-base", "http://127.0.0.1:9/v1", "what is 2+2?"],
        ["--skills-dir", p["dir"], "--skills-dir", p["dir"] + "/missing", "--json", "q"],
        ["-c", "--chat", "abc", "-w", p["dir"], "--no-tools", "q"],
        ["--reply-timeout", "2.5", "--max-tokens", "10", "--backend", BACKEND_NAMES[0], "q"],
        ["q", "--allow-run", "--allow-network", "--allow-write", "--mcp", "a", "--mcp", "b"],
        ["--gguf", "missing.gguf", "--chat-template", p["file"], "--config", p["file"], "q"],
        ["--attach", "a.txt", "-a", "b.txt", "--allow-install", "--allow-mcp", "q"],
        ["--no-mcp", "--local", "--no-workspace", "--workspace", "not/there", "q"],
        ["-m", "a", "-m", "b", "q", "--continue"],
        ["--max-tokens", "1", "--reply-timeout", "0.001", "q"],
    ]


def test_a_plain_line_is_read_as_typer_reads_it(places: dict[str, str]) -> None:
    for argv in plain_lines(places):
        expected = typer_reads(argv)
        assert expected is not None, argv
        assert read(argv) == expected, argv


def test_anything_else_is_left_to_typer(places: dict[str, str]) -> None:
    """Help, errors and the forms not read here: None, so Typer says what it says."""
    lines: list[list[str]] = [
        ["--help"],
        ["-h"],
        ["--bogus", "q"],
        ["--modle", "x", "q"],
        ["--max-tokens", "0", "q"],
        ["--max-tokens", "1.5", "q"],
        ["--reply-timeout", "0", "q"],
        ["--reply-timeout", "soon", "q"],
        ["--backend", "nope", "q"],
        ["--config", places["dir"], "q"],  # a directory where a file is asked for
        ["a", "b"],
        ["--model"],
        ["--model=x", "q"],  # Typer takes it: read there, not here
        ["-cw", places["dir"], "q"],
        ["--model", "-x", "q"],
    ]
    for argv in lines:
        assert read(argv) is None, argv
    refused: list[Any] = [typer_reads(argv) for argv in lines[:-3]]
    assert refused == [None] * len(refused)  # the errors are Typer's own
