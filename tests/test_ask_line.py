"""`ask`'s line read without Typer (cli/ask_line.py): the same values as Typer's for
a plain line, and Typer's to read (None) for anything else.

Typer's values come from Typer itself: a command made with the very declarations
of `ask` (its parameters' annotations and the session options), run by Typer on
the same line, hands back what it was called with. (No `from __future__ import
annotations`: the probe's annotations are objects, as `ask`'s are.)
"""

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer

from skillchat.backend_table import BACKEND_NAMES
from skillchat.cli import ask_cmd
from skillchat.cli.ask_line import OPTIONS, AskLine, AttachOpt, OutputFormatOpt, read
from skillchat.cli.opts import JsonFlag
from skillchat.cli.session_options import AllowInstallOpt, SessionOptions, session_command

PromptArg = ask_cmd.PromptArg


def _described(param: Any) -> tuple[object, ...]:
    """An option of Typer's `ask` as (field, type, repeats, least, choices, dir_okay)."""
    kind = type(param.type).__name__
    least = getattr(param.type, "min", None)
    choices = tuple(param.type.choices) if kind == "TyperChoice" else None
    dir_okay = param.type.dir_okay if kind == "TyperPath" else True
    typed = {
        "FloatRange": float,
        "IntRange": int,
        "TyperPath": Path,
        "TyperChoice": str,
        "StringParamType": str,
    }
    value = bool if param.is_flag else typed[kind]
    return (param.name, value, param.multiple, least, choices, dir_okay)


def test_the_table_is_the_options_typer_declares_for_ask() -> None:
    """Every name Typer's `ask` takes, read here as Typer reads it; and nothing else."""
    app = typer.Typer(add_completion=False)
    app.command()(ask_cmd.ask)
    command = typer.main.get_command(app)
    declared: dict[str, tuple[object, ...]] = {}
    for param in command.params:
        if param.param_type_name == "argument":
            assert param.name == "prompt"
            continue
        for name in (*param.opts, *param.secondary_opts):
            declared[name] = _described(param)
    ours = {
        name: (field, k.type, k.many, k.least, k.choices, k.dir_okay)
        for name, (field, k) in OPTIONS.items()
    }
    assert ours == declared
    assert "--thinking-budget" in ours and ours["--backend"][4] == tuple(BACKEND_NAMES)


@session_command()
def _probe(
    ctx: typer.Context,
    prompt: PromptArg = None,
    attach: AttachOpt = None,
    json_out: JsonFlag = False,
    allow_install: AllowInstallOpt = False,
    output_format: OutputFormatOpt = None,
    *,
    options: SessionOptions,
) -> AskLine:
    """`ask`'s parameters as Typer hands them over."""
    return AskLine(prompt, attach, json_out, allow_install, options, output_format)


def test_the_probe_takes_what_ask_takes() -> None:
    """As declared (the `Opt`s, before `session_command` makes them Typer's)."""
    ours = inspect.signature(_probe.__wrapped__)  # type: ignore[attr-defined]
    theirs = inspect.signature(ask_cmd.ask.__wrapped__)  # type: ignore[attr-defined]
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
        ["--thinking", "--thinking-budget", "1024", "q"],
        ["--output-format", "stream-json", "q"],
        ["--output-format", "json", "--json", "q"],
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
        ["--output-format", "jsonl", "q"],
        ["--thinking-budget", "1023", "q"],
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
