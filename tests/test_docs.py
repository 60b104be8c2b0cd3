"""The README and the pages of docs/: every relative link reaches a file, every
`#anchor` a heading (by GitHub's slug) or an explicit `<a id>`, and the README's first
code block holds the two commands CI runs from it."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from helpers import skillchat
from openai_server import ScriptedServer, reply

from skillchat.config import BUNDLED_FIXTURES
from skillchat.sections import BUNDLED_SKILLS

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(`{3,}|~{3,})")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fence = [], ""
    for line in text.splitlines():
        mark = FENCE.match(line)
        if mark and (not fence or mark.group(1).startswith(fence)):
            fence = "" if fence else mark.group(1)
        elif not fence:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose(page.read_text(encoding="utf-8")):
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    text = "\n".join(prose(page.read_text(encoding="utf-8")))
    text = re.sub(r"`[^`\n]*`", "", text)  # a link in inline code is not a link
    return LINK.findall(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / unquote(path)).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and unquote(anchor) not in anchors(file):
            broken.append(f"{target}: no heading or <a id> '{anchor}'")
    assert broken == [], f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_docs_pages_are_linked_from_the_readme() -> None:
    linked = {
        (REPO / t.partition("#")[0]).resolve() for t in links(REPO / "README.md") if t[:1] != "#"
    }
    missing = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert missing == []


def test_the_readme_starts_with_what_skillchat_is_and_its_two_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^```\w*\n(.*?)^```", text, re.S | re.M)
    assert first is not None
    assert first.group(1).splitlines() == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install '.[local]' "
        '&& skillchat ask --local "/calculator what is 17% of 230"',
        "pip install -e '.[test,local]' && python -m pytest -n auto",
    ]
    assert "skillchat is a terminal chat runner" in text[: first.start()]
    # CI runs that same command as root, the real model's tests one at a time beside
    # the rest (and, leaving the real model out, as a user, who runs the checks of the
    # source text for both).
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert (
        "root_job() { python -m pytest -n auto "
        '-m "not ($ROOT_ONLY${run_as_user:+ or source or once})"; }' in ci
    )
    assert 'python -m pytest -n auto -m "not ($4)"' in ci  # the user job's, $4: $ROOT_ONLY
    assert 'model_job() { nice -n -5 python -m pytest -m "$ROOT_ONLY"; }' in ci


def test_the_slug_is_githubs() -> None:
    assert slug("Workspace files: `--workspace`, `@path` and attachments") == (
        "workspace-files---workspace-path-and-attachments"
    )
    assert slug("`[run] allowed_tools`") == "run-allowed_tools"


def test_the_readme_banner_counts_the_skills_a_fresh_install_shows() -> None:
    """The REPL's banner in the README, run from a folder with no skills of its own,
    counts the bundled skills a user gets: the test fixture among them is hidden."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    [count] = re.findall(r"^skillchat \d+\.\d+\.\d+ · [^·]+ · (\d+) skills? ·", text, re.M)
    skills = [p.parent.name for p in BUNDLED_SKILLS.glob("*/SKILL.md")]
    shown = [name for name in skills if name not in BUNDLED_FIXTURES]
    assert int(count) == len(shown)


# ask's closing line on stderr: usage, cost when known, the chat's id.
USAGE_LINE = re.compile(r"^tokens: [\d,]+ in \+ [\d,]+ out = [\d,]+( · \$\d+\.\d{4})? · chat \w+$")


def test_the_readme_tours_usage_line_is_the_one_ask_prints(
    server: ScriptedServer, tmp_path: Path
) -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    tour = text.split("## A 30-second tour", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert USAGE_LINE.match(tour.splitlines()[-1]), tour
    server.script(reply("17% of 230 = 39.1"))
    done = skillchat("ask", "--model", "openai/test-model", "--api-base", server.base_url,
                     "/calculator what is 17% of 230", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert USAGE_LINE.match(done.stderr.splitlines()[-1]), done.stderr


def test_evals_sample_report_covers_the_shipped_example_not_the_hidden_fixture() -> None:
    """docs/eval.md's sample is of `examples/eval_queries.json` as shipped: its rows are
    the skills the example names (the hidden fixture is in neither)."""
    import json

    text = (REPO / "docs" / "eval.md").read_text(encoding="utf-8")
    sample = text.split("```\nmodel: openai/test-model\n", 1)[1].split("```", 1)[0]
    rows = set(re.findall(r"^│ ([\w-]+) +│", sample, re.M))
    example = json.loads((REPO / "examples" / "eval_queries.json").read_text(encoding="utf-8"))
    assert rows == {entry["skill"] for entry in example}
    assert not rows & BUNDLED_FIXTURES


def test_the_docs_name_no_folder_a_clone_lacks() -> None:
    """The shared test data is beside the repository in CI, not in it: only
    docs/tests.md, which says so, names its folder."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        if doc.name == "tests.md":
            continue
        text = doc.read_text(encoding="utf-8")
        assert not re.search(r"shared/real-", text), doc.name


# Words of how the project's team worked, not of skillchat: a reader of the docs has no
# "round", "lead" or branch, and "main" is no name for the version before a change.
INTERNAL = re.compile(
    r"\b(?:this|last|that) round\b|\bthe lead\b|\bthe brief\b|\bengineers?\b|\b(?:last )?stop \d+\b"
    r"|\bthe last stop\b|\bissue \d+\b|\bh-[a-z]+\b|\bmain's\b|\bmain at [0-9a-f]{7}"
    r"|\b(?:vs|beside|against|than|on|over) main\b|\bmain:? \d|`main`|\bshared machine\b"
    r"|/work/",
    re.I,
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_docs_use_no_internal_wording(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = sorted({m.group(0) for m in INTERNAL.finditer(text)})
    assert found == [], f"{page.relative_to(REPO)}: {found}"
