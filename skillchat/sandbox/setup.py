"""The command runner of one session of `ask`, the REPL or eval (what `run_command`
calls): there only when tools are on, running is not switched off and a sandbox
works here.

The runner reads the session's live state for every command (`Live`): the skills
mounted at /skills and judged by their `allowed-tools` are the registry of that
moment (`/reload`, `/skills disable` count at once), the settings those of the
moment (`/model`), and the scratch folder that of the current chat,
`<data folder>/scratch/<chat id>`, next to the chat database, so what a chat's
commands wrote stays with the chat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from skillchat.config import Settings
    from skillchat.sandbox.command_tool import Consent, Policy, SandboxCommands
    from skillchat.sandbox.envs.provider import InstallRequest, Progress, SkillEnvs
    from skillchat.sandbox.layout import SandboxSpec
    from skillchat.sandbox.run_request import RunRequest, Verdict
    from skillchat.sections import RunSettings
    from skillchat.skills.registry import Registry
    from skillchat.tools.base import ToolContext
    from skillchat.workspace.files import Workspace


class Live(Protocol):
    """What the runner reads of its session, afresh for each command."""

    @property
    def settings(self) -> Settings: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def chat_id(self) -> str | None: ...

    @property
    def context(self) -> ToolContext: ...  # the chat's (its activated skills)


def command_runner(
    settings: Settings, workspace: Workspace | None, live: Live, consent: Consent
) -> SandboxCommands | None:
    """The runner of a session starting with `settings` over `workspace` (neither
    read from `live` here: the session may not hold a chat yet), or None: then
    run_command is not offered (`skillchat doctor` says why)."""
    if not settings.tools or not settings.run.enabled:
        return None
    from skillchat.mounts import start_folder
    from skillchat.sandbox.command_tool import SandboxCommands
    from skillchat.sandbox.detect import probe

    status = probe()
    if not status.available:
        return None
    scratch_root = settings.storage.database_path().parent / "scratch"
    envs = settings.storage.envs_folder()

    folder = workspace.root if workspace is not None else None

    def spec() -> SandboxSpec:
        """The layout of one command (its module loads with the first command)."""
        from skillchat.sandbox.layout import SandboxSpec

        now = live.settings
        return SandboxSpec(
            scratch=scratch_root / (live.chat_id or "unsaved"),
            # A skill served over MCP is read, never run: its folder is not mounted.
            skills={n: s.root for n, s in live.registry.skills.items() if s.remote is None},
            workspace=folder,
            writable_workspace=now.run.allow_write,
            network=now.run.allow_network,
        )

    return SandboxCommands(
        status,
        spec,
        consent,
        policy=skill_policy(
            lambda: live.settings.run,
            lambda: live.registry,
            start_folder(folder is not None),
            lambda: live.context,
        ),
        default_timeout_s=settings.run.timeout_s,
        max_timeout_s=settings.run.max_timeout_s,
        envs=lambda: skill_envs(settings.run, envs, lambda: live.registry, status.tools, consent),
    )


def skill_envs(
    run: RunSettings, folder: Path, registry: Callable[[], Registry], tools: Any, consent: Any
) -> SkillEnvs:
    """The skills' package environments: installed with the REPL's yes/no (a
    consent object with `ask_install`), else only with `--allow-install` or
    `[run] allow_install`. Progress goes where the consent's `install_progress`
    shows it (the REPL's live display, `ask`'s lines on stderr), else nowhere. The
    skills are the session's of the moment (`registry` is read at each use); their
    environments are kept in `folder`."""
    from skillchat.sandbox.envs.install import InstallLimits
    from skillchat.sandbox.envs.provider import SkillEnvs
    from skillchat.sandbox.envs.store import EnvStore

    ask = getattr(consent, "ask_install", None)

    def allowed(request: InstallRequest) -> bool:
        if run.allow_install:
            return True
        return bool(ask(request)) if ask is not None else False

    return SkillEnvs(
        EnvStore(folder),
        tools,
        lambda: {n: s.root for n, s in registry().skills.items() if s.remote is None},
        run.packages,
        allowed,
        progress=getattr(consent, "install_progress", None),
        limits=InstallLimits(max_mb=run.install_max_mb),
    )


def skill_policy(
    run: Callable[[], RunSettings],
    registry: Callable[[], Registry],
    cwd: str,
    chat: Callable[[], ToolContext],
) -> Policy:
    """The skill's `allowed-tools` under `[run] allowed_tools` (of `run()`, the
    session's run settings), with the skill, the setting and its trust read afresh
    for each command (a `/reload`, a `/trust` or an edited script counts at once).
    `cwd` is
    where commands start (/workspace or /scratch): a rule naming the skill's own
    `scripts/x.py` must not match the workspace's file of that name. What judges is
    imported at the first command, not at start.

    While a skill served over MCP that the user has not trusted is active (or the
    command names it), every command is asked, even under `--allow-run` or an
    "always", and refused where nobody is asked: the skills extension forbids
    served content to cause code to run without the user's approval of that skill,
    and its text is what the model is acting on (`skillchat skills trust` lifts it).
    Active in the chat running the command (a fork loads skills of its own) or in
    the chat (`chat()`, whose model started the fork); trusted only as activated
    (skills/trust.py `trusted_as_activated`: a resumed chat's changed skill is not)."""
    kinds: dict[str, Literal["approved", "ask", "refused"]] = {
        "pre-approved": "approved",
        "ask": "ask",
        "refused": "refused",
    }

    def policy(skill_name: str | None, command: str, context: ToolContext) -> Verdict:
        from skillchat.sandbox.run_request import Verdict
        from skillchat.skills.allowed_tools import decide
        from skillchat.skills.trust import TrustStore

        skill = registry().skills.get(skill_name) if skill_name else None
        packages = run().packages
        trusted = skill is not None and TrustStore.load(packages=packages).is_trusted(skill)
        mode = run().allowed_tools
        verdict = decide(command, skill=skill, trusted=trusted, mode=mode, cwd=cwd)
        if verdict.decision != "refused" and (served := _untrusted_served(skill_name, context)):
            return Verdict("ask", served, each_time=True)
        return Verdict(kinds[verdict.decision], verdict.reason)

    def _untrusted_served(skill_name: str | None, context: ToolContext) -> str:
        """Why a served skill gates this command ("" when none does)."""
        from skillchat.skills.trust import TrustStore, trusted_as_activated

        skills = registry().skills
        store: TrustStore | None = None
        main = chat()
        for chat_context in [context] if main is context else [context, main]:
            names = [*chat_context.activated, *([skill_name] if skill_name else [])]
            for name in dict.fromkeys(names):
                skill = skills.get(name)
                if skill is None or skill.remote is None:
                    continue
                store = store or TrustStore.load(packages=run().packages)
                if not trusted_as_activated(store, skill, chat_context.served):
                    return (
                        f"skill '{skill.name}' served by {skill.origin} is active and not "
                        f"trusted: each command is asked (skillchat skills trust {skill.name})"
                    )
        return ""

    return policy


@dataclass(frozen=True, eq=False)
class FlagConsent:
    """`ask` never prompts: `--allow-run` (or `[run] allow = true`) allows, else not,
    even a command the skill's `allowed-tools` pre-approve: `ask` runs nothing the
    user did not allow on its command line or in the config. `install_progress`
    shows a package install as it goes (the front end's, which this layer cannot
    draw itself)."""

    run: RunSettings
    install_progress: Progress | None = None

    def __call__(self, request: RunRequest) -> Verdict:
        from skillchat.sandbox.run_request import Verdict

        if request.verdict.each_time:
            return Verdict("refused", f"{request.verdict.reason}; --allow-run does not cover it")
        if self.run.allow:
            return Verdict("approved")
        return Verdict(
            "refused",
            "running commands needs the user's consent: skillchat ask --allow-run "
            "(or `allow = true` under [run] in the config)",
        )


def flag_consent(run: RunSettings, progress: Progress | None = None) -> Consent:
    """The consent of `ask` and eval (see `FlagConsent`)."""
    return FlagConsent(run, progress)
