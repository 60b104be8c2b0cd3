"""The frontmatter parse cache (skills/frontmatter_cache.py): a start whose skills did
not change imports no YAML, and what a skill's metadata is never depends on it.

Each run is a process of its own: the subject is what a fresh start reads from the
cache file and what it imports (this interpreter has PyYAML loaded already)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from helpers import session_options
from openai_server import ScriptedServer, reply

REPO = Path(__file__).resolve().parents[1]

DISCOVER = """
import json, sys
from skillchat.skills.registry import discover
registry = discover([sys.argv[1]])
skills = {n: [s.description, repr(s.frontmatter)] for n, s in registry.skills.items()}
problems = [p.message for e in registry.excluded for p in e.problems]
print(json.dumps({"yaml": "yaml" in sys.modules, "skills": skills, "problems": problems}))
"""

ASK = """
import sys
from skillchat.cli.app import run
code = run(sys.argv[1:])
print(code, "yaml" in sys.modules, file=sys.stderr)
"""

SKILL = """---
name: tally
description: {description}
metadata:
  version: "1.0"
  tags: [a, "b"]
ratio: 0.5
count: 3
flag: true
nothing: null
{extra}---
Body.
"""


def cache_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "skillchat" / "frontmatter.json"


def run_discover(skills: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", DISCOVER, str(skills)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def write_skill(skills: Path, description: str, extra: str = "") -> Path:
    folder = skills / "tally"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(SKILL.format(description=description, extra=extra))
    return path


def test_a_warm_ask_imports_no_yaml(server: ScriptedServer) -> None:
    server.script(reply("one"), reply("two"))
    skills = REPO / "skillchat" / "bundled_skills"
    argv = [sys.executable, "-c", ASK, "ask", *session_options(server, skills), "hi"]
    cold, warm = (
        subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        for _ in range(2)
    )
    assert cold.stdout == "one\n" and cold.stderr.splitlines()[-1] == "0 True", cold.stderr
    assert warm.stdout == "two\n" and warm.stderr.splitlines()[-1] == "0 False", warm.stderr
    assert server.completions[0].body["messages"] == server.completions[1].body["messages"]
    path = cache_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_metadata_is_the_same_from_the_cache(tmp_path: Path) -> None:
    """Types included: 0.5 stays a float, true a bool, "1.0" a string; a date (which
    JSON cannot carry) keeps the whole frontmatter out of the cache."""
    write_skill(tmp_path, "Counts things.", extra="when: 2024-01-02\n")
    for _ in range(2):
        dated = run_discover(tmp_path)
        assert dated["yaml"] and "'when': '2024-01-02'" in dated["skills"]["tally"][1]
    assert not cache_file().exists()  # nothing JSON carries exactly: nothing kept
    write_skill(tmp_path, "Counts things.")
    cold, warm = run_discover(tmp_path), run_discover(tmp_path)
    assert cold["yaml"] and not warm["yaml"]
    assert warm["skills"] == cold["skills"]
    assert "'ratio': 0.5, 'count': 3, 'flag': True, 'nothing': None" in warm["skills"]["tally"][1]


def test_an_edit_of_the_same_size_and_time_is_read_again(tmp_path: Path) -> None:
    """The cache is keyed by the frontmatter's text: a SKILL.md rewritten to the same
    size with its mtime put back (to the nanosecond) still gives its new metadata."""
    path = write_skill(tmp_path, "Counts apples.")
    before = path.stat()
    assert run_discover(tmp_path)["skills"]["tally"][0] == "Counts apples."
    write_skill(tmp_path, "Counts prunes.")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert run_discover(tmp_path)["skills"]["tally"][0] == "Counts prunes."


def test_a_broken_cache_is_ignored_and_written_again(tmp_path: Path) -> None:
    write_skill(tmp_path, "Counts things.")
    cache = cache_file()
    cache.parent.mkdir(parents=True)
    for junk in ("{not json", '{"version": 1, "entries": {"x": 3}}', '["a list"]', ""):
        cache.write_text(junk)
        found = run_discover(tmp_path)
        assert found["skills"]["tally"][0] == "Counts things." and found["problems"] == []
        assert json.loads(cache.read_text())["version"] == 1
    # An entry that is not what it claims (a hand edit) is parsed again, not trusted.
    doc = json.loads(cache.read_text())
    [text] = doc["entries"]
    doc["entries"][text] = json.dumps(["not a mapping", {}])
    cache.write_text(json.dumps(doc))
    assert run_discover(tmp_path)["skills"]["tally"][0] == "Counts things."
    cache.unlink()
    cache.mkdir()  # unreadable and unwritable: discovery goes on without it
    found = run_discover(tmp_path)
    assert found["yaml"] and found["skills"]["tally"][0] == "Counts things."
    assert found["problems"] == []


def test_a_frontmatter_error_is_never_cached(tmp_path: Path) -> None:
    folder = tmp_path / "tally"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: tally\nname: again\n---\n")
    for _ in range(2):
        found = run_discover(tmp_path)
        assert found["yaml"] and found["problems"] == ["YAML error at line 3: duplicate key 'name'"]
