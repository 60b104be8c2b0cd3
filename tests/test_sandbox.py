"""The sandbox against the real bubblewrap: what a hostile or broken command can do
(nothing outside its folders, no keys, no network, no runaway processes), and what
an ordinary one gets back."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
from sandbox_helpers import processes_with, unique_number

from skillchat.sandbox.detect import Tools
from skillchat.sandbox.layout import Limits, SandboxSpec
from skillchat.sandbox.runner import Outcome, run_in_sandbox


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    root = tmp_path / "skills" / "demo"
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    (root / "scripts" / "hello.sh").write_text("echo hello from $0\n")
    return root


def spec_for(tmp_path: Path, skill: Path | None = None, **kw: object) -> SandboxSpec:
    skills = {"demo": skill} if skill else {}
    return SandboxSpec(scratch=tmp_path / "scratch", skills=skills, **kw)  # type: ignore[arg-type]


def run(tools: Tools, spec: SandboxSpec, command: str, **kw: object) -> Outcome:
    return run_in_sandbox(tools, spec, command, **kw)  # type: ignore[arg-type]


def test_skill_scripts_run_and_scratch_files_are_listed(
    tools: Tools, tmp_path: Path, skill: Path
) -> None:
    spec = spec_for(tmp_path, skill)
    out = run(tools, spec, "bash /skills/demo/scripts/hello.sh && pwd && echo x > made.txt")
    assert out.exit_code == 0, out.stderr
    assert out.stdout == "hello from /skills/demo/scripts/hello.sh\n/scratch\n"
    assert out.files_written == ["/scratch/made.txt"]
    assert (tmp_path / "scratch" / "made.txt").read_text() == "x\n"


def test_the_planted_ssh_key_and_real_home_are_not_there(
    tools: Tools, tmp_path: Path, isolated_env: Path
) -> None:
    ssh = isolated_env / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE-KEY-MATERIAL\n")
    script = f"cat ~/.ssh/id_rsa; cat {ssh}/id_rsa; ls /root /home; cat /etc/shadow; echo $HOME"
    out = run(tools, spec_for(tmp_path), script)
    assert "PRIVATE-KEY-MATERIAL" not in out.stdout + out.stderr
    assert out.stdout.splitlines() == ["/home:", "user", "/home/user"]  # only the empty home
    assert "No such file" in out.stderr


def test_the_environment_holds_no_provider_key(
    tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-test-key-0123456789")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fake_token")
    out = run(tools, spec_for(tmp_path), "env; cat /proc/1/environ | tr '\\0' '\\n'")
    assert out.exit_code == 0
    assert "sk-fake" not in out.stdout and "ghp_fake" not in out.stdout
    names = {line.split("=", 1)[0] for line in out.stdout.splitlines() if "=" in line}
    assert "OPENAI_API_KEY" not in names and "HOME" in names


def test_writes_outside_the_scratch_folder_fail(tools: Tools, tmp_path: Path, skill: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("original\n")
    spec = spec_for(tmp_path, skill, workspace=workspace)
    script = (
        "echo x > /workspace/keep.txt; echo x > /workspace/new.txt; "
        "echo x > /skills/demo/x; echo x > /usr/x; echo x > /x; echo x > /etc/x; echo done"
    )
    out = run(tools, spec, script)
    assert out.stdout == "done\n"
    assert out.stderr.count("Read-only file system") + out.stderr.count("Permission denied") == 6
    assert (workspace / "keep.txt").read_text() == "original\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["keep.txt"]
    assert not (skill / "x").exists()
    assert out.files_written == []


def test_cwd_is_the_workspace_when_there_is_one(tools: Tools, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("A\n")
    out = run(tools, spec_for(tmp_path, workspace=workspace), "pwd; cat a.txt")
    assert out.stdout == "/workspace\nA\n"


def test_a_symlink_in_a_skill_folder_does_not_reach_outside(
    tools: Tools, tmp_path: Path, skill: Path, isolated_env: Path
) -> None:
    secret = isolated_env / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    (skill / "link").symlink_to(secret)
    (skill / "homelink").symlink_to(isolated_env)
    out = run(tools, spec_for(tmp_path, skill), "cat /skills/demo/link; ls /skills/demo/homelink/")
    assert "TOP-SECRET" not in out.stdout
    assert out.stderr.count("No such file or directory") == 2


class _Listener:
    """A TCP server on the host's 127.0.0.1 that counts connections."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        self.accepted.set()
        conn.close()


