"""Whole-project checks: lint and format stay clean, and the fast commands stay fast
by never importing a model library (litellm costs seconds, openai a few hundred ms)
or the local model's (xllamacpp loads llama.cpp; huggingface_hub is the downloader)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from skillchat.cli.app import run
try:
    code = run(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
imported = {m.split('.')[0] for m, module in sys.modules.items() if module is not None}
heavy = sorted(imported & {'litellm', 'openai', 'httpx', 'xllamacpp', 'huggingface_hub'})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["skills", "list"],
        ["skills", "list", "--json"],
        ["skills", "show", "calculator"],
        ["skills", "validate", "{skills}"],
        ["skills", "cost"],
        ["skills", "stats"],
        ["config", "show"],
        ["config", "path"],
        ["models"],
    ],
)
def test_fast_commands_never_import_model_libraries(argv: list[str]) -> None:
    argv = [a.replace("{skills}", str(REPO / "skillchat" / "bundled_skills")) for a in argv]
    if argv[0] == "skills" and argv[1] != "validate":
        argv += ["--skills-dir", str(REPO / "skillchat" / "bundled_skills")]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    assert report["heavy"] == [], f"{argv} imported {report['heavy']}"


def _ruff() -> str:
    exe = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(exe).exists():
        pytest.skip("ruff is not installed")
    return exe


@pytest.mark.source
def test_ruff_lint_is_clean() -> None:
    done = subprocess.run(
        [_ruff(), "check", "skillchat", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.source
def test_ruff_format_is_clean() -> None:
    done = subprocess.run(
        [_ruff(), "format", "--check", "skillchat", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# mypy's cache, kept between runs in the venv the tests run in (not in a home, not in
# the tree), one per source tree: two trees sharing one cache (worktrees, a CI clone
# beside a developer's) had mypy report one tree's code as the other's. A cold check
# of skillchat/ costs about 20 s of CPU, a warm one about 1 s.
# (A venv the running user cannot write to gets the check without a cache.)
MYPY_CACHE = (
    Path(sys.prefix) / "skillchat-mypy-cache" / hashlib.sha256(str(REPO).encode()).hexdigest()[:16]
    if os.access(sys.prefix, os.W_OK)
    else Path(os.devnull)
)


@pytest.mark.source
def test_mypy_finds_no_type_error() -> None:
    """The settings are pyproject.toml's [tool.mypy] (strict, on skillchat/)."""
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed: CI installs the `test` extras")
        pytest.skip("mypy is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(MYPY_CACHE)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# A citation of a document that is not in the repository (the design notes and
# example files the project started from): a reader cannot follow it. Spelled in
# pieces so this file does not cite them itself.
CITATION = re.compile(r"\b" + "DES" + r"IGN\b|\b(?i:" + "se" + r"eds?)\b(?![(=])")


def test_no_text_cites_a_document_outside_the_repository() -> None:
    """What a reader needs is in the text itself or in docs/ (a page per topic)."""
    paths = [REPO / "pyproject.toml", REPO / ".ci" / "run"]
    for folder in ("skillchat", "tests", "benchmarks", "docs"):
        paths += sorted(p for p in (REPO / folder).rglob("*") if p.suffix in (".py", ".md"))
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CITATION.search(line)
    ]
    assert found == [], "\n".join(found)
