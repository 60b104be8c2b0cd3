"""What runs a `run_command` call (skillchat/tools/run_command.py is the model's side):
check the arguments, ask the policy and the user, run the command in the sandbox,
and turn what happened into the result.

    result: {"exit_code", "stdout", "stderr", "truncated", "duration_ms", "files_written",
             "notes"?}  (a listing cut short, a scratch folder over its size,
             files written where the host runs code from)
          | {"error", "error_code"}  NOT_ALLOWED, NO_SANDBOX, TIMEOUT, INSTALL_FAILED,
                                   INTERNAL_ERROR
    (INVALID_ARGUMENT comes from the Tool contract: bad arguments raise
    ToolArgumentError)

Who may run what is decided in two steps before anything starts:
1. `policy(skill, command, context)`: the skill's `allowed-tools` and whether it is
   trusted may pre-approve the command, refuse it (with a reason), or say to ask;
   the chat running it (`context`, a fork's or the chat's) has its own gates;
2. `consent(request)` (the request carries that verdict): the REPL runs a
   pre-approved command without a question and asks about the others (yes / no /
   always, for that skill and program in this chat); `ask` never asks, so it runs
   commands only with `--allow-run`, pre-approved or not.
Nothing here raises to the loop but ToolArgumentError: every failure is a result.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skillchat.errors import EnvRefused, SandboxFailure, ToolArgumentError
from skillchat.mounts import SCRATCH_MOUNT, SKILLS_MOUNT, WORKSPACE_MOUNT
from skillchat.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:  # imported when a command first runs, not before the first request
    from pathlib import Path

    from skillchat.sandbox.detect import SandboxStatus
    from skillchat.sandbox.envs.provider import SkillEnvs
    from skillchat.sandbox.layout import SandboxSpec
    from skillchat.sandbox.run_request import RunRequest, Verdict
    from skillchat.sandbox.runner import Outcome, OutputSink

MAX_COMMAND_CHARS = 20_000


Watch = Callable[["RunRequest"], AbstractContextManager["OutputSink"]]
# (skill_name, command, the context of the chat running it: a fork's or the chat's)
Policy = Callable[[str | None, str, ToolContext], "Verdict"]
Consent = Callable[["RunRequest"], "Verdict"]  # "approved", or "refused" with the reason


def ask_everything(skill_name: str | None, command: str, context: ToolContext) -> Verdict:
    """The policy until `allowed-tools` and trust decide: every command is asked."""
    from skillchat.sandbox.run_request import Verdict  # a command's: sandbox/run_request.py

    return Verdict("ask")


class SandboxCommands:
    """The `CommandRunner` of one chat: its sandbox layout, policy, consent, watch."""

    def __init__(
        self,
        status: SandboxStatus,
        spec: Callable[[], SandboxSpec],
        consent: Consent,
        *,
        policy: Policy = ask_everything,
        default_timeout_s: float = 120.0,
        max_timeout_s: float = 600.0,
        envs: Callable[[], SkillEnvs] | None = None,
    ) -> None:
        self.status = status
        self.spec = spec  # called per run: the scratch folder may depend on the chat id
        self.consent = consent
        self.policy = policy
        self.default_timeout_s = default_timeout_s
        self.max_timeout_s = max_timeout_s
        # The skills' package environments (skillchat/sandbox/envs), made at the first
        # command: most chats run none, and `ask` must not pay for them at start.
        self._make_envs = envs
        self._envs: SkillEnvs | None = None
        # Set by the front end to show a run as it goes: entered around the run,
        # it gives the sink the output streams to (the REPL's live card).
        self.watch: Watch | None = None

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run one call of the chat of `context`; raises ToolArgumentError for
        arguments it cannot use."""
        spec = self.spec()
        command, skill, timeout = self._arguments(args, spec)
        try:
            return self._run(spec, command, skill, timeout, context)
        except SandboxFailure as exc:
            return _error("INTERNAL_ERROR", f"the sandbox could not start: {exc}")

    def _run(
        self,
        spec: SandboxSpec,
        command: str,
        skill: str | None,
        timeout: float,
        context: ToolContext,
    ) -> ToolResult:
        if not self.status.available or self.status.tools is None:
            return _error("NO_SANDBOX", f"no sandbox: {self.status.reason}")
        verdict = self.policy(skill, command, context)
        if verdict.kind == "refused":
            return _error("NOT_ALLOWED", f"not allowed: {verdict.reason}")
        from skillchat.sandbox.run_request import RunRequest

        request = RunRequest(
            command,
            skill,
            spec.default_cwd(),
            spec.network,
            spec.writable_workspace and spec.workspace is not None,
            timeout,
            verdict,
        )
        answer = self.consent(request)
        if answer.kind != "approved":
            return _error("NOT_ALLOWED", f"not allowed: {answer.reason}")
        from skillchat.sandbox.envs.notes import missing_notes
        from skillchat.sandbox.envs.provider import EnvUse
        from skillchat.sandbox.protect import remove_mount_points
        from skillchat.sandbox.runner import NOBODY, run_in_sandbox
        from skillchat.sandbox.skill_here import skill_entries
        from skillchat.skills.plugin_install import in_sandbox

        if self._envs is None and self._make_envs is not None:
            self._envs = self._make_envs()
        try:
            use = self._envs.prepare(skill, command) if self._envs else EnvUse()
        except EnvRefused as exc:
            return _error(exc.code, str(exc))
        extra = {"SKILL_DIR": f"{SKILLS_MOUNT}/{skill}"} if skill else {}
        extra |= use.env | (_own_modules(skill, use.env) if skill else {})
        here: tuple[tuple[Path, str, bool], ...] = ()
        made: list[Path] = []
        root = spec.mountable_skills()[skill] if skill else None
        if skill and root and spec.workspace is None:  # its SKILL.md's relative paths work
            here, made = skill_entries(skill, root, spec.scratch)
        plugin_env, plugin = in_sandbox(root, skill) if skill and root else ({}, [])
        extra |= plugin_env
        if plugin and os.geteuid() == 0:  # as root the command runs as nobody: the data
            os.chown(plugin[1][0], NOBODY, NOBODY)  # folder is its, as the scratch is
        limits = replace(spec.limits, timeout_s=timeout)
        spec = replace(spec, limits=limits, binds=spec.binds + here + use.binds + tuple(plugin))
        try:
            with self.watch(request) if self.watch else nullcontext(None) as sink:
                outcome = run_in_sandbox(
                    self.status.tools, spec, command, extra_env=extra, on_output=sink
                )
        finally:
            remove_mount_points(made)
        outcome.notes = [*use.notes, *outcome.notes]
        outcome.notes += missing_notes(skill, outcome.exit_code, outcome.stderr, root)
        folders = {SCRATCH_MOUNT: spec.scratch}
        if spec.workspace is not None:
            folders[WORKSPACE_MOUNT] = spec.workspace
        return outcome_result(outcome, timeout, widened=_widened(request), folders=folders)

    def _arguments(self, args: dict[str, Any], spec: SandboxSpec) -> tuple[str, str | None, float]:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolArgumentError("'command' must be a non-empty string")
        if "\x00" in command:
            raise ToolArgumentError("'command' contains a NUL byte")
        if len(command) > MAX_COMMAND_CHARS:
            raise ToolArgumentError(f"'command' is longer than {MAX_COMMAND_CHARS} characters")
        skill = args.get("skill_name")
        if skill is not None and (
            not isinstance(skill, str) or skill not in spec.mountable_skills()
        ):
            known = ", ".join(sorted(spec.mountable_skills())) or "(none)"
            raise ToolArgumentError(f"unknown skill_name {skill!r}; skills: {known}")
        timeout = args.get("timeout_s", self.default_timeout_s)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise ToolArgumentError("'timeout_s' must be a number of seconds")
        if not math.isfinite(timeout) or timeout <= 0:
            raise ToolArgumentError("'timeout_s' must be a positive number of seconds")
        return command, skill, float(min(timeout, self.max_timeout_s))


