"""The user cache's files (skillchat/safe_io/user_cache.py), written by what writes
them in use: two processes of two threads each writing at once never leave a torn or
missing file nor lose each other's entries, and a corrupt file is ignored and
written afresh, private.

Each writer is a process of its own, as two `skillchat` commands at once are."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from git_repos import make_repo, skill_md, url
from helpers import skillchat

from skillchat.sandbox.detect import probe

# Tells 2 x `count` left-out states from two threads, each state a skills folder of
# its own (skills/left_out_seen.py remembers one fingerprint per folder set).
TELL = """
import sys, threading
from pathlib import Path
from skillchat.skills.left_out_seen import first_time
from skillchat.skills.registry import Registry

tag, count = sys.argv[1], int(sys.argv[2])

def tell(thread):
    for i in range(count):
        assert first_time(Registry(skills={}, directories=(Path(f"/{tag}/{thread}/{i}"),)))

threads = [threading.Thread(target=tell, args=(t,)) for t in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""

PROBE = """
from skillchat.sandbox.detect import probe
print(probe().available)
"""


def cache(name: str) -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "skillchat" / name


def test_two_processes_of_two_threads_never_tear_or_lose_the_file() -> None:
    count = 60
    path = cache("left-out.json")
    writers = [
        subprocess.Popen([sys.executable, "-c", TELL, tag, str(count)], stderr=subprocess.PIPE)
        for tag in ("a", "b")
    ]
    reads = 0
    while any(w.poll() is None for w in writers) or not reads:
        try:
            text = path.read_text()
        except FileNotFoundError:
            assert not reads, "the file went missing after it was written"
            time.sleep(0.001)  # not a wait for a state: leaves the writers the cores
            continue
        assert isinstance(json.loads(text), dict), text  # never half a file
        reads += 1
    for writer in writers:
        _, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err.decode()
    told = json.loads(path.read_text())
    assert len(told) == 2 * 2 * count  # no writer lost another's entries
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("junk", [b"{not json", b"", b"[" * 100_000, b'["a list"]', b"\xff"])
def test_a_corrupt_cache_file_is_ignored_and_written_afresh(junk: bytes) -> None:
    path = cache("left-out.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(junk)
    done = subprocess.run(
        [sys.executable, "-c", TELL, "x", "1"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == ""
    assert sorted(json.loads(path.read_text())) == ["/x/0/0", "/x/1/0"]


def test_a_corrupt_sandbox_answer_is_probed_again_and_rewritten() -> None:
    if not probe().available:
        pytest.skip(f"no sandbox here: {probe().reason}")
    path = cache("sandbox.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    for junk in ("{not json", '{"key": 3}', "[]"):
        path.write_text(junk)
        done = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60
        )
        assert done.stdout == "True\n", done.stderr
        assert set(json.loads(path.read_text())) == {"key", "detail"}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("junk", ["{not json", "[" * 100_000, '{"x": 1}'])
def test_a_corrupt_lock_fingerprint_cache_is_hashed_again_and_rewritten(
    tmp_path: Path, junk: str
) -> None:
    repo = make_repo(tmp_path / "src", {"pdf/SKILL.md": skill_md("pdf")})
    assert skillchat("skills", "add", url(repo), "--yes").returncode == 0
    path = cache("lock-stat.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junk)
    listed = skillchat("skills", "list", subprocess=True)  # a start: the file read afresh
    assert listed.returncode == 0 and "pdf" in listed.stdout, listed.stderr
    assert "changed since installed" not in listed.stderr and "Traceback" not in listed.stderr
    installed = Path(os.environ["HOME"]) / ".agents" / "skills" / "pdf"
    assert set(json.loads(path.read_text())[str(installed)]) == {"stat", "digest"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
