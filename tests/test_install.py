"""skillchat as a user installs it: a real wheel in a fresh venv, run from a folder
outside the repository, finds its bundled skills and uses them.

The wheel is built from a copy of the sources (so no `build/` lands in the repo) with
`pip wheel --no-build-isolation --no-index`: nothing is downloaded, setuptools and
wheel come from the test extras. It is installed twice, as users do: by pip, and by
uv (from the test extras, offline). Each fresh venv gets that wheel only (`--no-deps`);
its dependencies (litellm, openai, rich...) are the test environment's, reached
through one `.pth` line, so CI does not download them a second time. A `.pth` line
adds a folder to `sys.path` without running the `.pth` files inside it, so the
test environment's editable skillchat stays out: the code that runs is the wheel's,
and a bundled file missing from the package data fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from chat_helpers import sent
from helpers import home_env
from openai_server import ScriptedServer, reply

REPO = Path(__file__).resolve().parents[1]


def clean_env(home: Path | None = None) -> dict[str, str]:
    """The test's environment without PYTHONPATH: a source tree on it (a developer's,
    with its egg-info) would make pip see skillchat as installed already, and the
    wheel's code not run. Read when called, not at import: the conftest points HOME and
    the XDG folders into a private folder per test. The module's fixtures run before
    that, so they pass a `home` of their own: nothing here sees the real one."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return env if home is None else {**env, **home_env(home)}


BUNDLED = ["calculator", "commit-message"]  # and the fixture, hidden unless asked for


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of this tree, offline."""
    root = tmp_path_factory.mktemp("build")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    # As a checkout has them: the bundled skills in the top-level skills/, and
    # skillchat/bundled_skills a link to it, which the build must follow.
    shutil.copytree(REPO / "skillchat", source / "skillchat", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copytree(REPO / "skills", source / "skills")
    assert (source / "skillchat" / "bundled_skills").is_symlink()
    wheels = root / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "--no-index", "-q", "-w", str(wheels), str(source)],
                   env=clean_env(root / "home"),
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    [built] = wheels.glob("skillchat-*.whl")
    return built


@pytest.fixture(scope="module", params=["pip", "uv"])
def installed(request: pytest.FixtureRequest, wheel: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Path:  # fmt: skip
    """The `skillchat` script of a fresh venv holding the wheel, installed by pip or by
    uv. uv installs a wheel's files as hard links into its cache, as `uv tool install`,
    `uv pip install` and pipx's uv backend do (its cache is put beside the venv, on the
    same filesystem, so it links here as it does in a user's home)."""
    root = tmp_path_factory.mktemp(f"install-{request.param}")
    env_dir = root / "venv"
    python = env_dir / "bin" / "python"
    if request.param == "pip":
        venv.create(env_dir, with_pip=False)
        install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    else:
        uv = [sys.executable, "-m", "uv", "--cache-dir", str(root / "uv-cache"), "--offline"]
        subprocess.run([*uv, "venv", "-q", "--python", sys.executable, str(env_dir)],
                       env=clean_env(root / "home"), check=True, capture_output=True,
                       timeout=300)  # fmt: skip
        install = [*uv, "pip", "install", "-q", "--python", str(python), "--link-mode=hardlink"]
    subprocess.run([*install, "--no-deps", "--no-index", str(wheel)], env=clean_env(root / "home"),
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    where = subprocess.run([str(python), "-c", ask], check=True, capture_output=True, text=True)
    purelib = Path(where.stdout.strip())
    skill_md = purelib / "skillchat" / "bundled_skills" / "calculator" / "SKILL.md"
    assert (skill_md.stat().st_nlink > 1) == (request.param == "uv")  # as uv really installs
    (purelib / "test_env_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir / "bin" / "skillchat"


def run(script: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), *args], cwd=cwd, env=clean_env(), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip


def test_the_installed_wheel_lists_its_bundled_skills(installed: Path, tmp_path: Path) -> None:
    done = run(installed, "skills", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    skills = json.loads(done.stdout)["skills"]
    assert [s["name"] for s in skills] == BUNDLED and all(s["bundled"] for s in skills)
    venv_dir = installed.parent.parent
    assert all(Path(s["path"]).is_relative_to(venv_dir) for s in skills)  # not the repo's
    piped = run(installed, "skills", "list", cwd=tmp_path)
    assert [line.split("\t")[0] for line in piped.stdout.splitlines()] == BUNDLED
    fixtures = tmp_path / "fixtures.toml"
    fixtures.write_text("[skills]\nfixtures = true\n", encoding="utf-8")
    shown = run(installed, "skills", "show", "skills-system-validation", "--file",
                "references/REFERENCE.md", "--config", str(fixtures), cwd=tmp_path)  # fmt: skip
    assert shown.returncode == 0 and shown.stdout.strip(), shown.stderr


def test_the_installed_wheel_answers_with_a_bundled_skill(
    installed: Path, tmp_path: Path, server: ScriptedServer
) -> None:
    server.script(reply("17% of 230 is 39.1"))
    args = ["ask", "--model", "openai/test-model", "--api-base", server.base_url]
    done = run(installed, *args, "/calculator what is 17% of 230", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "17% of 230 is 39.1", done.stderr
    activated = json.loads(sent(server)[-1]["content"])
    assert activated["skill_name"] == "calculator"
    assert activated["documentation"].startswith("# Calculator")


def test_the_installed_wheel_shows_a_new_user_the_way_forward(
    installed: Path, tmp_path: Path
) -> None:
    """No key: the keyless way (`--local`). `--local` without llama.cpp's server: the
    one line that installs it into this environment, as it was made: into uv's venv
    with `uv pip install --python` (uv makes venvs without pip), into pip's with its
    python's pip; the pinned packages, never an index's `skillchat[local]`."""
    done = run(installed, "ask", "hi", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "OPENAI_API_KEY is not set" in done.stderr and "--local" in done.stderr
    blocker = tmp_path / "block"  # as if xllamacpp were not installed
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['xllamacpp'] = None\n")
    done = subprocess.run([str(installed), "ask", "--local", "hi"], cwd=tmp_path,
                          env={**clean_env(), "PYTHONPATH": str(blocker)}, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    python = installed.parent / "python"
    pins = "'xllamacpp==2026.10.11549' 'huggingface_hub==2.4.0'"
    by_uv = installed.parent.parent.parent.name.startswith("install-uv")
    command = (
        f"uv pip install --python {python} {pins}" if by_uv else f"{python} -m pip install {pins}"
    )
    needs = "the local model needs llama.cpp's server (skillchat's [local] extra)"
    assert done.stderr.strip() == f"skillchat: error: {needs}: {command}"
