"""The fair catalog: every usable skill keeps its name, descriptions are shortened to
one common length before any is dropped, the user is told how much, and
search_skills brings every description back whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_helpers import skill_box
from helpers import REAL_SKILLS, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply

from skillchat.prompt import ELLIPSIS, MIN_DESCRIPTION, build_catalog, system_prompt
from skillchat.skills.registry import Registry, discover


def entries(block: str) -> list[dict[str, str]]:
    return json.loads(block)["available_skills"]


def library(root: Path, descriptions: dict[str, str]) -> Path:
    for name, description in descriptions.items():
        skill_folder(root, name, f"name: {name}\ndescription: {json.dumps(description)}\n")
    return root


def real_registry() -> Registry:
    """Every skills folder of the real corpus (the parents of its skill folders)."""
    folders = sorted({p.parent.parent for p in REAL_SKILLS.rglob("SKILL.md")})
    return discover(folders)


def test_a_description_is_cut_at_a_sentence_then_a_word_and_never_past_the_cap(
    tmp_path: Path,
) -> None:
    """Every budget between names only and the whole description: the catalog's one
    description is its first sentence when that is at least half the cap, else cut at a
    word and marked; never longer than the cap. With no word boundary, a hard cut."""
    text = "Makes charts from CSV files. Use when the user asks for a plot or a graph."
    registry = discover([library(tmp_path / "charts", {"charts": text})])
    whole = build_catalog(registry, 1_000)
    assert whole is not None and entries(whole.block) == [{"name": "charts", "description": text}]
    cuts = set()
    for budget in range(len(whole.block) - len(text), len(whole.block)):
        catalog = build_catalog(registry, budget)
        assert catalog is not None and len(catalog.block) <= budget
        [entry] = entries(catalog.block)
        if not catalog.cap:
            assert entry == {"name": "charts"}  # names only
            continue
        cut = entry["description"]
        assert len(cut) <= catalog.cap
        if cut == "Makes charts from CSV files.":
            cuts.add("sentence")
        else:
            assert cut.endswith(ELLIPSIS) and not cut[:-1].endswith(" ")
            assert text.startswith(cut[:-1])
            cuts.add("word")
    assert cuts == {"sentence", "word"}
    unbroken = discover([library(tmp_path / "x", {"x": "x" * 500})])
    catalog = build_catalog(unbroken, 200)
    assert catalog is not None and catalog.cap is not None
    assert entries(catalog.block)[0]["description"] == "x" * (catalog.cap - 1) + ELLIPSIS


def test_descriptions_are_shortened_evenly_before_any_is_dropped(tmp_path: Path) -> None:
    descriptions = {f"skill-{i:02d}": f"Does thing {i}. " + "w " * (20 + 15 * i) for i in range(30)}
    descriptions["short-one"] = "Tiny."
    registry = discover([library(tmp_path, descriptions)])
    whole = build_catalog(registry, 1_000_000)
    assert whole is not None and whole.warning() is None and not whole.incomplete
    budget = len(whole.block) // 2
    fair = build_catalog(registry, budget)
    assert fair is not None and len(fair.block) <= budget
    shown = {e["name"]: e["description"] for e in entries(fair.block)}
    assert set(shown) == set(descriptions)  # every name
    assert fair.cap is not None and fair.shortened > 0 and fair.described and not fair.cut
    for name, full in descriptions.items():
        full = full.strip()
        if len(full) <= fair.cap:
            assert shown[name] == full  # short ones untouched
        else:  # every longer one cut to the same cap, and none kept long
            assert shown[name] != full and len(shown[name]) <= fair.cap
            assert len(shown[name]) >= fair.cap // 2
    assert fair.shortened == sum(len(d.strip()) > fair.cap for d in descriptions.values())
    # The largest cap that fits: one more character per description would not.
    assert len(build_catalog(registry, len(fair.block) - 40).block) < len(fair.block)
    warning = fair.warning()
    assert warning == (
        f"{fair.shortened} of 31 skill descriptions shortened to {fair.cap} characters to "
        f"fit the catalog (catalog_max_chars = {budget}); the model can call search_skills "
        "to read them whole"
    )
    assert build_catalog(registry, budget) == fair  # the same every turn (prompt caching)
    prompt = system_prompt(fair, tools=True)
    assert prompt is not None and "search_skills" in prompt and "list_skills" not in prompt
    assert "search_skills" not in (system_prompt(whole, tools=True) or "")


def test_names_only_before_names_are_cut(tmp_path: Path) -> None:
    registry = discover([library(tmp_path, {f"s-{i:03d}": "d " * 200 for i in range(50)})])
    names_only = len('{"available_skills": []}') + 50 * len('{"name": "s-000"}') + 49 * 2
    bare = build_catalog(registry, names_only)
    assert bare is not None and not bare.described and not bare.cut and bare.shown == 50
    assert entries(bare.block) == [{"name": f"s-{i:03d}"} for i in range(50)]
    assert "by name only" in (bare.warning() or "") and "search_skills" in bare.warning()
    cut = build_catalog(registry, names_only - 1)
    assert cut is not None and cut.cut and cut.shown == 49


@pytest.mark.usefixtures("shared")
def test_the_real_corpus_keeps_every_usable_skill_described() -> None:
    registry = real_registry()
    catalog = build_catalog(registry, 30_000)
    assert catalog is not None and len(catalog.block) <= 30_000
    shown = {e["name"]: e.get("description") for e in entries(catalog.block)}
    # Nothing is over max_skills any more; the rest left out are invalid or shadowed.
    assert {e.reason for e in registry.excluded} <= {"invalid", "shadowed"}
    assert len(registry.skills) + len(registry.excluded) == 236
    assert set(shown) == set(registry.skills)  # every usable name
    assert all(d and len(d) >= MIN_DESCRIPTION for d in shown.values())  # every one described
    lengths = [len(d) for d in shown.values() if d.endswith(ELLIPSIS) or d != d.strip()]
    assert catalog.cap is not None and max(lengths, default=0) <= catalog.cap
    assert "skill descriptions shortened to" in (catalog.warning() or "")


@pytest.mark.parametrize("budget", [10_000, 2_000_000])
def test_search_skills_is_offered_only_for_an_incomplete_catalog(
    server: ScriptedServer, tmp_path: Path, budget: int
) -> None:
    long = "Turns spreadsheets into charts. " + "It handles many chart kinds. " * 25
    descriptions = {f"skill-{i:03d}": f"Skill number {i}. " + "filler " * 60 for i in range(60)}
    descriptions["chart-maker"] = long.strip()
    skills = library(tmp_path / "skills", descriptions)
    args = {"query": "charts from spreadsheets"}
    server.script(reply(calls=[call("search_skills", args, id="s1")]), reply("done"))
    config = tmp_path / "config.toml"
    config.write_text(f"[skills]\ncatalog_max_chars = {budget}\n")
    done = skillchat(
        "ask", "--model", "openai/test-model", "--api-base", server.base_url,
        "--config", str(config), "--skills-dir", str(skills), "make a chart",
    )  # fmt: skip
    first = server.completions[0].body
    offered = [t["function"]["name"] for t in first["tools"]]
    if budget > 1_000_000:
        assert "search_skills" not in offered and "shortened" not in done.stderr
        return
    assert done.returncode == 0, done.stderr
    assert "search_skills" in offered
    assert "skill descriptions shortened to" in done.stderr
    [result] = [m for m in server.completions[1].body["messages"] if m["role"] == "tool"]
    payload = json.loads(result["content"])
    assert payload["matches"][0] == {"name": "chart-maker", "description": long.strip()}
    assert payload["total_matches"] >= 1


def test_search_skills_ranks_caps_and_says_when_nothing_matches(tmp_path: Path) -> None:
    descriptions = {f"pdf-tool-{i:02d}": f"Works on PDF files, variant {i}." for i in range(15)}
    descriptions["pdf"] = "Reads and fills PDF forms."
    descriptions["weather"] = "Gives the forecast."
    box = skill_box(discover([library(tmp_path, descriptions)]))
    box.context.catalog_incomplete = True
    many = json.loads(box.run("search_skills", '{"query": "pdf"}').content)
    assert many["matches"][0]["name"] == "pdf"  # the whole name first
    assert len(many["matches"]) == 10 and many["total_matches"] == 16
    assert "narrow" in many["notice"]
    none = json.loads(box.run("search_skills", '{"query": "kubernetes"}').content)
    assert none["matches"] == [] and "list_skills" in none["notice"]
    bad = box.run("search_skills", '{"query": "  "}')
    assert bad.is_error and bad.error_code == "INVALID_ARGUMENT"
    box.context.catalog_incomplete = False
    assert "search_skills" not in box.names()
