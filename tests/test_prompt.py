"""The system prompt: rules, one sorted JSON catalog, activated names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import skill_folder

from skillchat.engine.activated import with_activated_note
from skillchat.prompt import InjectedSkill, build_catalog, system_prompt
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry
from skillchat.tools.base import to_json


def registry_of(tmp_path: Path, descriptions: dict[str, str]) -> Registry:
    skills = {}
    for name, description in descriptions.items():
        root = skill_folder(tmp_path, name, f"name: {name}\ndescription: {description}\n", "")
        skills[name] = Skill(name, description, root, root / "SKILL.md", tmp_path, {})
    return Registry(skills=skills, directories=(tmp_path,))


def catalog_json(prompt: str) -> dict:
    match = re.search(r'^\{"available_skills": .*\}$', prompt, re.MULTILINE)
    assert match, prompt
    return json.loads(match.group(0))


def test_catalog_is_names_and_descriptions_sorted_without_paths(tmp_path: Path) -> None:
    reg = registry_of(tmp_path, {"zeta": "last one", "alpha": 'first, with "quotes" ✓'})
    prompt = system_prompt(build_catalog(reg, 30_000), tools=True)
    assert prompt is not None
    assert catalog_json(prompt) == {
        "available_skills": [
            {"name": "alpha", "description": 'first, with "quotes" ✓'},
            {"name": "zeta", "description": "last one"},
        ]
    }
    assert str(tmp_path) not in prompt
    assert prompt.count("available_skills") == 1
    assert "get_skill" in prompt and "read_file_in_skill" in prompt
    assert "list_skills" not in prompt  # only pointed at when the list is cut
    assert "activated" not in prompt


def test_no_skills_no_prompt() -> None:
    assert build_catalog(Registry(skills={}), 1000) is None
    assert system_prompt(None, tools=True) is None
    assert system_prompt(None, tools=False) is None


def test_names_cut_at_a_whole_entry_only_when_names_alone_do_not_fit(tmp_path: Path) -> None:
    reg = registry_of(tmp_path, {f"skill-{i:02d}": "d" * 50 for i in range(40)})
    full = build_catalog(reg, 1_000_000)
    assert full is not None and not full.cut and full.warning() is None
    names_only = len('{"available_skills": []}') + 40 * len('{"name": "skill-00"}') + 39 * 2
    budget = names_only // 2
    cut = build_catalog(reg, budget)
    assert cut is not None and cut.cut and not cut.described
    assert len(cut.block) <= budget
    shown = json.loads(cut.block)["available_skills"]
    assert shown == [{"name": f"skill-{i:02d}"} for i in range(cut.shown)]
    assert 0 < cut.shown < 40 and cut.total == 40
    warning = cut.warning()
    assert warning is not None
    assert f"{cut.shown} of 40" in warning and "list_skills" in warning
    prompt = system_prompt(cut, tools=True)
    assert prompt is not None
    assert catalog_json(prompt) == json.loads(cut.block)
    assert f"{40 - cut.shown} more skills" in prompt and "Call list_skills" in prompt
    assert "search_skills" in prompt


def test_budget_smaller_than_one_entry_leaves_an_empty_list(tmp_path: Path) -> None:
    reg = registry_of(tmp_path, {"alpha": "x" * 200})
    cut = build_catalog(reg, 30)
    assert cut is not None
    assert json.loads(cut.block) == {"available_skills": []}
    assert cut.cut and cut.shown == 0


def test_activated_skills_whose_instructions_are_not_sent_are_named_last(
    tmp_path: Path,
) -> None:
    reg = registry_of(tmp_path, {"alpha": "a", "beta": "b", "gamma": "c"})
    prompt = system_prompt(build_catalog(reg, 1000), tools=True)
    assert prompt is not None
    loaded = {"role": "tool", "content": to_json({"skill_name": "gamma", "documentation": "x"})}
    stub = {"role": "tool", "content": to_json({"skill_name": "alpha", "stub": "not stored"})}
    elided = {"role": "tool", "content": "[elided to save context]"}
    messages = [{"role": "system", "content": prompt}, stub, elided, loaded]
    sent = with_activated_note(messages, ["beta", "alpha", "gamma"])
    last = sent[0]["content"].rstrip().splitlines()[-1]
    assert last.endswith(": beta, alpha")
    assert sent[0]["content"].startswith(prompt) and sent[1:] == messages[1:]
    assert messages[0]["content"] == prompt  # the chat's own list is left as it was
    assert with_activated_note(messages, ["gamma"]) is messages
    with_body = system_prompt(
        build_catalog(reg, 1000), tools=False, injected=InjectedSkill("beta", "body")
    )
    injected = [{"role": "system", "content": with_body}]
    assert with_activated_note(injected, ["beta"]) is injected


def test_without_tools_the_rules_do_not_mention_tools(tmp_path: Path) -> None:
    reg = registry_of(tmp_path, {"alpha": "a"})
    prompt = system_prompt(build_catalog(reg, 1000), tools=False)
    assert prompt is not None
    assert "get_skill" not in prompt and "read_file_in_skill" not in prompt
    assert "/<skill-name>" in prompt
    assert catalog_json(prompt)["available_skills"][0]["name"] == "alpha"


def test_injected_body_is_in_the_prompt(tmp_path: Path) -> None:
    reg = registry_of(tmp_path, {"alpha": "a"})
    body = "# Alpha\n\nDo the alpha thing with 42.\n"
    prompt = system_prompt(
        build_catalog(reg, 1000), tools=False, injected=InjectedSkill("alpha", body)
    )
    assert prompt is not None
    assert '<skill name="alpha">\n# Alpha\n\nDo the alpha thing with 42.\n</skill>' in prompt
