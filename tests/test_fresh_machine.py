"""The README's two set-up commands, exactly as written, as a new user on a fresh
machine: a user with an empty home (as root: a user id of its own, with no name and
no groups), Debian's own Python (`/usr/bin/python3`, which refuses `pip install`
outside a virtual environment), a fresh clone, no API key.

What stands in for the internet: the packages come from a folder of wheels
(`PIP_NO_INDEX` and `PIP_FIND_LINKS`, as a mirror would be set up), downloaded once
from the real index and kept between runs; `--local`'s 1.1 GB model comes from a
stand-in hub on 127.0.0.1 serving the real-model tests' SmolLM2 file under its name
(`HF_ENDPOINT`, tests/hub_server.py). Of the second command, the install part runs
(its test run is what CI itself is).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import installing, unavailable
from hub_server import serving_as_default_model

REPO = Path(__file__).resolve().parents[1]
DEBIAN_PYTHON = "/usr/bin/python3"
pytestmark = pytest.mark.real_model  # it runs the local model, and once per run is enough


def readme_commands() -> list[str]:
    """The two lines of the README's first `sh` block."""
    text = (REPO / "README.md").read_text()
    block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 2, lines
    return lines


@pytest.fixture(scope="module")
def wheels(pytestconfig: Any) -> Path:
    """Every wheel the two installs need, for Debian's Python: downloaded with its own
    pip from the real index once per pyproject.toml, then kept."""
    if not Path(DEBIAN_PYTHON).exists():
        pytest.skip(f"no {DEBIAN_PYTHON}: this test is of a Debian machine's own Python")
    key = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()[:12]
    with installing(pytestconfig, f"fresh-machine-wheels-{key}") as folder:
        done = folder / "downloaded"
        if not done.exists():
            tools = folder / "pip-venv"
            made = subprocess.run([DEBIAN_PYTHON, "-m", "venv", str(tools)],
                                  capture_output=True, text=True)  # fmt: skip
            if made.returncode != 0:
                unavailable(f"{DEBIAN_PYTHON} cannot make a venv (python3-venv?): {made.stderr}")
            fetched = subprocess.run(
                [str(tools / "bin" / "pip"), "download", "-q", "-d", str(folder / "wheels"),
                 ".[test,local]", "setuptools>=68", "wheel"],
                cwd=REPO, capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            if fetched.returncode != 0:
                unavailable(f"the wheels could not be downloaded: {fetched.stderr[-500:]}")
            done.touch()
        return folder / "wheels"


def unused_uid() -> int:
    """A user id no account has (root makes the new user from it)."""
    uid = 61000 + os.getpid() % 1000
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


@pytest.fixture
def machine(tmp_path: Path, wheels: Path) -> Iterator[tuple[Path, list[str]]]:
    """A fresh clone and the wheels in a folder the new user owns, and the prefix that
    runs a command as that user. Root: a new user id, in a folder under the system's
    temporary folder (pytest's own is root's alone), removed afterwards. Anyone else:
    themselves."""
    if os.getuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("no setpriv to run the commands as a new user")
        uid = unused_uid()
        root = Path(tempfile.mkdtemp(prefix="skillchat-fresh-", dir="/tmp"))
        as_user = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    else:
        uid, root, as_user = os.getuid(), tmp_path, []
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(root / "skillchat")], check=True)
        (root / "home").mkdir()
        if os.getuid() == 0:
            for path in [root, *root.rglob("*")]:
                os.lchown(path, uid, uid)
        # Where the new user can read them: hard links (root's, world-readable), not
        # 212 MB copied; not chowned, which would change the cached files themselves.
        shutil.copytree(wheels, root / "wheels", copy_function=os.link)
        yield root, as_user
    finally:
        if root != tmp_path:
            shutil.rmtree(root, ignore_errors=True)


def test_the_readmes_commands_work_as_written_for_a_new_user(
    machine: tuple[Path, list[str]], smollm2: Path
) -> None:
    root, as_user = machine
    first, second = readme_commands()
    env = {
        "HOME": str(root / "home"),
        "PATH": "/usr/bin:/bin",  # Debian's python3, not a developer's
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(root / "wheels"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        # The machine's config, outside the new user's home: a short reply and a small
        # context keep the 135M model (standing in for the 1.5B one) from writing its
        # whole share of the window, minutes on a loaded CPU.
        "SKILLCHAT_CONFIG": str(root / "machine.toml"),
    }
    (root / "machine.toml").write_text("max_tokens = 48\n[local]\ncontext_max = 4096\n")
    with serving_as_default_model(smollm2) as hub:
        done = subprocess.run(
            [*as_user, "env", "-i", *(f"{k}={v}" for k, v in env.items()),
             f"HF_ENDPOINT={hub.url}", "bash", "-c", first],
            cwd=root / "skillchat", capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "downloading the local model" in done.stderr and "GB" in done.stderr
    assert "get_skill" in done.stderr and "calculator" in done.stderr  # the skill's card
    assert done.stdout.strip() or "output limit" in done.stderr
    install = second.split(" && python -m pytest", 1)[0]
    assert install != second, second
    installed = subprocess.run(
        [*as_user, "env", "-i", *(f"{k}={v}" for k, v in env.items()), "bash", "-c",
         f". .venv/bin/activate && {install} && python -c 'import pytest, xdist, pyte'"],
        cwd=root / "skillchat", capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
