"""Running an outcome eval in shares (`--shard I/N`) and combining them (`eval
merge`), and the conditions every trial of a report must share.

A shard runs the trials whose results-store key, read as a number, is I-1 modulo
N: the share depends on nothing but the trial, so N machines with the same
command and tasks file run disjoint shares that cover the plan, each in any order.

Each run writes its manifest, `<out>/.run.json`: the skill's digests,
the arms, the tasks, models, trials and k, the whole plan's keys, the shard, and
the **conditions** of each model's trials (the settings that shape what an agent
may do: tools, budgets, sandbox policy and network, the other skills in the
catalog, the verifier's timeout). Results run under other conditions are drift, not
data: resuming into a results store made under other conditions is refused, and so
is merging shards that differ in anything but their share. No key, base URL or
local path is in a manifest: shards run on other machines.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillchat.config import Settings
from skillchat.errors import UsageError
from skillchat.evals.outcome_tasks import Task, Tasks
from skillchat.evals.outcome_trial import TrialResult
from skillchat.skills.registry import Registry

MANIFEST = ".run.json"  # in the out folder, beside .results/
# The settings that shape a trial beyond the model's name: held equal across arms
# and shards. Paths, keys, base URLs and the chat store are machine-local.
CONDITION_FIELDS = (
    "backend", "tools", "paths_gate", "max_tool_rounds", "max_tool_calls", "context_max_chars",
    "context_window", "auto_compact", "compact_skills_tokens", "max_tokens", "thinking_budget",
    "timeout", "vision", "max_skill_md_bytes", "max_resource_bytes", "catalog_max_chars",
    "run_enabled", "run_allow", "run_allow_network", "run_allow_write", "run_allowed_tools",
    "run_timeout_s", "run_max_timeout_s", "run_allow_install", "run_install_max_mb",
    "skill_packages", "mcp_use", "mcp_allow", "skill_models",
)  # fmt: skip
# Besides the trials' results: what two shards must agree on to be merged, and how
# a user knows each.
AGREED = {
    "skill": "its skill",
    "digest": "the skill's version",
    "arms": "its arms (a --baseline, or none)",
    "old_digest": "the baseline's version",
    "tasks": "its tasks (another tasks file, or an edited one)",
    "models": "its models",
    "trials": "its --trials",
    "k": "its --k",
    "conditions": "its conditions (settings, sandbox, other skills)",
}


def parse_shard(spec: str) -> tuple[int, int]:
    """`I/N` with 1 <= I <= N."""
    found = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", spec)
    if found is None or not 1 <= int(found[1]) <= int(found[2]):
        raise UsageError(f"--shard {spec}: expected I/N, the I-th of N shares (1 <= I <= N)")
    return int(found[1]), int(found[2])


def in_shard(key: str, shard: tuple[int, int] | None) -> bool:
    """Whether the trial of store key `key` is in `shard` (every trial without one)."""
    return shard is None or int(key, 16) % shard[1] == shard[0] - 1


def conditions(
    settings: Settings,
    catalog: Registry,
    skill: str,
    sandbox: bool,
    allow_run: bool,
    verifier_s: float,
) -> dict[str, Any]:
    """One model's conditions, as JSON: the same on every machine for the same run."""
    fields = {name: settings.value(name) for name in CONDITION_FIELDS}
    held: dict[str, Any] = json.loads(
        json.dumps(
            {
                **fields,
                "sandbox": sandbox,
                "allow_run": allow_run,
                "verifier_timeout_s": verifier_s,
                "other_skills": {
                    name: s.description for name, s in catalog.skills.items() if name != skill
                },
            },
            default=list,
            sort_keys=True,
        )
    )
    return held


@dataclass
class Manifest:
    skill: str
    digest: str
    old_digest: str | None
    arms: list[str]
    tasks: list[dict[str, Any]]
    models: list[str]
    trials: int
    k: int
    conditions: dict[str, dict[str, Any]]
    plan: list[list[Any]]  # every trial's [key, task, model, arm, trial], whatever the shard
    shard: list[int] | None  # [I, N]
    workspaces: dict[str, str]  # model: its iteration folder, relative to the out folder

    def task_list(self) -> Tasks:
        fields = {f.name for f in dataclasses.fields(Task)}
        tasks = []
        for entry in self.tasks:
            given: dict[str, Any] = {
                k: tuple(v) if isinstance(v, list) else v for k, v in entry.items() if k in fields
            }
            tasks.append(Task(**given))
        return Tasks(self.skill, tasks)


def task_entries(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(dataclasses.asdict(t))) for t in tasks]


def read_manifest(out: Path) -> Manifest | None:
    """The manifest of the run in `out`, None when there is none; one line when it is
    not one."""
    path = out / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a manifest of an outcome eval ({exc})") from None
    try:
        return Manifest(**data)
    except TypeError:
        raise UsageError(f"{path}: not a manifest of an outcome eval") from None


