"""The exception trees (the docstring's drawing is the real one), user-facing
conditions never shown as "internal error", and a skill's cut file list saying so.
Run as a user runs skillchat (subprocesses)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import pytest
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply

import skillchat.errors as errors_module
from skillchat.errors import InternalSignal, SkillchatError

PACKAGE = Path(__file__).resolve().parents[1] / "skillchat"
MANY = 620  # more files than get_skill lists


# Raised inside httpx's client, by its redirect hook, and seen by skillchat only as the
# openai SDK's or LiteLLM's connection error: it must be an httpx error to travel
# through them, and errors.py must not import httpx (every command imports errors.py).
TRANSPORT_SIGNALS = {"engine/backends/origin.py: CrossOriginRedirect"}


def test_every_exception_class_lives_in_errors_and_under_the_base() -> None:
    """An exception class outside errors.py must still be in its tree (one of its
    bases is an errors.py class) and drawn there: a library's own exception type can
    require it to live beside the code that uses the library."""
    classes = dict(inspect.getmembers(errors_module, inspect.isclass))
    outside: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and (
                f"{path.relative_to(PACKAGE)}: {node.name}" not in TRANSPORT_SIGNALS
            ):
                bases = [ast.unparse(b) for b in node.bases]
                in_tree = any(b in classes for b in bases)
                drawn = node.name in drawn_tree(errors_module.__doc__ or "")
                if any(b.endswith(("Error", "Exception", "Limit")) for b in bases) and not (
                    in_tree and drawn
                ):
                    outside.append(f"{path.relative_to(PACKAGE)}: {node.name}")
    assert not outside, f"exception classes outside skillchat/errors.py: {outside}"
    assert all(issubclass(c, (SkillchatError, InternalSignal)) for c in classes.values())
    assert not issubclass(InternalSignal, SkillchatError)


def drawn_tree(doc: str) -> dict[str, str]:
    """{class: parent} from the tree drawn in a docstring: a name's parent is the
    nearest name above it drawn further left."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        found = re.match(r"^( {4}(?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)(?: |$)", line)
        if not found:
            continue
        column = len(found.group(1)) + (4 if "──" in line[: found.start(2)] else 0)
        while stack and stack[-1][0] >= column:
            stack.pop()
        if stack:
            parents[found.group(2)] = stack[-1][1]
        stack.append((column, found.group(2)))
    return parents


def test_the_tree_in_the_docstring_is_the_real_one() -> None:
    from skillchat.engine.backends.origin import CrossOriginRedirect

    classes = dict(inspect.getmembers(errors_module, inspect.isclass))
    real = {name: cls.__bases__[0].__name__ for name, cls in classes.items()}
    real["CrossOriginRedirect"] = InternalSignal.__name__
    assert issubclass(CrossOriginRedirect, InternalSignal)
    assert drawn_tree(errors_module.__doc__ or "") == real


@pytest.fixture()
def small_limit(tmp_path: Path) -> tuple[Path, Path]:
    skills = tmp_path / "skills"
    skill_folder(skills, "calc", "name: calc\ndescription: Adds numbers.\n", "Body $ARGUMENTS\n")
    config = tmp_path / "config.toml"
    config.write_text("[skills]\nmax_skill_md_bytes = 20\n")
    return skills, config


@pytest.mark.parametrize("json_out", [False, True])
def test_show_with_a_limit_inside_the_frontmatter(small_limit, json_out: bool) -> None:
    skills, config = small_limit
    extra = ["--json"] if json_out else []
    done = skillchat(
        "skills", "show", "calc", "--skills-dir", str(skills), "--config", str(config), *extra
    )
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    if json_out:
        doc = json.loads(done.stdout)
        assert doc["frontmatter"]["description"] == "Adds numbers." and doc["truncated"] is True
    else:
        assert "description: Adds numbers." in done.stdout
        assert "SKILL.md was cut at max_skill_md_bytes" in done.stderr


def test_ask_invoking_a_skill_with_a_limit_inside_the_frontmatter(
    server: ScriptedServer, small_limit
) -> None:
    skills, config = small_limit
    server.script(reply("ok"))
    done = skillchat("ask", *session_options(server, skills), "--config", str(config), "/calc 2+2")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n" and "internal error" not in done.stderr


@pytest.fixture()
def crowded(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    root = skill_folder(skills, "crowd", "name: crowd\ndescription: Many files.\n")
    (root / "node_modules").mkdir()
    for i in range(MANY):
        (root / "node_modules" / f"f{i:04}.js").write_text("x")
    return skills


def test_get_skill_says_its_file_list_was_cut(server: ScriptedServer, crowded: Path) -> None:
    server.script(reply(calls=[call("get_skill", {"skill_name": "crowd"})]), reply("done"))
    done = skillchat("ask", *session_options(server, crowded), "--json", "go")
    assert done.returncode == 0, done.stderr
    [invoked] = json.loads(done.stdout)["tool_calls"]
    result = json.loads(invoked["result"])
    assert {"skill_name", "documentation", "frontmatter", "files", "truncated"} <= set(result)
    assert len(result["files"]) == 500
    notice = result["files_notice"]
    assert f"first 500 of {MANY + 1} files" in notice
    server.script(reply(calls=[call("get_skill", {"skill_name": "crowd"})]), reply("done"))
    card = skillchat("ask", *session_options(server, crowded), "go")  # the card, on stderr
    assert f"first 500 of {MANY + 1} files" in " ".join(card.stderr.split())


def test_show_says_its_file_list_was_cut(crowded: Path) -> None:
    done = skillchat("skills", "show", "crowd", "--skills-dir", str(crowded))
    assert done.returncode == 0, done.stderr
    assert f"first 500 of {MANY + 1} files" in done.stderr
    doc = json.loads(
        skillchat("skills", "show", "crowd", "--json", "--skills-dir", str(crowded)).stdout
    )
    assert len(doc["files"]) == 500 and doc["files_total"] == MANY + 1
