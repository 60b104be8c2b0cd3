"""Output goes through consoles that are passed, never found: each run of the command
line makes one `Consoles` (cli/invocation.py) and hands it to what prints, the REPL's
slash commands included. A console of the module or the process (a cached function,
a module-level one) would outlive the run that made it, bound to that run's streams
and width, and print where no test and no caller can see."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_helpers import settings_for
from openai_server import ScriptedServer
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from skillchat.chats.store import ChatStore
from skillchat.sections import user_data_dir
from skillchat.skills.registry import Registry
from skillchat.ui.console import Consoles
from skillchat.ui.repl import Repl
from skillchat.ui.theme import theme

PACKAGE = Path(__file__).resolve().parents[1] / "skillchat"
MAKERS = {"Console", "Consoles", "_console"}  # what builds a console
CACHES = {"cache", "lru_cache", "cached_property"}
# The one place each is built: Rich consoles inside `Consoles`, a `Consoles` per run.
BUILT_IN = {
    "Console": "ui/console.py",
    "_console": "ui/console.py",
    "Consoles": "cli/invocation.py",
}


def _called(node: ast.AST) -> set[str]:
    """The names of what `node` calls (`Console(...)`, `rich.console.Console(...)`)."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")


def _lasting(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Consoles that would outlive a run: assigned at module or class level, or
    returned by a cached function."""
    bodies: list[list[ast.stmt]] = [tree.body]
    bodies += [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and _called(stmt) & MAKERS:
                yield stmt.lineno, "a console made at module or class level"
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        cached = {_decorator_name(d) for d in node.decorator_list} & CACHES
        returns = ast.unparse(node.returns) if node.returns else ""
        if cached and (_called(node) & MAKERS or "Console" in returns):
            yield node.lineno, f"a console kept by @{cached.pop()} on {node.name}()"


def test_no_console_outlives_the_run_that_made_it() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{where}:{line}: {what}" for line, what in _lasting(tree)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in BUILT_IN and where != BUILT_IN[name]:
                    found.append(f"{where}:{node.lineno}: {name}() outside {BUILT_IN[name]}")
    assert found == [], "\n".join(found)


def test_the_console_module_has_no_console_of_its_own() -> None:
    """No free `out()`, `err()` or `warn()` to reach for instead of the consoles
    passed: a warning is `consoles.warn`."""
    tree = ast.parse((PACKAGE / "ui" / "console.py").read_text(encoding="utf-8"))
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert functions & {"out", "err", "warn"} == set()


def test_the_check_sees_a_cached_console() -> None:
    """The check above would have caught the module's old `@cache def out()`."""
    old = (
        "from functools import cache\n"
        "@cache\n"
        "def out() -> Console:\n"
        "    return _console(stderr=False)\n"
        "ERR = Console(stderr=True)\n"
    )
    assert [line for line, _ in _lasting(ast.parse(old))] == [5, 3]


@pytest.fixture
def repl(server: ScriptedServer) -> Iterator[tuple[Repl, io.StringIO, io.StringIO]]:
    """A REPL built as `skillchat` builds it, in this process, with consoles of the
    test's own (stdout and stderr in memory) and prompt-toolkit on a pipe."""
    out, err = io.StringIO(), io.StringIO()
    consoles = Consoles(
        Console(file=out, theme=theme(), width=100), Console(file=err, theme=theme(), width=100)
    )
    registry = Registry(skills={}, directories=())
    with (
        create_pipe_input() as keys,
        create_app_session(input=keys, output=DummyOutput()),
        ChatStore.open(Path(os.environ["HOME"]) / "chats.db") as store,
    ):
        built = Repl(settings_for(server), registry, store, consoles=consoles)
        yield built, out, err
        built.session.close()


def test_slash_commands_print_on_the_consoles_the_repl_was_given(
    repl: tuple[Repl, io.StringIO, io.StringIO], capsys: pytest.CaptureFixture[str]
) -> None:
    session, out, err = repl
    trust = user_data_dir() / "trust.json"
    trust.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    trust.write_text("{", encoding="utf-8")  # unusable: /trust warns, and trusts nothing
    trust.chmod(0o600)
    for line in ("/help", "/model", "/trust", "/show 3"):
        assert session.handle(line) is False
    shown = out.getvalue()
    assert "/help" in shown and "this list" in shown  # /help
    assert "model: openai/test-model (backend: openai" in shown  # /model
    assert "every skill is trusted" in shown  # /trust
    assert "error: /show needs the number of a tool card" in shown  # the REPL's own line
    assert "warning: " in err.getvalue() and "trust.json" in err.getvalue()
    assert capsys.readouterr() == ("", "")  # nothing on the process's own streams


# Run with stderr a pipe: the first check must not import Rich; then every variable
# Rich reads is set in turn, with stderr a pipe and a pseudo-terminal, and the answer
# compared with Rich's own console.
_TERMINAL_CHECK = """
import itertools, os, pty, sys
from skillchat.ui.console import Consoles
print(Consoles().err_is_terminal(), "rich" in sys.modules)
from rich.console import Console
_, tty = pty.openpty()
for stream, force, compatible in itertools.product(
    [sys.stderr, open(tty, "w")], [None, "", "1"], [None, "0", "1"]
):
    sys.stderr = stream
    for name, value in (("FORCE_COLOR", force), ("TTY_COMPATIBLE", compatible)):
        os.environ.pop(name, None) if value is None else os.environ.update({name: value})
    ours, rich = Consoles().err_is_terminal(), Console(stderr=True).is_terminal
    print(stream.isatty(), force, compatible, ours, rich)
"""


def test_a_pipe_is_no_terminal_without_making_a_console() -> None:
    """`ask ... 2> log` learns that its stderr is no terminal (no waiting line) without
    importing Rich; where stderr might be one, Rich's console decides, as before."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", _TERMINAL_CHECK], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    first, *cases = done.stdout.splitlines()
    assert first == "False False"
    assert len(cases) == 18
    differ = [case for case in cases if case.split()[-1] != case.split()[-2]]
    assert differ == [], differ