def _own_modules(skill: str, env: Mapping[str, str]) -> dict[str, str]:
    """The skill's folder where Python and Node look for modules, after the
    environment's own (`/node_modules` stays first): `python -m scripts.x` and
    `from core.x import y`, written relative to the skill, work wherever the command
    starts, the workspace too (whose own modules, in the working folder, come first)."""
    folder = f"{SKILLS_MOUNT}/{skill}"
    node = env.get("NODE_PATH")
    return {"PYTHONPATH": folder, "NODE_PATH": f"{node}:{folder}" if node else folder}


def _error(code: str, message: str, **extra: Any) -> ToolResult:
    payload = {"error": message, "error_code": code, **extra}
    return ToolResult(
        json.dumps(payload, ensure_ascii=False),
        is_error=True,
        error_code=code,
        preview=message,
    )


def _widened(request: RunRequest) -> list[str]:
    """What the user allowed beyond the default sandbox, for the card."""
    return ([f"network {request.network_label()}"] if request.network else []) + (
        ["workspace writes ON"] if request.writes else []
    )


def outcome_result(
    outcome: Outcome,
    timeout: float,
    widened: Sequence[str] = (),
    folders: Mapping[str, Path] | None = None,
) -> ToolResult:
    """The tool result for a finished (or stopped) run, and its card preview (which
    says when the sandbox was widened: network, workspace writes, and where the
    files written are on this machine, by `folders`: mount -> host folder)."""
    payload: dict[str, Any] = {
        "exit_code": outcome.exit_code,
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
        "truncated": outcome.truncated,
        "duration_ms": outcome.duration_ms,
        "files_written": outcome.files_written,
    }
    if outcome.notes:
        payload["notes"] = outcome.notes
    tail = (outcome.stdout + outcome.stderr).rstrip("\n")  # cards neutralise it
    if outcome.stopped == "timeout":
        message = f"the command timed out after {timeout:g} s; the sandbox was stopped"
        return _error("TIMEOUT", message, **payload)
    if outcome.stopped == "output_limit":
        payload["error"] = "the command printed too much and was stopped; the output's tail is kept"
    status = f"exit {outcome.exit_code}" if outcome.exit_code is not None else "stopped"
    head = " · ".join([status, f"{outcome.duration_ms} ms", *widened])
    if outcome.files_written:
        head += " · wrote " + ", ".join(_shown(p) for p in outcome.files_written[:5])
    if outcome.notes:
        head += " · " + " · ".join(outcome.notes)
    if where := _on_host(outcome.files_written, folders or {}):
        head += "\n" + where
    return ToolResult(
        json.dumps(payload, ensure_ascii=False),
        preview=head + ("\n" + tail if tail else ""),
        size=len(outcome.stdout) + len(outcome.stderr),
        truncated=outcome.truncated,
    )


_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _shown(path: str) -> str:
    """A file name the command chose, on one line and visible: as it is when every
    character prints, else in bash's `$'…'` with escapes (`\\n`, `\\x1b`), as the
    user could paste it into a shell."""
    if path.isprintable():
        return path
    return "$'" + "".join(_escaped(c) for c in path) + "'"


def _escaped(char: str) -> str:
    if char in "'\\":
        return "\\" + char
    if char.isprintable():
        return char
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _on_host(written: Sequence[str], folders: Mapping[str, Path]) -> str | None:
    """Where the folders the files were written to are on this machine, as paths the
    user can open (`/scratch is ~/.local/share/skillchat/scratch/<chat>`); the model
    is never told them."""
    where = [
        f"{mount} is {shlex.quote(str(folder))}"
        for mount, folder in folders.items()
        if any(path.startswith(f"{mount}/") for path in written)
    ]
    return "on this machine: " + ", ".join(where) if where else None
