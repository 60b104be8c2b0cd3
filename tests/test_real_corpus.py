"""The 236 real skills in shared/real-skills, against the reference validator skills-ref.

Every skill folder in the corpus (every folder holding a SKILL.md, at any depth,
hidden ones included) must load without a crash, and its strict verdict must match
skills-ref's, except for the disagreements listed here, each with its reason.
Synthetic cases pin down the known skills-ref bugs and our deliberate differences.

`docs/skills-ref-disagreements.md` is generated from this module
(`python tests/test_real_corpus.py`); a test fails when it is out of date, and
another when a disagreement appears that is not explained here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import REAL_SKILLS

from skillchat.skills.registry import discover
from skillchat.skills.validate_paths import validate_paths

REPO = Path(__file__).resolve().parents[1]
CORPUS = REAL_SKILLS
DOC = REPO / "docs" / "skills-ref-disagreements.md"

REASONS = {
    "flow-style": (
        "skills-ref parses with strictyaml, which refuses YAML flow style (`[a, b]`), "
        "although it is plain YAML. skillchat parses YAML with PyYAML, accepts a list "
        "for `allowed-tools` and normalises it to a space-separated string (a warning "
        "in both modes)."
    ),
    "metadata-not-string": (
        "The spec says `metadata` maps strings to strings. skills-ref never checks: it "
        "`str()`s nested lists and maps. skillchat reports each non-string value "
        "(a warning when loading, an error with `--strict`)."
    ),
    "bom": (
        "skills-ref checks `content.startswith('---')` on text read with `utf-8`, not "
        "`utf-8-sig`, so a UTF-8 BOM makes it reject the file. skillchat strips the BOM."
    ),
    "dashes-cut": (
        "skills-ref splits the file on the first `---` *anywhere*, so `---` inside a "
        "value or comment cuts the frontmatter short (here dropping `name`). "
        "skillchat only ends the frontmatter at a whole `---` line."
    ),
    "non-utf8-crash": (
        "skills-ref decodes the whole file with `read_text` and crashes "
        "(UnicodeDecodeError) on any byte that is not UTF-8. skillchat reports bad "
        "bytes in the frontmatter as an error with their line."
    ),
    "non-utf8-body": (
        "Bad bytes in the body crash skills-ref too (see above). skillchat never reads "
        "the body during discovery or validation; the file-access layer refuses a "
        "binary SKILL.md when the skill is used."
    ),
    "yaml-types": (
        "strictyaml keeps every scalar a string, so `name: 123` or `description: true` "
        "are strings to skills-ref. PyYAML reads them as a number or a boolean, and "
        "skillchat requires a string (quote it): the value the author meant is gone "
        "by then (`version: 1.10` reads as `1.1`)."
    ),
    "optional-types": (
        "skills-ref only checks the type of `compatibility`. skillchat also needs "
        "`license` to be a string and `metadata` to be a mapping (`--strict` errors, "
        "load-mode warnings)."
    ),
    "description-strip": (
        "skills-ref counts the description as written, so a block scalar's final "
        "newline makes 1024 characters 1025. skillchat measures the stripped text, "
        "which is what the model gets to see."
    ),
    "size-limit": (
        "skillchat reads at most 64 KiB of frontmatter and rejects more; skills-ref has no limit."
    ),
}

# Real skills on which the strict verdicts differ: local path -> reason.
KNOWN_CORPUS = {
    "github-awesome-copilot/azure-role-selector": "flow-style",
    "github-awesome-copilot/nano-banana-pro-openrouter": "metadata-not-string",
}

OK_FM = b"---\nname: demo\ndescription: Does a thing.\n"
# Synthetic SKILL.md files (in a folder named `demo`): bytes, and the reason the
# verdicts differ, or None where they must agree.
SYNTHETIC: dict[str, tuple[bytes, str | None]] = {
    "UTF-8 BOM": (b"\xef\xbb\xbf" + OK_FM + b"---\n", "bom"),
    "`---` inside a value": (
        b"---\ndescription: before --- after\nname: demo\n---\n",
        "dashes-cut",
    ),
    "bad UTF-8 in the body": (OK_FM + b"---\n\xff\xfe\n", "non-utf8-body"),
    "bad UTF-8 in the frontmatter": (
        b"---\nname: demo\ndescription: caf\xe9\n---\n",
        "non-utf8-crash",
    ),
    "flow-style allowed-tools": (OK_FM + b"allowed-tools: [Read, Grep]\n---\n", "flow-style"),
    "nested metadata": (OK_FM + b"metadata:\n  a:\n    b: c\n---\n", "metadata-not-string"),
    "unquoted number in metadata": (OK_FM + b"metadata:\n  version: 1.0\n---\n", "yaml-types"),
    "boolean description": (b"---\nname: demo\ndescription: true\n---\n", "yaml-types"),
    "license as a list": (OK_FM + b"license:\n  - MIT\n---\n", "optional-types"),
    "1024-char block description": (
        b"---\nname: demo\ndescription: |\n  " + b"x" * 1024 + b"\n---\n",
        "description-strip",
    ),
    "frontmatter over 64 KiB": (OK_FM + b"#" + b"x" * 70_000 + b"\n---\n", "size-limit"),
    "CRLF line ends": (OK_FM.replace(b"\n", b"\r\n") + b"---\r\n", None),
    "blank line before `---`": (b"\n" + OK_FM + b"---\n", None),
    "unknown key": (OK_FM + b"argument-hint: x\n---\n", None),
    "YAML alias": (b"---\nname: &n demo\ndescription: *n\n---\n", None),
    "duplicate key": (OK_FM + b"name: demo\n---\n", None),
    "lowercase skill.md": (OK_FM + b"---\n", None),  # written as skill.md below
}


def verdict_ours(folder: Path, *, strict: bool = True) -> str:
    [report] = validate_paths([folder], strict=strict)
    return "valid" if report.ok else "invalid"


def verdict_reference(folder: Path) -> str:
    from skills_ref import validate

    try:
        return "invalid" if validate(folder) else "valid"
    except Exception as exc:  # skills-ref crashes on some inputs: that is a verdict too
        return f"crash ({type(exc).__name__})"


def corpus_skill_dirs() -> list[Path]:
    found = []
    for parent, _dirs, files in os.walk(CORPUS):
        if "SKILL.md" in files or "skill.md" in files:
            found.append(Path(parent))
    return sorted(found)


def corpus_verdicts() -> dict[str, tuple[str, str, str]]:
    """Local path -> (our load-mode verdict, our strict verdict, skills-ref's)."""
    return {
        folder.relative_to(CORPUS).as_posix(): (
            verdict_ours(folder, strict=False),
            verdict_ours(folder),
            verdict_reference(folder),
        )
        for folder in corpus_skill_dirs()
    }


def disagreements_of(verdicts: dict[str, tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    return {path: (ours, ref) for path, (_, ours, ref) in verdicts.items() if ours != ref}


def synthetic_verdicts(root: Path) -> dict[str, tuple[str, str]]:
    result = {}
    for i, (case, (data, _)) in enumerate(SYNTHETIC.items()):
        folder = root / str(i) / "demo"
        folder.mkdir(parents=True)
        filename = "skill.md" if "skill.md" in case else "SKILL.md"
        (folder / filename).write_bytes(data)
        result[case] = (verdict_ours(folder), verdict_reference(folder))
    return result


def render_doc(
    verdicts: dict[str, tuple[str, str, str]], synthetic: dict[str, tuple[str, str]]
) -> str:
    corpus = disagreements_of(verdicts)
    loose_only = sum(1 for load, strict, _ in verdicts.values() if load != strict)
    lines = [
        "# Where `skillchat skills validate --strict` and skills-ref disagree",
        "",
        "Generated by `python tests/test_real_corpus.py`; `tests/test_real_corpus.py`",
        "fails when this file is out of date or a disagreement has no reason below.",
        "Reference: skills-ref 0.1.1 (`skills_ref.validate`). Verdicts are strict mode.",
        "",
        f"## The real corpus ({len(verdicts)} public skills, the project's shared test data)",
        "",
        "| skill | skillchat | skills-ref | why |",
        "|---|---|---|---|",
    ]
    for path, (ours, theirs) in sorted(corpus.items()):
        lines.append(f"| `{path}` | {ours} | {theirs} | {KNOWN_CORPUS.get(path, '?')} |")
    lines += [
        "",
        "## Synthetic cases",
        "",
        "Made-up SKILL.md files that pin down each known difference, and a few",
        "hostile inputs on which both agree.",
        "",
        "| case | skillchat | skills-ref | why |",
        "|---|---|---|---|",
    ]
    for case, (ours, theirs) in synthetic.items():
        lines.append(f"| {case} | {ours} | {theirs} | {SYNTHETIC[case][1] or 'agree'} |")
    lines += ["", "## Reasons", ""]
    lines += [f"- **{key}**: {text}" for key, text in REASONS.items()]
    lines += [
        "",
        "## Same rule, different reading",
        "",
        "- Skill names: like skills-ref, skillchat counts any Unicode letter or digit",
        "  (`str.isalnum`) that is lowercase after NFKC, so `café` or `数据` are valid.",
        "  Readings of the spec that allow only ASCII `a-z0-9` would reject them.",
        "- Like skills-ref, the name is stripped of surrounding spaces before the rules.",
        "- In load mode (discovery), unknown keys and odd optional fields are only",
        f"  warnings: {loose_only} corpus skills fail `--strict` but still load, mostly",
        "  for an unknown key such as `argument-hint` (where skills-ref agrees with",
        "  `--strict`).",
        "",
    ]
    return "\n".join(lines)


pytestmark = pytest.mark.usefixtures("shared")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, tuple[str, str, str]]:
    return corpus_verdicts()


def test_every_corpus_skill_loads_without_a_crash() -> None:
    folders = corpus_skill_dirs()
    assert len(folders) == 236
    parents = sorted({folder.parent for folder in folders})
    registry = discover(parents, max_skills=10_000)
    assert len(registry.skills) + len(registry.excluded) == len(folders)
    assert registry.problems == ()
    for report in validate_paths(folders):
        assert report.name, report  # every one has a readable name, even if invalid


# What discovery leaves out of the corpus, by default and with `[skills] strict = true`.
# By default only names taken twice: a long description or a name unlike its folder
# loads (under the folder's name) as Claude Code loads it.
LEFT_OUT_BY_DEFAULT = {
    "github-awesome-copilot/webapp-testing": "shadowed",
    "openai-skills/.system/skill-creator": "shadowed",
}
LEFT_OUT_WHEN_STRICT = {
    **LEFT_OUT_BY_DEFAULT,
    "anthropics-skills/claude-api": "invalid",  # a 1,068-character description
    "vercel-labs-agent-skills/composition-patterns": "invalid",
    "vercel-labs-agent-skills/react-best-practices": "invalid",
    "vercel-labs-agent-skills/react-native-skills": "invalid",
    "vercel-labs-agent-skills/react-view-transitions": "invalid",
}
# Nested qdrant skills whose names are not their folders' (strict leaves them out).
QDRANT_STRICT_ONLY = 15


@pytest.mark.parametrize("strict", [False, True])
def test_what_discovery_leaves_out(strict: bool) -> None:
    parents = sorted({folder.parent for folder in corpus_skill_dirs()})
    registry = discover(parents, max_skills=10_000, strict=strict)
    left = {e.path.relative_to(CORPUS).as_posix(): e.reason for e in registry.excluded}
    qdrant = {path for path in left if "/qdrant-" in path}
    assert len(qdrant) == (QDRANT_STRICT_ONLY if strict else 0)
    expected = LEFT_OUT_WHEN_STRICT if strict else LEFT_OUT_BY_DEFAULT
    assert {p: r for p, r in left.items() if p not in qdrant} == expected


def test_load_mode_accepts_all_that_skills_ref_accepts(
    verdicts: dict[str, tuple[str, str, str]],
) -> None:
    refused = [path for path, (load, _, ref) in verdicts.items() if ref == "valid" != load]
    assert refused == []


def test_every_disagreement_is_explained(verdicts: dict[str, tuple[str, str, str]]) -> None:
    disagreements = disagreements_of(verdicts)
    unexplained = sorted(set(disagreements) - set(KNOWN_CORPUS))
    assert not unexplained, f"new disagreements with skills-ref: {unexplained}"
    stale = sorted(set(KNOWN_CORPUS) - set(disagreements))
    assert not stale, f"listed disagreements that no longer happen: {stale}"


def test_synthetic_cases_behave_as_documented(tmp_path: Path) -> None:
    for case, (ours, theirs) in synthetic_verdicts(tmp_path).items():
        differ = SYNTHETIC[case][1] is not None
        assert (ours != theirs) == differ, (case, ours, theirs)


def test_the_doc_matches(verdicts: dict[str, tuple[str, str, str]], tmp_path: Path) -> None:
    expected = render_doc(verdicts, synthetic_verdicts(tmp_path))
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/skills-ref-disagreements.md is out of date: run python tests/test_real_corpus.py"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(render_doc(corpus_verdicts(), synthetic_verdicts(Path(tmp))))
    print(f"wrote {DOC}")
