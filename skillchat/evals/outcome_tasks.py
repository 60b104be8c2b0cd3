"""The tasks of an outcome eval: a skill's `evals/evals.json` in the Agent Skills
guide's format, read as it is, plus the fields skillchat grades by.

    {"skill_name": "pdf",
     "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
                "files": ["evals/files/form.pdf"],
                "expectations": ["..."],            # or "assertions"
                "verifier": "evals/check_form.py",  # skillchat: exit 0 = pass
                "output_contains": ["Total: 42"],   # skillchat: in answer.md
                "output_matches": ["Total: \\d+"],  # skillchat: a regex, searched
                "files_exist": ["filled.pdf"]}]}     # skillchat: in the outputs

Paths in `files` and `verifier` are relative to the skill's folder and must stay
in it. `expectations`/`assertions` are graded by the LLM judge (outcome_judge.py)
after the deterministic checks; `expected_output` is the judge's reference (the
guide's "what a good answer looks like"), shown to the judge and the pairwise
comparer beside the answer. A task nothing grades is run, not graded, and the report
says so. None of them is ever shown to the agent.

A file that cannot be read or is not this shape is a UsageError (one line, before
any request). One bad entry is left out with a line of its own (`Tasks.problems`)
and the other tasks run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from skillchat.errors import NotRegularFile, UsageError
from skillchat.evals.queries import read_json_file
from skillchat.localfile import read_regular

MAX_TASK_FILE_BYTES = 100_000_000  # a task's file, copied into every trial


@dataclass(frozen=True)
class Task:
    """One eval of the file, with what grades it."""

    id: str
    prompt: str
    files: tuple[str, ...] = ()
    verifier: str | None = None
    output_contains: tuple[str, ...] = ()
    output_matches: tuple[str, ...] = ()
    files_exist: tuple[str, ...] = ()
    expectations: tuple[str, ...] = ()  # graded by the LLM judge (outcome_judge.py)
    expected_output: str = ""  # the graders' reference, never the agent's
    digest: str = ""  # of the entry, its files and verifier: a changed task is a new one

    @property
    def graded(self) -> bool:
        """Whether anything deterministic grades it."""
        return bool(
            self.verifier or self.output_contains or self.output_matches or self.files_exist
        )


@dataclass(frozen=True)
class Tasks:
    skill: str
    tasks: list[Task]
    problems: list[str] = field(default_factory=list)


def load_tasks(path: Path, roots: Mapping[str, Path]) -> Tasks:
    """The tasks of `path`; `roots` are the usable skills' folders by name (the one
    the file names must be among them)."""
    where = path.name
    document = read_json_file(path)
    if not isinstance(document, dict) or not isinstance(document.get("evals"), list):
        raise UsageError(f'{where}: expected an object with "skill_name" and a list "evals"')
    skill = document.get("skill_name")
    if not isinstance(skill, str) or not skill.strip():
        raise UsageError(f'{where}: "skill_name" is missing or not a string')
    skill_root = roots.get(skill)
    if skill_root is None:
        raise UsageError(
            f"{where}: no usable skill named '{skill}' in the skills directories "
            "(skillchat skills list)"
        )
    tasks: list[Task] = []
    problems: list[str] = []
    seen: set[str] = set()
    for n, entry in enumerate(document["evals"]):
        at = f"{where}: evals[{n}]"
        try:
            task = _task(entry, n, at, skill_root)
        except UsageError as exc:
            problems.append(f"{exc}; left out")
            continue
        if task.id in seen:
            problems.append(f"{at}: id {task.id} is used twice; left out")
            continue
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise UsageError(problems[0] if problems else f"{where}: no evals in it")
    return Tasks(skill, tasks, problems)


def _task(entry: Any, n: int, at: str, root: Path) -> Task:
    if not isinstance(entry, dict):
        raise UsageError(f'{at}: expected an object with "prompt"')
    prompt = entry.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UsageError(f'{at}: "prompt" is missing or not a non-empty string')
    ident = entry.get("id", n + 1)
    if isinstance(ident, bool) or not isinstance(ident, (int, str)) or not str(ident).strip():
        raise UsageError(f'{at}: "id" must be a number or a string')
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", str(ident)):
        raise UsageError(f'{at}: "id" must be letters, digits, ".", "_" or "-" (a folder name)')
    files = _strings(entry, "files", at)
    for name in files:
        _inside(root, name, at, "files")
    names = [PurePosixPath(f).name for f in files]
    if len(set(names)) != len(names):
        raise UsageError(f'{at}: "files" has two files of the same name')
    verifier = entry.get("verifier")
    if verifier is not None:
        if not isinstance(verifier, str):
            raise UsageError(f'{at}: "verifier" must be a path in the skill folder')
        _inside(root, verifier, at, "verifier")
        if not (root / verifier).is_file():
            raise UsageError(f'{at}: "verifier" {verifier} is not a file in the skill folder')
    patterns = _strings(entry, "output_matches", at)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f'{at}: "output_matches" {pattern!r} is not a regex ({exc})') from None
    exists = _strings(entry, "files_exist", at)
    for name in exists:
        if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts:
            raise UsageError(f'{at}: "files_exist" {name} must be a path inside the outputs')
    key = "assertions" if "assertions" in entry else "expectations"
    expected = entry.get("expected_output", "")
    if not isinstance(expected, str):
        raise UsageError(f'{at}: "expected_output" must be a string')
    return Task(
        id=str(ident),
        prompt=prompt,
        files=files,
        verifier=verifier,
        output_contains=_strings(entry, "output_contains", at),
        output_matches=patterns,
        files_exist=exists,
        expectations=_strings(entry, key, at),
        expected_output=expected,
        digest=_digest(entry, root, [*files, *([verifier] if verifier else [])], at),
    )


def _digest(entry: dict[str, Any], root: Path, paths: list[str], at: str) -> str:
    """The task's identity in the results store: its entry and the content of its
    files and verifier, which live in evals/ and so are not in the skill's digest:
    editing the verifier must grade again. A file that is no regular file (a FIFO
    would hang the copy) or is over MAX_TASK_FILE_BYTES leaves the task out."""
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode())
    for name in paths:
        path = root / name
        files = [path]
        if path.is_dir():  # its files as the trial's copy takes them: links left out
            files = sorted(
                Path(folder) / f
                for folder, _dirs, names in os.walk(path)
                for f in names
                if not os.path.islink(os.path.join(folder, f))
            )
        for file in files:
            try:
                data = read_regular(file, MAX_TASK_FILE_BYTES)
            except (NotRegularFile, OSError) as exc:
                raise UsageError(f"{at}: {name} cannot be used ({exc})") from None
            if len(data) > MAX_TASK_FILE_BYTES:
                raise UsageError(f"{at}: {name} is larger than {MAX_TASK_FILE_BYTES:,} bytes")
            digest.update(str(file.relative_to(root)).encode() + b"\0" + data)
    return digest.hexdigest()


def _strings(entry: dict[str, Any], key: str, at: str) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple (absent: empty)."""
    value = entry.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f'{at}: "{key}" must be a string or a list of strings')
    return tuple(value)


def _inside(root: Path, name: str, at: str, key: str) -> None:
    """`name` is a relative path that stays in the skill folder (symlinks resolved)."""
    pure = PurePosixPath(name)
    real = (root / name).resolve()
    if pure.is_absolute() or ".." in pure.parts or not real.is_relative_to(root.resolve()):
        raise UsageError(f'{at}: "{key}" {name} must be a path inside the skill folder')
    if not real.exists():
        raise UsageError(f'{at}: "{key}" {name} does not exist in the skill folder')