def write_manifest(out: Path, manifest: Manifest) -> None:
    path = out / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.write_text(json.dumps(dataclasses.asdict(manifest), indent=1), encoding="utf-8")
    os.replace(part, path)


def check_resume(out: Path, manifest: Manifest) -> None:
    """Refuse to add trials to a results store made under other conditions."""
    before = read_manifest(out)
    if before is None:
        return
    for model, now in manifest.conditions.items():
        then = before.conditions.get(model)
        if then is not None and then != now:
            raise UsageError(
                f"{out}: its results for {model} were run with other settings "
                f"({_first_difference(then, now)}); use another --out, or the same settings"
            )


def _first_difference(then: dict[str, Any], now: dict[str, Any]) -> str:
    key = next(k for k in sorted({*then, *now}) if then.get(k) != now.get(k))
    return f"{key}: {json.dumps(then.get(key))} then, {json.dumps(now.get(key))} now"


def merge(shards: Sequence[Path], out: Path) -> tuple[Manifest, list[TrialResult]]:
    """Combine the shards' stores and trial folders into `out`: every shard of one
    run, each once, covering its plan; anything else is refused in one line."""
    manifests = []
    for folder in shards:
        found = read_manifest(folder)
        if found is None:
            raise UsageError(f"{folder}: no outcome eval was run there (no {MANIFEST})")
        manifests.append(found)
    first = manifests[0]
    for folder, other in zip(shards[1:], manifests[1:], strict=True):
        for key, what in AGREED.items():
            if getattr(other, key) != getattr(first, key):
                raise UsageError(f"cannot merge: {folder} differs from {shards[0]} in {what}")
    if any(m.shard is None for m in manifests):
        raise UsageError("cannot merge: each folder must be a shard (run with --shard I/N)")
    counts = {m.shard[1] for m in manifests if m.shard is not None}
    taken = sorted(m.shard[0] for m in manifests if m.shard is not None)
    if len(counts) > 1:
        raise UsageError("cannot merge: the shards split the run in different numbers of shares")
    n = counts.pop()
    if taken != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(taken))
        what = f"shard {missing[0]}/{n} is missing" if missing else "a shard is given twice"
        raise UsageError(f"cannot merge: {what}")
    if out.resolve() in {s.resolve() for s in shards}:
        raise UsageError("cannot merge into a shard's folder: --out must be another folder")
    merged = dataclasses.replace(first, shard=None, workspaces={})
    check_resume(out, merged)
    texts: dict[str, str] = {}
    results: list[TrialResult] = []
    for key, *trial in first.plan:
        holder = next((f for f in shards if (f / ".results" / f"{key}.json").is_file()), None)
        if holder is None:
            raise UsageError(
                "cannot merge: a trial of the plan is in no shard (one was interrupted: "
                "run its command again to finish it)"
            )
        texts[key] = (holder / ".results" / f"{key}.json").read_text(encoding="utf-8")
        result = _result(texts[key], trial)
        if result is None:
            raise UsageError(f"{holder}: its result {key} is damaged; run that shard again")
        results.append(result)
    store = out / ".results"
    store.mkdir(parents=True, exist_ok=True)
    for key, data in texts.items():
        (store / f"{key}.json").write_text(data, encoding="utf-8")
    return merged, results


# The types of a stored result's fields, as TrialResult declares them.
_TYPES: dict[str, tuple[type, ...]] = {
    "task": (str,), "model": (str,), "arm": (str,), "trial": (int,),
    "passed": (bool, type(None)), "loaded": (bool,), "measured": (bool,), "checks": (list,),
    "tokens": (int,), "cost": (float, int, type(None)), "seconds": (float, int),
    "tool_calls": (int,), "error": (str, type(None)),
    "judge_tokens": (int,), "judge_cost": (float, int, type(None)),
}  # fmt: skip


def _result(text: str, trial: list[Any]) -> TrialResult | None:
    """A shard's stored result, when it is one and is the trial its key names
    (a file from another store, or edited, would count in the wrong place)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) - set(_TYPES):
        return None
    if not all(isinstance(data.get(k), t) for k, t in _TYPES.items() if k in data):
        return None
    checks = data.get("checks", [])
    if not all(
        isinstance(c, dict)
        and isinstance(c.get("text"), str)
        and isinstance(c.get("passed"), bool)
        and isinstance(c.get("evidence"), str)
        for c in checks
    ):
        return None
    try:
        result = TrialResult(**data)
    except TypeError:
        return None
    return result if [result.task, result.model, result.arm, result.trial] == trial else None


def copy_trials(shards: Sequence[Path], manifest: Manifest, folders: dict[str, Path]) -> None:
    """Each shard's trial folders (outputs, grading.json) into the merged iterations."""
    for shard in shards:
        found = read_manifest(shard)
        for model, rel in (found.workspaces if found else {}).items():
            source = shard / rel
            if model in folders and source.is_dir() and not source.is_symlink():
                for task in source.glob("eval-*"):
                    shutil.copytree(
                        task, folders[model] / task.name, symlinks=True, dirs_exist_ok=True
                    )
