"""The install step against real uv and bubblewrap, the index switched off or made
to fail: refused declarations, wheels only, a `.pth` that must not run on the host,
a hung or failing index, the size cap, two installs of one set at once, a crash
mid-install, a damaged environment, and `skillchat skills deps`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from envs_helpers import local_index, write_sdist, write_wheel
from helpers import closed_port, one_line_error, skill_folder, skillchat, wait_for, write_files
from sandbox_helpers import require_sandbox

from skillchat.errors import InstallFailed, RefusedDeclaration
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.envs.declared import declaration, python_satisfies
from skillchat.sandbox.envs.install import InstallLimits, ensure
from skillchat.sandbox.envs.store import EnvStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheels"
    write_wheel(folder, "tinypkg")
    local_index(monkeypatch, folder)
    return folder


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("-e .", "editable"),
        ("--editable=../x", "editable"),
        ("git+https://example.com/x.git", "not URLs or version control"),
        ("https://example.com/x-1.0.whl", "not URLs or version control"),
        ("file:../pkg", "not URLs or version control"),
        ("./vendor/pkg", "a path or direct reference"),
        ("pkg @ https://example.com/pkg.whl", "not URLs"),
        ("pkg.whl", "a file, not a package name"),
        ("--index-url https://evil.example/simple", "only the index the user configured"),
        ("--extra-index-url https://evil.example/simple", "only the index the user configured"),
        ("-f /tmp/wheels", "only the index the user configured"),
        ("--trusted-host evil.example", "certificate checks stay on"),
        ("-r other.txt", "includes another file"),
        ("--install-option=--prefix=/", "options are not accepted"),
        ("pkg ==", "not a requirement"),
    ],
)
def test_every_unsafe_line_is_refused_by_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    root = tmp_path / "demo"
    write_files(root, {"scripts/x.py": "", "scripts/requirements.txt": f"ok>=1\n{line}\n"})
    with pytest.raises(RefusedDeclaration) as caught:
        declaration("demo", root, root / "scripts" / "x.py")
    message = str(caught.value)
    assert message.startswith("/skills/demo/scripts/requirements.txt:2: `")
    assert why in message and "\n" not in message


def test_declarations_in_order_and_the_override_refused_too(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    write_files(
        root,
        {
            "scripts/a.py": '# /// script\n# requires-python = ">=3.9"\n'
            "# dependencies = [\"alpha[x]>=1,<3 ; python_version >= '3'\"]\n# ///\n",
            "scripts/b.py": "",
            "requirements.txt": "gamma==2.*\n",
        },
    )
    a = declaration("demo", root, root / "scripts" / "a.py", ("extra1",))
    assert a.packages[0].startswith("alpha[x]") and a.packages[1] == "extra1"
    assert a.requires_python == ">=3.9"
    assert a.sources == ("/skills/demo/scripts/a.py (# /// script)", "config [packages] demo")
    b = declaration("demo", root, root / "scripts" / "b.py")
    assert b.packages == ("gamma==2.*",) and b.sources == ("/skills/demo/requirements.txt",)
    with pytest.raises(RefusedDeclaration, match=r"config \[packages\] demo: `git\+https"):
        declaration("demo", root, None, ("git+https://x/y",))
    assert python_satisfies((3, 11, 2), ">=3.9, <4")
    assert not python_satisfies((3, 11, 2), ">=3.12")


def test_an_sdist_only_package_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools
) -> None:
    folder = tmp_path / "sdists"
    write_sdist(folder, "buildme")
    local_index(monkeypatch, folder)
    store = EnvStore(tmp_path / "envs")
    with pytest.raises(InstallFailed) as caught:
        ensure(store, ("buildme",), tools)
    assert "buildme" in str(caught.value) and "only wheels" in str(caught.value)
    assert [p.name for p in store.root.iterdir()] == ["locks"]  # nothing half-made, no cache


def test_a_pth_file_never_runs_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools
) -> None:
    marker = tmp_path / "pth-ran"
    folder = tmp_path / "wheels"
    hook = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
    write_wheel(folder, "hooked", extra_files={"hooked.pth": hook})
    local_index(monkeypatch, folder)
    record, made = ensure(EnvStore(tmp_path / "envs"), ("hooked",), tools)
    assert made and record.installed[0]["name"] == "hooked"
    assert not marker.exists()


def test_a_hung_index_ends_with_a_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools
) -> None:
    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        index = f"http://127.0.0.1:{listener.getsockname()[1]}/simple"
        monkeypatch.setenv("UV_INDEX_URL", index)
        monkeypatch.delenv("UV_FIND_LINKS", raising=False)
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        store = EnvStore(tmp_path / "envs")
        with pytest.raises(InstallFailed) as caught:
            ensure(store, ("tinypkg",), tools, limits=InstallLimits(http_timeout_s=1))
    assert "installing tinypkg failed" in str(caught.value)
    assert "timed out" in str(caught.value) or "timeout" in str(caught.value).lower()
    assert not list(store.root.glob(".tmp-*"))


def test_a_failing_index_ends_with_a_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools
) -> None:
    monkeypatch.setenv("UV_INDEX_URL", f"http://127.0.0.1:{closed_port()}/simple")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(InstallFailed, match=r"installing tinypkg failed: .*127\.0\.0\.1"):
        ensure(EnvStore(tmp_path / "envs"), ("tinypkg",), tools)


def test_the_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools) -> None:
    folder = tmp_path / "wheels"
    big = {f"bigpkg/data{i}.txt": os.urandom(400_000).hex() for i in range(2)}
    write_wheel(folder, "bigpkg", extra_files=big)
    local_index(monkeypatch, folder)
    store = EnvStore(tmp_path / "envs")
    with pytest.raises(InstallFailed, match=r"over the 1 MB cap"):
        ensure(store, ("bigpkg",), tools, limits=InstallLimits(max_mb=1))
    assert [p.name for p in store.root.iterdir()] == ["locks"]
    # What fits still installs: the bound is the cap, not less.
    write_wheel(folder, "fits", extra_files={"fits/data.txt": os.urandom(350_000).hex()})
    record, made = ensure(store, ("fits",), tools, limits=InstallLimits(max_mb=1))
    assert made and record.size_bytes > 700_000
    assert record.fetched_bytes > 700_000  # what uv unpacked into its cache


def test_two_installs_of_one_set_at_once_install_once(
    tmp_path: Path, wheels: Path, tools: Tools
) -> None:
    results: list[tuple[str, bool]] = []

    def install() -> None:
        record, made = ensure(EnvStore(tmp_path / "envs"), ("tinypkg",), tools)
        results.append((record.key, made))

    threads = [threading.Thread(target=install) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(made for _, made in results) == [False, True]
    assert results[0][0] == results[1][0]


CRASHING = """
import sys
from pathlib import Path
from skillchat.sandbox.envs.install import ensure
from skillchat.sandbox.envs.store import EnvStore
from skillchat.sandbox.detect import probe
ensure(EnvStore(Path(sys.argv[1])), ("tinypkg",), probe().tools)
"""


def test_a_crash_mid_install_leaves_no_environment_and_prune_clears_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tools: Tools
) -> None:
    root = tmp_path / "envs"
    with socket.socket() as listener:  # the install waits on it: it is mid-install
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        index = f"http://127.0.0.1:{listener.getsockname()[1]}/simple"
        monkeypatch.setenv("UV_INDEX_URL", index)
        monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen([sys.executable, "-c", CRASHING, str(root)], env=env)
        listener.settimeout(60)
        conn, _ = listener.accept()  # uv asked the index: the install is under way
        assert list(root.glob(".tmp-*"))
        assert _uv_running(index)  # the check below sees this test's uv
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        conn.close()
    assert wait_for(lambda: not _uv_running(index))
    store = EnvStore(root)
    (gone,) = store.prune(set())  # the crash's leftover alone: no environment was made
    assert gone.startswith(".tmp-")
    assert not list(root.glob(".tmp-*"))


def _uv_running(index: str) -> bool:
    """A uv install of this test's is running: one with the test's own index in its
    environment (the other CI job runs this same test, with the same command line)."""
    mine = f"UV_INDEX_URL={index}".encode()
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            if b"/opt/skillchat/uv pip install" not in cmdline:  # uv, or the shell running it
                continue
            if mine in (entry / "environ").read_bytes().split(b"\0"):
                return True
        except OSError:  # not a process, gone, or another user's
            continue
    return False


def test_a_damaged_environment_is_installed_again_whole(
    tmp_path: Path, wheels: Path, tools: Tools
) -> None:
    store = EnvStore(tmp_path / "envs")
    record, _ = ensure(store, ("tinypkg",), tools)
    (store.path(record.key) / "skillchat-env.json").unlink()  # no record: not trusted
    (store.path(record.key) / "planted.py").write_text("x")
    again, made = ensure(store, ("tinypkg",), tools)
    assert made and again.key == record.key
    assert not (store.path(record.key) / "planted.py").exists()


def test_skills_deps_lists_installs_removes_and_prunes(tmp_path: Path, wheels: Path) -> None:
    require_sandbox()
    skills = tmp_path / "skills"
    demo = skill_folder(skills, "demo", "name: demo\ndescription: A demo.\n")
    write_files(demo, {"scripts/requirements.txt": "tinypkg\n", "scripts/x.py": ""})
    bad = skill_folder(skills, "bad", "name: bad\ndescription: Bad.\n")
    write_files(bad, {"requirements.txt": "git+https://example.com/x\n"})
    base = ["skills", "deps", "--skills-dir", str(skills)]
    listed = skillchat(*base)
    assert listed.returncode == 0, listed.stderr
    lines = sorted(listed.stdout.splitlines())
    assert lines[0].startswith("bad\t\t\trefused: /skills/bad/requirements.txt:1:")
    assert lines[1] == "demo\ttinypkg\t/skills/demo/scripts/requirements.txt\tnot installed"
    installed = skillchat(*base, "demo", "--install", "--json")
    assert installed.returncode == 0, installed.stderr
    (row,) = json.loads(installed.stdout)
    assert row["ready"] and row["installed"][0]["name"] == "tinypkg"
    assert skillchat(*base, "demo", "--remove").returncode == 0
    assert "not installed" in skillchat(*base, "demo").stdout
    assert skillchat(*base, "demo", "--install").returncode == 0
    (tmp_path / "none").mkdir()
    pruned = skillchat("skills", "deps", "--skills-dir", str(tmp_path / "none"), "--prune")
    assert pruned.returncode == 0 and "removed" in pruned.stderr
    one_line_error(skillchat(*base, "--remove"), code=2)


@pytest.mark.parametrize(
    ("path", "edited"),
    [
        ("scripts/requirements.txt", "tinypkg\nother\n"),
        ("scripts/x.py", '# /// script\n# dependencies = ["tinypkg", "other"]\n# ///\n'),
    ],
)
def test_a_changed_declaration_untrusts_the_skill(tmp_path: Path, path: str, edited: str) -> None:
    from chat_helpers import write_skill

    from skillchat.skills.trust import TrustState, TrustStore

    files = {
        "scripts/requirements.txt": "tinypkg\n",
        "scripts/x.py": '# /// script\n# dependencies = ["tinypkg"]\n# ///\n',
    }
    skill = write_skill(tmp_path / "project", "demo", files=files)
    store = TrustStore.load(tmp_path / "trust.json")
    store.trust(skill)
    assert store.state(skill) is TrustState.TRUSTED
    (skill.root / path).write_text(edited)
    assert store.state(skill) is TrustState.CHANGED


def test_a_changed_packages_override_untrusts_the_skill(tmp_path: Path) -> None:
    """The config's [packages] entry is part of what was trusted: a trusted project
    skill whose entry changes (or goes) is "changed since trusted" until trusted again
    (the state the run policy reads too: skillchat/sandbox/setup.py)."""
    skills = tmp_path / "skills"
    skill_folder(skills, "demo", "name: demo\ndescription: A demo.\nallowed-tools: Bash(echo:*)\n")
    config = tmp_path / "config.toml"
    config.write_text('[packages]\ndemo = ["tinypkg"]\n')
    base = ["--skills-dir", str(skills), "--config", str(config)]
    assert skillchat("skills", "trust", "demo", *base).returncode == 0
    assert trust_of_demo(base) == "trusted"
    config.write_text('[packages]\ndemo = ["tinypkg", "x"]\n')
    assert trust_of_demo(base) == "changed"
    config.write_text("")  # the entry removed: a change too
    assert trust_of_demo(base) == "changed"
    assert skillchat("skills", "trust", "demo", *base).returncode == 0
    assert trust_of_demo(base) == "trusted"


def trust_of_demo(base: list[str]) -> str:
    listed = skillchat("skills", "list", "--json", *base)
    assert listed.returncode == 0, listed.stderr
    (demo,) = [s for s in json.loads(listed.stdout)["skills"] if s["name"] == "demo"]
    return str(demo["trust"])


def test_the_install_cap_is_a_positive_whole_number_of_mb(tmp_path: Path) -> None:
    from skillchat.config import load_settings
    from skillchat.errors import ConfigError

    path = tmp_path / "config.toml"
    path.write_text("[run]\ninstall_max_mb = 64\n")
    assert load_settings(path).run.install_max_mb == 64
    for bad, message in (
        ("install_max_mb = 0", "run_install_max_mb must be between 1 and 1048576"),
        ("install_max_mb = 1.5", r"config\.toml:2: 'run\.install_max_mb' must be an integer"),
    ):
        path.write_text(f"[run]\n{bad}\n")
        with pytest.raises(ConfigError, match=message):
            load_settings(path)
