"""The command runner of one chat of `ask` or the REPL (what `run_command` calls):
there only when tools are on, running is not switched off and a sandbox works here.

The scratch folder is `<data folder>/scratch/<chat id>`, next to the chat database,
so what a chat's commands wrote stays with the chat.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from skillchat.config import Settings
    from skillchat.envs.provider import InstallRequest, SkillEnvs
    from skillchat.sandbox.command_tool import Consent, Policy, SandboxCommands
    from skillchat.skills.registry import Registry
    from skillchat.workspace.files import Workspace


def command_runner(
    settings: Settings,
    registry: Registry,
    workspace: Workspace | None,
    chat_id: Callable[[], str | None],
    consent: Consent,
) -> SandboxCommands | None:
    """The runner, or None: then run_command is not offered (`skillchat doctor` says why)."""
    if not settings.tools or not settings.run_enabled:
        return None
    from skillchat.sandbox.command_tool import SandboxCommands
    from skillchat.sandbox.detect import probe
    from skillchat.sandbox.layout import SandboxSpec

    status = probe()
    if not status.available:
        return None
    scratch_root = settings.database_path().parent / "scratch"

    def spec() -> SandboxSpec:
        return SandboxSpec(
            scratch=scratch_root / (chat_id() or "unsaved"),
            skills={name: skill.root for name, skill in registry.skills.items()},
            workspace=workspace.root if workspace is not None else None,
            writable_workspace=settings.run_allow_write,
            network=settings.run_allow_network,
        )

    return SandboxCommands(
        status,
        spec,
        consent,
        policy=skill_policy(settings, registry, spec().default_cwd()),
        default_timeout_s=settings.run_timeout_s,
        max_timeout_s=settings.run_max_timeout_s,
        envs=skill_envs(settings, registry, status.tools, consent),
    )


def skill_envs(settings: Settings, registry: Registry, tools: Any, consent: Any) -> SkillEnvs:
    """The skills' package environments: installed with the REPL's yes/no (a
    consent object with `ask_install`), else only with `--allow-install` or
    `[run] allow_install`. Progress: the REPL's live display (`install_progress`),
    else one line per step on stderr."""
    from rich.text import Text

    from skillchat.envs.provider import SkillEnvs
    from skillchat.envs.store import EnvStore
    from skillchat.ui.console import err
    from skillchat.ui.safe import clean

    ask = getattr(consent, "ask_install", None)

    def allowed(request: InstallRequest) -> bool:
        if settings.run_allow_install:
            return True
        return bool(ask(request)) if ask is not None else False

    @contextmanager
    def lines(request: InstallRequest) -> Iterator[Callable[[str], None]]:
        yield lambda line: err().print(Text(clean(f"  install: {line}"), style="dim"))

    return SkillEnvs(
        EnvStore(settings.database_path().parent / "envs"),
        tools,
        lambda: {name: skill.root for name, skill in registry.skills.items()},
        settings.skill_packages,
        allowed,
        progress=getattr(consent, "install_progress", None) or lines,
    )


def skill_policy(settings: Settings, registry: Registry, cwd: str) -> Policy:
    """The skill's `allowed-tools` under `[run] allowed_tools`, with its trust read
    afresh for each command (a `/trust` or an edited script counts at once). `cwd` is
    where commands start (/workspace or /scratch): a rule naming the skill's own
    `scripts/x.py` must not match the workspace's file of that name."""
    from skillchat.sandbox.command_tool import Verdict
    from skillchat.skills.allowed_tools import decide
    from skillchat.skills.trust import TrustStore

    kinds: dict[str, Literal["approved", "ask", "refused"]] = {
        "pre-approved": "approved",
        "ask": "ask",
        "refused": "refused",
    }

    def policy(skill_name: str | None, command: str) -> Verdict:
        skill = registry.skills.get(skill_name) if skill_name else None
        trusted = skill is not None and TrustStore.load().is_trusted(skill)
        mode = settings.run_allowed_tools
        verdict = decide(command, skill=skill, trusted=trusted, mode=mode, cwd=cwd)
        return Verdict(kinds[verdict.decision], verdict.reason)

    return policy


def flag_consent(settings: Settings) -> Consent:
    """`ask` never prompts: `--allow-run` (or `[run] allow = true`) allows, else not,
    even a command the skill's `allowed-tools` pre-approve: `ask` runs nothing the
    user did not allow on its command line or in the config."""
    from skillchat.sandbox.command_tool import RunRequest, Verdict

    def decide(request: RunRequest) -> Verdict:
        if settings.run_allow:
            return Verdict("approved")
        return Verdict(
            "refused",
            "running commands needs the user's consent: skillchat ask --allow-run "
            "(or `allow = true` under [run] in the config)",
        )

    return decide