def test_no_network_unless_allowed(tools: Tools, tmp_path: Path) -> None:
    listener = _Listener()
    probe = (
        'python3 -c "import socket; '
        f"socket.create_connection(('127.0.0.1', {listener.port}), 3); print('connected')\""
    )
    try:
        out = run(tools, spec_for(tmp_path), probe)
        assert out.exit_code != 0 and "connected" not in out.stdout
        assert "ConnectionRefusedError" in out.stderr or "Network is unreachable" in out.stderr
        assert not listener.accepted.is_set()
        allowed = run(tools, spec_for(tmp_path, network=True), probe)
        assert allowed.stdout == "connected\n", allowed.stderr
        assert listener.accepted.wait(60)
    finally:
        listener.sock.close()


def test_a_fork_bomb_is_contained(tools: Tools, tmp_path: Path) -> None:
    # Bounded, so a broken limit cannot hurt the machine: at most 400 forks. Each
    # sleeps a number of this test's own, so no other worker's bomb is counted.
    n = unique_number()
    bomb = (
        'python3 -c "\nimport os, time\nn = 0\ntry:\n    while n < 400:\n'
        f"        if os.fork() == 0:\n            time.sleep({n}); os._exit(0)\n"
        "        n += 1\nexcept OSError as e:\n    print('stopped after', n, e.errno)\n\""
        " ; exec -a forkbomb-marker-31337 sleep 0"
    )
    spec = spec_for(tmp_path, limits=Limits(max_processes=40, timeout_s=60))
    out = run(tools, spec, bomb)
    words = out.stdout.split()
    assert words[:2] == ["stopped", "after"], out.stdout + out.stderr
    assert int(words[2]) < 40 and words[3] == "11"  # EAGAIN
    assert processes_with(f"time.sleep({n})") == []  # every child died with the sandbox


def test_printing_forever_is_stopped_and_its_tail_kept(tools: Tools, tmp_path: Path) -> None:
    spec = spec_for(tmp_path, limits=Limits(max_output_bytes=1000, stop_after_bytes=2_000_000))
    line = f"forever-line-{unique_number()}"
    out = run(tools, spec, f"yes {line}")
    assert out.stopped == "output_limit" and out.exit_code is None and out.truncated
    assert len(out.stdout) <= 1000 and out.stdout.endswith(f"{line}\n")
    assert processes_with(line) == []


def test_sleeping_forever_times_out_and_nothing_stays(tools: Tools, tmp_path: Path) -> None:
    n = unique_number()
    # 3 s, not less: the sandbox's start and the `echo` come out of it, under load.
    out = run(tools, spec_for(tmp_path), f"echo before; sleep {n}", timeout_s=3.0)
    assert out.stopped == "timeout" and out.exit_code is None
    assert out.stdout == "before\n"
    assert processes_with(f"sleep {n}") == []


def test_a_daemon_left_behind_dies_with_the_sandbox(tools: Tools, tmp_path: Path) -> None:
    n = unique_number()
    script = (
        f"(sleep {n}1 &); setsid sleep {n}2 > /dev/null 2>&1 & "
        f"nohup sleep {n}3 >/dev/null 2>&1 & echo started"
    )
    out = run(tools, spec_for(tmp_path), script)
    assert out.stdout == "started\n" and out.exit_code == 0
    assert processes_with(f"sleep {n}") == []


def test_ctrl_c_during_a_run_kills_the_whole_sandbox(tools: Tools, tmp_path: Path) -> None:
    seen: list[str] = []

    def interrupt(stream: str, text: str) -> None:
        seen.append(text)
        raise KeyboardInterrupt

    n = unique_number()
    with pytest.raises(KeyboardInterrupt):
        run(tools, spec_for(tmp_path), f"sleep {n} & echo go; wait", on_output=interrupt)
    assert seen == ["go\n"]
    assert processes_with(f"sleep {n}") == []


def test_the_command_is_unprivileged_even_as_root(tools: Tools, tmp_path: Path) -> None:
    out = run(
        tools, spec_for(tmp_path), "id -u; grep CapEff /proc/self/status; cat /proc/self/uid_map"
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "1000"
    assert lines[1].split()[1] == "0000000000000000"
    if os.geteuid() == 0:  # uid 1000 inside is nobody outside, so RLIMIT_NPROC holds
        assert lines[-1].split() == ["1000", "65534", "1"]


def test_allowed_writes_reach_the_workspace_and_are_listed(tools: Tools, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.txt").write_text("old\n")
    if os.geteuid() == 0:  # commands run as nobody: the folder must let nobody write
        workspace.chmod(0o777)
        (workspace / "old.txt").chmod(0o666)
    spec = spec_for(tmp_path, workspace=workspace, writable_workspace=True)
    out = run(tools, spec, "echo new > new.txt && echo more >> old.txt && echo s > /scratch/s")
    assert out.exit_code == 0, out.stderr
    assert out.files_written == ["/scratch/s", "/workspace/new.txt", "/workspace/old.txt"]
    assert (workspace / "old.txt").read_text() == "old\nmore\n"
