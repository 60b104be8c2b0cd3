"""The query files `skillchat eval` reads, in the two shapes the Agent Skills guides use.

Trigger queries (agentskills.io "Optimizing skill descriptions", skill-creator's
`eval_queries.json`): a JSON list of `{"query": str, "should_trigger": bool}` for one
skill. The file itself does not name the skill, so skillchat takes it from, in order:
an entry's own `"skill"` key (so one file can cover several skills), `--skill NAME`,
or the skill folder the file sits in (`<skill>/eval_queries.json` or
`<skill>/evals/eval_queries.json`).

Task evals (skill-creator's `evals/evals.json`): `{"skill_name": str, "evals":
[{"prompt": str, ...}]}`. Every prompt is a task for that skill, so each is a
should-trigger query; `expected_output`, `files` and `expectations` are for grading
outputs, which eval does not do, and are ignored.

Anything else is a `UsageError` naming the file, the entry and the field, before any
request is sent; so is a path that is not a regular file (a FIFO, `/dev/zero`: see
localfile.py) or JSON nested past what Python's parser can recurse into.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.errors import NotRegularFile, UsageError
from skillchat.localfile import read_regular

MAX_QUERY_FILE_BYTES = 10_000_000


@dataclass(frozen=True)
class EvalQuery:
    """One query: the skill it is about, and whether that skill should trigger."""

    skill: str
    query: str
    should_trigger: bool
    id: str  # "3" for the third entry, or a task eval's own id


def load_queries(path: Path, skill: str | None = None) -> list[EvalQuery]:
    """The queries of `path` (either shape); `skill` is `--skill`, for files that
    name none. Raises UsageError for a file that cannot be used."""
    where = path.name
    document = read_json_file(path)
    if isinstance(document, list):
        queries = _trigger_queries(document, where, skill or _folder_skill(path))
    elif isinstance(document, dict) and "evals" in document:
        queries = _task_evals(document, where)
    else:
        raise UsageError(
            f"{where}: expected a list of {{query, should_trigger}} objects "
            '(eval_queries.json) or an object with "skill_name" and "evals" (evals.json)'
        )
    if not queries:
        raise UsageError(f"{where}: no queries in it")
    return queries


def read_json_file(path: Path) -> Any:
    """The JSON document of `path`, a regular file under MAX_QUERY_FILE_BYTES; a
    UsageError naming the file otherwise (the outcome eval's tasks file reads so too)."""
    where = path.name
    try:
        data = read_regular(path, MAX_QUERY_FILE_BYTES)
        if len(data) > MAX_QUERY_FILE_BYTES:
            raise UsageError(f"{where}: larger than {MAX_QUERY_FILE_BYTES:,} bytes")
        return json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such query file") from None
    except NotRegularFile as exc:
        raise UsageError(f"{path}: not a query file: {exc}") from None
    except RecursionError:
        raise UsageError(f"{where}: not JSON skillchat can read (nested too deeply)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from None
    except ValueError as exc:
        raise UsageError(f"{where}: not JSON ({exc})") from None


def _folder_skill(path: Path) -> str | None:
    """The skill whose folder holds `path` (directly or in its `evals/`), if any."""
    for folder in (path.parent, path.parent.parent):
        if (folder / "SKILL.md").is_file():
            return folder.resolve().name
    return None


def _trigger_queries(entries: list[Any], where: str, skill: str | None) -> list[EvalQuery]:
    queries = []
    for n, entry in enumerate(entries, 1):
        at = f"{where}: entry {n}"
        if not isinstance(entry, dict):
            raise UsageError(f'{at}: expected an object with "query" and "should_trigger"')
        query = _text(entry, "query", at)
        should = entry.get("should_trigger")
        if not isinstance(should, bool):
            raise UsageError(f'{at}: "should_trigger" must be true or false')
        name = _text(entry, "skill", at) if "skill" in entry else skill
        if name is None:
            raise UsageError(
                f'{at}: no skill named: add "skill" to the entry, or pass --skill NAME'
            )
        queries.append(EvalQuery(name, query, should, str(n)))
    return queries


def _task_evals(document: dict[str, Any], where: str) -> list[EvalQuery]:
    skill = _text(document, "skill_name", where)
    evals = document["evals"]
    if not isinstance(evals, list):
        raise UsageError(f'{where}: "evals" must be a list')
    queries = []
    for n, entry in enumerate(evals, 1):
        at = f"{where}: evals[{n - 1}]"
        if not isinstance(entry, dict):
            raise UsageError(f'{at}: expected an object with "prompt"')
        prompt = _text(entry, "prompt", at)
        ident = entry.get("id", n)
        queries.append(EvalQuery(skill, prompt, True, str(ident)))
    return queries


def _text(entry: dict[str, Any], key: str, at: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        missing = "missing" if value is None else "not a non-empty string"
        raise UsageError(f'{at}: "{key}" is {missing}')
    return value
