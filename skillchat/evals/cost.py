"""What each skill costs in tokens: in the catalog, and when it is activated.

`skillchat skills cost` reports, from the same code that builds requests:

- per skill, its **catalog** tokens (its entry in the `available_skills` block as
  `build_catalog` makes it, shortened or not, and the separator) and its
  **activation** tokens: the get_skill result as the model receives it (body,
  frontmatter, file list), plus the **files** its body points to (a relative path
  in a Markdown link or in backticks that names one of its files), each as
  read_file_in_skill would return it;
- the **fixed overhead** of every request that offers skills: the system prompt's
  rules and the JSON schemas of the tools offered (run_command's included when
  `[run] enabled`, as a chat offers it wherever the sandbox works);
- the **total** a request carries before the chat starts: overhead plus catalog.

Tokens are counted with tiktoken's `cl100k_base`, whose file LiteLLM ships
(`litellm/litellm_core_utils/tokenizers/`): tiktoken is pointed at that folder and
never downloads. It is exact for GPT-4 and GPT-3.5, and an estimate for other
families (GPT-4o's o200k, Claude, Llama and Qwen count within ~10-20%). When it
cannot load, characters / 4 is used and the report says so.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillchat.config import Settings
from skillchat.prompt import build_catalog, system_prompt
from skillchat.skills.registry import Registry
from skillchat.tools.base import ToolContext
from skillchat.tools.context import ContextLedger
from skillchat.tools.run_command import RunCommand
from skillchat.tools.skill_tools import GetSkill, ReadFileInSkill
from skillchat.tools.toolbox import Toolbox

ENCODING = "cl100k_base"
# tiktoken names a cached file by the sha1 of its URL: this is cl100k_base's, and the
# sha256 tiktoken expects of its content. A file that does not match is not handed to
# tiktoken, which would delete it (it is LiteLLM's copy) and download it again.
_CL100K_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# A relative path a SKILL.md points to: a Markdown link target or a `code` span.
_REFERENCE = re.compile(r"\]\(([^)\s#]+)[^)]*\)|`([^`\s]+)`")


@dataclass(frozen=True)
class Counter:
    """A token counter and how to describe it."""

    count: Callable[[str], int]
    name: str
    exact: bool  # False: the characters / 4 estimate


def _litellm_tokenizers() -> Path | None:
    """LiteLLM's bundled tokenizer folder, found without importing LiteLLM (seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils/tokenizers"
    try:
        data = (folder / _CL100K_FILE).read_bytes()
    except OSError:
        return None
    return folder if hashlib.sha256(data).hexdigest() == _CL100K_SHA256 else None


def load_counter() -> Counter:
    """tiktoken's cl100k_base from LiteLLM's copy, else the characters / 4 estimate."""
    estimate = Counter(lambda text: (len(text) + 3) // 4, "characters / 4 (estimate)", False)
    folder = _litellm_tokenizers()
    if folder is None:
        return estimate
    # tiktoken reads its cache folder from the environment while it loads; set only
    # for that, so the commands and skill scripts started later do not inherit it.
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(ENCODING)
    except Exception:
        return estimate
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return Counter(lambda text: len(encoding.encode(text, disallowed_special=())), ENCODING, True)


@dataclass
class SkillCost:
    name: str
    catalog: int
    body: int
    files: int
    referenced: list[str] = field(default_factory=list)
    shortened: bool = False
    in_catalog: bool = True
    error: str | None = None

    @property
    def activation(self) -> int:
        return self.body + self.files


@dataclass
class CostReport:
    skills: list[SkillCost]
    rules: int
    schemas: int
    catalog: int
    counter: Counter
    catalog_warning: str | None

    @property
    def overhead(self) -> int:
        return self.rules + self.schemas

    @property
    def total(self) -> int:
        return self.overhead + self.catalog

    def as_json(self) -> dict[str, Any]:
        return {
            "tokenizer": self.counter.name,
            "exact_for": "GPT-4, GPT-3.5" if self.counter.exact else None,
            "overhead": {"rules": self.rules, "tool_schemas": self.schemas},
            "catalog": self.catalog,
            "total": self.total,
            "catalog_warning": self.catalog_warning,
            "skills": [
                {
                    "name": s.name,
                    "catalog": s.catalog,
                    "body": s.body,
                    "files": s.files,
                    "activation": s.activation,
                    "referenced_files": s.referenced,
                    "shortened": s.shortened,
                    "in_catalog": s.in_catalog,
                    "error": s.error,
                }
                for s in self.skills
            ],
        }


def _referenced(body: str, files: list[str]) -> list[str]:
    """The skill's files its body names, in order of first mention."""
    known, seen = set(files), []
    for match in _REFERENCE.finditer(body):
        path = (match.group(1) or match.group(2)).removeprefix("./")
        if path in known and path not in seen:
            seen.append(path)
    return seen


def _activation(context: ToolContext, name: str, count: Callable[[str], int]) -> SkillCost:
    """The get_skill result and the referenced files' reads, as the model gets them."""
    context.activated[:] = [name]  # as after the user's /name: hidden skills count too
    context.ledger = ContextLedger()
    result = GetSkill().load(context, name)
    if result.is_error:
        return SkillCost(name, 0, 0, 0, error=result.preview)
    payload = json.loads(result.content)
    referenced = _referenced(payload.get("documentation", ""), payload.get("files", []))
    reader = ReadFileInSkill()
    files = 0
    for path in referenced:
        read = reader.run(json.dumps({"skill_name": name, "file_path": path}), context)
        files += count(read.content)
    return SkillCost(name, 0, count(result.content), files, referenced)


def skill_costs(settings: Settings, registry: Registry, counter: Counter) -> CostReport:
    """The whole report for the skills of `registry` under `settings`."""
    count = counter.count
    catalog = build_catalog(registry, settings.limits.catalog_budget)
    context = ToolContext(settings, registry)
    context.catalog_incomplete = catalog is not None and catalog.incomplete
    box = Toolbox(context)
    offered, tool_rules = box.schemas(), box.prompt_rules()
    if settings.run.enabled:  # as a chat offers it wherever the sandbox works
        offered.append(RunCommand.schema)
        tool_rules.append(RunCommand.prompt_rule)
    schemas = count(json.dumps(offered, ensure_ascii=False)) if offered else 0
    rules = system_prompt(catalog, tools=True, tool_rules=tool_rules, commands=settings.run.enabled)
    block = catalog.block if catalog is not None else ""
    rules_tokens = count((rules or "").replace(block, "")) if rules else 0
    shown = {}
    if catalog is not None:
        shown = {e["name"]: e for e in json.loads(catalog.block)["available_skills"]}
    costs = []
    for name in registry.names():
        cost = _activation(context, name, count)
        entry = shown.get(name)
        cost.in_catalog = entry is not None
        if entry is not None:
            cost.catalog = count(json.dumps(entry, ensure_ascii=False)) + 1  # ", "
            full = registry.skills[name].model_description
            cost.shortened = entry.get("description") != full
        costs.append(cost)
    return CostReport(
        costs,
        rules_tokens,
        schemas,
        count(block),
        counter,
        catalog.warning() if catalog is not None else None,
    )
