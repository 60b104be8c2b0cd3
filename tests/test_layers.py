"""The layers of skillchat, lowest first; a module never imports a higher layer.

    errors → safe_io → mounts → config → chats → skills → workspace → tools → prompt
    → engine → sandbox → session → evals → ui → cli → __main__

Each sits just above what it needs: the safe reads (`safe_io`: the descriptor walk
and the path rules) need only `errors`, so skill discovery opens SKILL.md through
them; the sandbox's mount points (`mounts`) are names the skills' `allowed-tools`
rules are judged against, so they sit below `skills`, not inside `sandbox`; the
saved chats (`chats`) are plain persistence, below every skill and tool: the store
is handed what to keep of a tool result instead of importing the tools.

`errors` may be imported by anyone (it is listed lowest). The package root
`skillchat/__init__.py` holds metadata (`__version__`) and the names of the public
API, and imports nothing of skillchat when it runs: Python runs it before any
submodule, so every module may read it. Its imports of the public names are for
type checkers only (under `TYPE_CHECKING`); at run time each is imported when it is
first read (docs/api.md). Every
import counts, wherever it is written: module level, inside a function, under
`TYPE_CHECKING`, because each one is a dependency a reader must follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skillchat"
LAYERS = (
    "errors",
    "redact",  # secrets masked in text: the screen's last gate, and what installs report
    "localfile",  # a path the user names, opened as a regular file (eval, store, --gguf)
    "safe_io",  # the descriptor walk and the rules of every read: needs only errors
    "mounts",  # where the sandbox shows folders: allowed-tools rules name them
    "mcp_config",  # the [mcp.NAME] tables, read by config
    "plugin_servers",  # the MCP servers installed plugins brought, read by config
    "config_file",  # the config file's keys and tables, read by config
    "backend_table",  # one row per model backend, without its SDK: config checks names
    "sections",  # the sections of Settings, each its layer's, and the folders they name
    "config",
    "keys",  # provider keys stored by `skillchat keys set`, put into the environment
    "target",  # where a chat's requests go (made by engine/resolve.py): read by chats too
    "hardlinks",  # which folders may hold hard-linked files (the bundled skills')
    "chats",  # plain persistence: handed the tools' keep policy, imports none of them
    "skills",  # reads SKILL.md and resources through safe_io
    "workspace",
    "hooks",  # hooks found, trusted and run on the host: the engine's step calls them
    "tools",
    "mcp",  # MCP servers' tools: a tool source for the toolbox, consent injected from ui
    "prompt",
    "engine",
    "sandbox",
    "recorder",  # saves a chat as the engine's events arrive: engine events into chats
    "session_settings",  # the settings a resumed chat goes on with, and its local model
    "session_mcp",  # a session's MCP servers: their tools, prompts and served skills
    "session",
    "evals",
    "ui",
    "cli",
    "__main__",
)


def module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int | None:
    """The layer of `skillchat.x.y` (from `x`), None for the package root."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module}: in no layer; add its top-level name to LAYERS")
    return LAYERS.index(parts[1])


def imported(path: Path, package: Path) -> list[tuple[int, str]]:
    """(line, module) of every skillchat module `path` imports, anywhere in it."""
    own = module_name(path, package)
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's own package upwards
                anchor = own.split(".")[: len(own.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:  # `from skillchat import session` names a module
                sub = f"{base}.{alias.name}"
                as_path = package.parent.joinpath(*sub.split("."))
                is_module = as_path.with_suffix(".py").is_file() or as_path.is_dir()
                found.append((node.lineno, sub if is_module else base))
    return sorted({(line, m) for line, m in found if m.split(".")[0] == package.name})


def type_checking_lines(path: Path) -> set[int]:
    """The lines of `path`'s top-level `if TYPE_CHECKING:` blocks."""
    lines: set[int] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def violations(package: Path) -> list[str]:
    """Every import of a higher layer, and any root import of skillchat that runs
    (one for type checkers only is the public API's), as a line."""
    bad = []
    for path in sorted(package.rglob("*.py")):
        own = module_name(path, package)
        own_layer = layer(own)
        typing_only = type_checking_lines(path) if own_layer is None else set()
        for line, module in imported(path, package):
            target = layer(module)
            where = f"{path.relative_to(package.parent)}:{line}"
            if own_layer is None:
                if line not in typing_only:
                    bad.append(f"{where}: the package root imports {module}")
            elif target is not None and target > own_layer:
                bad.append(
                    f"{where}: {own} ({LAYERS[own_layer]}) imports {module} ({LAYERS[target]})"
                )
    return bad


def test_no_module_imports_a_higher_layer() -> None:
    assert violations(PACKAGE) == []


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # A function-level import of the CLI from the UI (what the REPL once did).
        (
            {"ui/repl.py": "def f():\n    from skillchat.cli.ask_cmd import g\n"},
            "skillchat/ui/repl.py:2: skillchat.ui.repl (ui) imports skillchat.cli.ask_cmd (cli)",
        ),
        # `from package import module` and a relative import are followed too.
        (
            {"tools/x.py": "from skillchat import session\n"},
            "skillchat/tools/x.py:1: skillchat.tools.x (tools) imports skillchat.session (session)",
        ),
        # The store importing the tools (what it once did for their keep policy).
        (
            {"chats/store.py": "from ..tools import toolbox\n", "tools/toolbox.py": ""},
            "skillchat/chats/store.py:1: skillchat.chats.store (chats) imports "
            "skillchat.tools.toolbox (tools)",
        ),
        (
            {
                "config.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from skillchat.skills.model import Skill\n"
            },
            "skillchat/config.py:3: skillchat.config (config) imports skillchat.skills.model "
            "(skills)",
        ),
        ({"__init__.py": "from skillchat.errors import E\n"}, "the package root imports"),
        (  # inside a function it runs too (a root's public names are typing-only)
            {
                "__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from skillchat.errors import E\ndef f():\n    import skillchat.session\n"
            },
            "skillchat/__init__.py:5: the package root imports skillchat.session",
        ),
    ],
)
def test_a_higher_import_is_caught(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    package = write(
        tmp_path / "skillchat",
        {
            "__init__.py": "",
            "session.py": "",
            "chats/store.py": "",
            "cli/ask_cmd.py": "",
            "skills/model.py": "",
            **files,
        },
    )
    found = violations(package)
    assert len(found) == 1 and expected in found[0], found


def test_a_lower_import_passes(tmp_path: Path) -> None:
    package = write(
        tmp_path / "skillchat",
        {
            "__init__.py": "",
            "errors.py": "",
            "cli/app.py": "import skillchat.errors\n"
            "from skillchat import __version__\nfrom skillchat.session import f\n",
            "session.py": "def f():\n    from skillchat.engine import loop\n",
            "engine/loop.py": "",
        },
    )
    assert violations(package) == []
