"""The hard-link rule (skillchat/hardlinks.py): skillchat's bundled skills are read when
their files are hard links (as uv installs them), every other folder still refuses them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from chat_helpers import tool_messages
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply

REPO = Path(__file__).resolve().parents[1]


def uv_like_install(tmp_path: Path) -> Path:
    """A copy of the skillchat package whose bundled skills' files are hard links into
    a second folder, the way uv links an installed package's files into its cache."""
    site = tmp_path / "site"
    shutil.copytree(
        REPO / "skillchat",
        site / "skillchat",
        ignore=shutil.ignore_patterns("__pycache__", "bundled_skills"),
    )
    cache = tmp_path / "uv-cache" / "bundled_skills"
    shutil.copytree(REPO / "skillchat" / "bundled_skills", cache)
    for source in cache.rglob("*"):
        installed = site / "skillchat" / "bundled_skills" / source.relative_to(cache)
        if source.is_dir():
            installed.mkdir(parents=True, exist_ok=True)
        else:
            installed.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, installed)
    assert (site / "skillchat" / "bundled_skills" / "calculator" / "SKILL.md").stat().st_nlink == 2
    return site


def test_hard_linked_bundled_skills_are_used(server: ScriptedServer, tmp_path: Path) -> None:
    site = uv_like_install(tmp_path)
    server.script(reply("4"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = skillchat(
        "ask", "--model", "openai/test-model", "--api-base", server.base_url, "/calculator 2+2",
        env=env,
        subprocess=True,  # a real process: PYTHONPATH must pick the linked copy at start-up
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "left out" not in done.stderr
    [loaded] = tool_messages(server, 0)
    skill = json.loads(loaded["content"])
    assert skill["skill_name"] == "calculator"
    assert skill["documentation"].startswith("# Calculator")


def test_hard_linked_user_skills_are_still_refused(server: ScriptedServer, tmp_path: Path) -> None:
    """The same links outside the bundled folder: the skill is left out, and `/calc`
    says so in one line rather than sending it as text."""
    cache = skill_folder(tmp_path / "cache", "calc", "name: calc\ndescription: Adds.\n")
    (tmp_path / "skills" / "calc").mkdir(parents=True)
    os.link(cache / "SKILL.md", tmp_path / "skills" / "calc" / "SKILL.md")
    done = skillchat("ask", *session_options(server, tmp_path / "skills"), "/calc 1+1")
    assert done.returncode == 2, done.stderr
    assert "/calc: the skill 'calc' is left out: SKILL.md has 2 hard links" in done.stderr
    assert server.completions == []


def test_a_folder_named_like_the_bundled_one_is_not_exempt(tmp_path: Path) -> None:
    from skillchat.hardlinks import hard_links_allowed
    from skillchat.sections import BUNDLED_SKILLS

    assert hard_links_allowed(BUNDLED_SKILLS / "calculator")
    assert hard_links_allowed(BUNDLED_SKILLS)
    assert not hard_links_allowed(str(BUNDLED_SKILLS) + "-copy")
    assert not hard_links_allowed(BUNDLED_SKILLS.parent)
    assert not hard_links_allowed(tmp_path)
