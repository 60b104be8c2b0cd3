"""A session's hooks (`session_hooks`), and a skill's or a plugin's hooks run here,
in the bubblewrap sandbox, as the skill's commands do.

Each run is a fresh sandbox (sandbox/runner.py) that shows the skill's own folder
at /skills/NAME (where the hook starts, so `./scripts/check.sh` is the skill's) or,
for a plugin's hook, the plugin and its data as its skills see them,
the workspace read-only when there is one, no network, and a scratch folder of
the run's own holding the event's JSON, which the hook reads on stdin. Nothing of
the host's home is shown. The bounds are the hook's: its timeout, and the same
output bound as a hook on the host (hooks/run.py), past which it is stopped.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from skillchat.hooks.run import INSIDE_HOOK, MAX_OUTPUT_BYTES, Ran
from skillchat.mounts import SCRATCH_MOUNT, SKILLS_MOUNT

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.hooks.dispatch import HookQuestion, Hooks, Launch
    from skillchat.hooks.spec import Found, Hook
    from skillchat.skills.registry import Registry

EVENT_FILE = ".hook-event.json"
# What a sandboxed hook is shown: skills by name, more binds, its variables, where it starts.
Shown = tuple[dict[str, Path], list[tuple[Path, str, bool]], dict[str, str], str]


def sandboxed_hooks(
    scratch_root: Path, workspace: Path | None, registry: Callable[[], Registry]
) -> Launch | None:
    """What runs a skill's hook, or None where the sandbox does not work."""
    from skillchat.sandbox.detect import probe

    status = probe()
    if not status.available or status.tools is None:
        return None
    tools = status.tools

    def launch(hook: Hook, event: bytes) -> Ran:
        from skillchat.errors import SandboxFailure
        from skillchat.sandbox.layout import Limits, SandboxSpec
        from skillchat.sandbox.runner import run_in_sandbox

        shown = _plugin(hook) if hook.plugin else _skill(hook, registry())
        if isinstance(shown, Ran):
            return shown
        skills, binds, env, cwd = shown
        scratch_root.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.TemporaryDirectory(dir=scratch_root, prefix="hook-") as scratch:
            (Path(scratch) / EVENT_FILE).write_bytes(event)
            spec = SandboxSpec(
                scratch=Path(scratch),
                skills=skills,
                binds=tuple(binds),
                workspace=workspace,
                limits=Limits(
                    timeout_s=hook.timeout_s,
                    max_output_bytes=MAX_OUTPUT_BYTES,
                    stop_after_bytes=MAX_OUTPUT_BYTES,
                ),
            )
            stdin = shlex.quote(f"{SCRATCH_MOUNT}/{EVENT_FILE}")
            try:
                outcome = run_in_sandbox(
                    tools,
                    spec,
                    f"exec <{stdin}\n{hook.command}",
                    cwd=cwd,
                    extra_env={**env, INSIDE_HOOK: "1"},
                )
            except SandboxFailure as exc:
                return Ran(1, "", f"the sandbox did not start: {exc}")
        stopped = {"timeout": "timeout", "output_limit": "output"}.get(outcome.stopped or "")
        return Ran(outcome.exit_code, outcome.stdout, outcome.stderr, stopped=stopped)

    return launch


def _skill(hook: Hook, registry: Registry) -> Shown | Ran:
    """A skill's hook sees its skill's folder at /skills/NAME, and starts there."""
    skill = registry.get(hook.skill or "")
    if skill is None:  # gone since (a /reload): nothing to run
        return Ran(0, "", "")
    return {skill.name: skill.root}, [], {}, f"{SKILLS_MOUNT}/{skill.name}"


def _plugin(hook: Hook) -> Shown | Ran:
    """A plugin's hook sees what its skills see: the plugin read-only at
    ${PLUGIN_ROOT} (where it starts) and its data writable at ${PLUGIN_DATA}, also
    under Claude Code's names for them."""
    from skillchat.mounts import PLUGIN_MOUNT
    from skillchat.sandbox.runner import NOBODY
    from skillchat.skills.plugin_install import mounts

    env, binds = mounts(hook.folder, hook.plugin or "")
    if not binds:
        return Ran(1, "", f"plugin {hook.plugin}: its folders are not there")
    if os.geteuid() == 0:  # as root the hook runs as nobody: the data folder is its,
        os.chown(binds[1][0], NOBODY, NOBODY)  # as for the plugin's skills' commands
    env |= {f"CLAUDE_{key}": value for key, value in env.items()}
    return {}, binds, env, PLUGIN_MOUNT


def session_hooks(
    settings: Settings,
    registry: Callable[[], Registry],
    workspace: Path | None,
    notice: Callable[[str], None],
    ask: Callable[[HookQuestion], bool] | None,
    chat_id: Callable[[], str | None],
) -> Hooks | None:
    """A session's hooks, or None: off (`--bare`), or none anywhere. Started inside
    a hook (`SKILLCHAT_HOOK`), a session runs none, and says so once: a hook that
    runs skillchat would otherwise fire itself without end."""
    from skillchat.hooks.dispatch import Hooks
    from skillchat.hooks.spec import find_hooks
    from skillchat.hooks.trust import HookTrust

    if not settings.hooks_enabled:
        return None
    cwd = Path.cwd()

    def find() -> Found:
        skills = registry().skills.values()
        return find_hooks(settings.hooks or None, settings.config_path, cwd, skills)

    found = find()
    if not found.hooks and not found.problems:
        return None
    for problem in found.problems:
        notice(problem)
    if os.environ.get(INSIDE_HOOK):
        notice("hooks do not run in a skillchat started by a hook (a hook would fire itself)")
        return None
    trust = HookTrust.load()
    if trust.problem:
        notice(trust.problem)
    scratch = settings.storage.database_path().parent / "scratch" / "hooks"
    return Hooks(
        find,
        trust,
        project=cwd,
        notice=notice,
        ask=ask,
        sandbox=sandboxed_hooks(scratch, workspace, registry),
        session_id=chat_id,
    )
