"""The REPL's built-in commands: `/help`, `/skills`, `/model`, `/new`, `/retry`, `/chats`,
`/resume`, `/show`, `/attach`, `/files`, `/grep`, `/compact`, `/context`, `/copy`,
`/reload`, `/trust`, `/exit`.

A line whose first word is one of these runs it and never reaches the model; a
skill with the same name is reached with `/skill NAME`, and the REPL
says so once. Each command is a function of the session and the rest of the line;
it returns True only to end the session. Every line goes through `Repl.say`, onto
the consoles of the `Repl` it is given, each part made safe (ui/safe.py): skill
descriptions, chat titles, tool arguments and results are text, never markup.

This module holds the table, `/help` and the skills' and model's commands; a group
of commands that share a subject is a module of its own: the chat's
(ui/chat_commands.py), the workspace's (ui/workspace_commands.py), `/context`,
`/copy` and the `/skills` overrides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillchat.errors import UsageError
from skillchat.ui.chat_commands import (
    CHATS_SHOWN,
    list_chats,
    new_chat,
    resume_chat,
    retry_last,
    show_card,
)
from skillchat.ui.context_view import show_context
from skillchat.ui.copy_command import copy_answer
from skillchat.ui.override_command import OVERRIDE_USAGE, OVERRIDES, override
from skillchat.ui.safe import counted, one_line
from skillchat.ui.workspace_commands import attach_file, grep_files, list_files

if TYPE_CHECKING:
    from skillchat.skills.model import Skill
    from skillchat.ui.repl import Repl

SKILL_USAGES_SHOWN = 20  # /help lists this many skills that take arguments
# A `/name hint` up to this long shares the commands' column; most real hints are
# longer (a sentence of options), and one cut there says nothing: it gets a line of
# its own, up to USAGE_CHARS, with the description below it.
USAGE_ALIGNED = 40
USAGE_CHARS = 160


@dataclass(frozen=True)
class Command:
    name: str
    usage: str  # the arguments, for /help
    help: str
    run: Callable[[Repl, str], bool | None]


def _help(repl: Repl, arg: str) -> None:
    """One row per command, the descriptions in one column (the widest usage sets it)."""
    rows = [
        (f"/{c.name} {c.usage}".rstrip(), c.help)
        for c in COMMANDS.values()
        if c.name not in ALIASES
    ]
    rows.append(("/skill NAME ...", "use a skill, even one a command shadows"))
    rows.append(("/NAME ...", "use the skill NAME for this message (Tab completes)"))
    keys = (
        "Enter sends · Esc Enter (Alt+Enter) new line · Ctrl-X Ctrl-E editor · "
        "Ctrl-C stops a reply · Ctrl-D quits"
    )
    hinted = [
        s for s in repl.session.registry.skills.values() if s.user_invocable and s.argument_hint
    ]
    skills = [
        (one_line(f"/{s.name} {s.argument_hint}", USAGE_CHARS), s.description) for s in hinted
    ]
    aligned = [row for row in skills[:SKILL_USAGES_SHOWN] if len(row[0]) <= USAGE_ALIGNED]
    width = max(len(left) for left, _ in rows + aligned) + 2
    for left, text in rows:
        repl.say((left.ljust(width), "strong"), text)
    repl.say(("keys".ljust(width), "muted"), keys)
    if skills:
        repl.say(("skills that take arguments (their argument-hint):", "muted"))
    for left, text in skills[:SKILL_USAGES_SHOWN]:
        if len(left) > USAGE_ALIGNED:
            repl.say((left, "strong"))
            left = ""
        repl.say((left.ljust(width), "strong"), one_line(text, 80))
    if (more := len(skills) - SKILL_USAGES_SHOWN) > 0:
        repl.say((f"… and {more} more (Tab after / shows them)", "muted"))


def skill_usage(skill: Skill) -> str:
    """A skill's completion text: its `argument-hint`, if any, then its description."""
    hint = skill.argument_hint
    return f"{hint} · {skill.description}" if hint else skill.description


def _skills(repl: Repl, arg: str) -> None:
    """`/skills`: the list; `/skills disable NAME` / `enable NAME`: for this session."""
    action, _, name = arg.partition(" ")
    if action in ("disable", "enable"):
        _toggle(repl, action, name.strip())
        return
    if action in OVERRIDES:
        override(repl, action, name.split())
        return
    if arg:
        raise UsageError(f"usage: /skills [disable NAME | enable NAME | {OVERRIDE_USAGE}]")
    session = repl.session
    names = session.registry.names()
    if not names:
        where = " (skill directories: see `skillchat config show`)"
        repl.say(("no skills found", "warning"), where)
    active = set(session.chat.activated)
    for name in names:
        skill = session.registry.skills[name]
        mark = ("● ", "ok") if name in active else "  "
        shadowed = " (use /skill " + name + ")" if name in COMMANDS else ""
        note = " (user only)" if not skill.model_invocable else ""
        note += " (model only)" if not skill.user_invocable else ""
        note += f" ({skill.override})" if skill.override else ""
        repl.say(
            mark,
            (name, "strong"),
            shadowed,
            (note, "warning"),
            ("  " + one_line(skill.description), "muted"),
        )
    for name in session.settings.skills.disabled:
        repl.say("  ", (name, "strong"), ("  disabled", "warning"))
    for excluded in session.registry.excluded:
        if excluded.reason == "off" and excluded.name:
            repl.say("  ", (excluded.name, "strong"), ("  off (/skills reset NAME)", "warning"))


def _toggle(repl: Repl, action: str, name: str) -> None:
    """Disable or enable a skill name until the session ends; the catalog changes
    from the next message. The config file is not touched: `[skills] disabled`
    keeps a choice (said once, with the file)."""
    session = repl.session
    disabled = list(session.settings.skills.disabled)
    if not name:
        raise UsageError(f"usage: /skills {action} NAME")
    if action == "disable":
        if name not in session.registry.skills:
            raise UsageError(f"no usable skill named '{name}' (see /skills)")
        disabled.append(name)
    elif name in disabled:
        disabled.remove(name)
    else:
        raise UsageError(f"'{name}' is not disabled (see /skills)")
    session.disable_skills(tuple(disabled))
    repl.warn_skills()
    where = session.settings.config_path or "the config file"
    repl.say(
        (f"{name} {action}d for this session", "strong"),
        (f"; to keep it, edit [skills] disabled in {where}", "muted"),
    )


def _model(repl: Repl, arg: str) -> None:
    session = repl.session
    if arg:
        session.switch_model(arg)
    from skillchat.redact import redact

    base, gguf = session.target.api_base, session.target.gguf
    server = f"local model {gguf}" if gguf else redact(base) if base else "the provider's own"
    repl.say(
        "model: ",
        (session.target.model, "strong"),
        f" (backend: {session.backend.name}, server: {server})",
    )


def _reload(repl: Repl, arg: str) -> None:
    before = set(repl.session.registry.skills)
    repl.session.reload_skills()
    repl.warn_skills()
    after = set(repl.session.registry.skills)
    added, removed = sorted(after - before), sorted(before - after)
    line = counted(len(after), "skill")
    if added:
        line += f"; new: {', '.join(added)}"
    if removed:
        line += f"; gone: {', '.join(removed)}"
    repl.say((line, "muted"))


def _trust(repl: Repl, arg: str) -> None:
    """Trust skills by name, or `--all` of them (bound to their content now); without
    a name, list the skills whose allowed-tools do not count yet (untrusted or changed)."""
    from skillchat.skills.trust import TrustStore, apply_trust, needing_trust

    store = TrustStore.load(packages=repl.session.settings.run.packages)
    if store.problem:
        repl.consoles.warn(store.problem)
    registry = repl.session.registry
    skills = [registry.skills[n] for n in registry.names()]
    pending = needing_trust(store, skills) if arg in ("", "--all") else []
    if arg in ("", "--all") and not pending:
        repl.say(("every skill is trusted", "muted"))
        return
    if not arg:
        for skill, state in pending:
            repl.say("  ", (skill.name, "strong"), ("  " + state.describe(), "warning"))
        repl.say(("/trust NAME (or --all) trusts as it is now; a change revokes it", "muted"))
        return
    chosen = [skill for skill, _ in pending]
    for name in arg.split() if arg != "--all" else []:
        named = registry.get(name)
        if named is None:
            raise UsageError(f"no skill named '{name}' (see /skills)")
        chosen.append(named)
    lines = [apply_trust(store, skill) for skill in chosen]
    store.save()
    for line in lines:
        repl.say(("✓ ", "ok"), line)


def _compact(repl: Repl, arg: str) -> None:
    """Summarise the older turns now (engine/compaction.py); the loop's notices say
    what happened, or why nothing did."""
    if arg:
        raise UsageError("/compact takes no arguments")
    from skillchat.ui.console import keys_unechoed

    with keys_unechoed():  # as while a reply streams: Ctrl-C stops it, nothing echoed
        repl.session.chat.compact()


def _exit(repl: Repl, arg: str) -> bool:
    return True


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("help", "", "this list", _help),
        Command(
            "skills",
            "[disable|enable NAME]",
            "the skills (● activated in this chat); disable or enable one for this "
            f"session; {OVERRIDE_USAGE} for good",
            _skills,
        ),
        Command("model", "[NAME]", "show the model, or switch to NAME", _model),
        Command("new", "", "start a new chat", new_chat),
        Command(
            "retry",
            "",
            "send the last message again (after an error, or for another answer)",
            retry_last,
        ),
        Command("chats", "", f"the {CHATS_SHOWN} most recent saved chats", list_chats),
        Command("resume", "ID", "continue a saved chat", resume_chat),
        Command("show", "N", "the whole result of tool card #N", show_card),
        Command(
            "attach", "PATH", "attach a workspace file to the next message (or @PATH)", attach_file
        ),
        Command("files", "[GLOB]", "list the workspace as the model sees it", list_files),
        Command("grep", "TEXT", "search the workspace as the model would", grep_files),
        Command("compact", "", "replace older turns by a summary, skills kept", _compact),
        Command("context", "", "what fills the context window, by part", show_context),
        Command("copy", "[N]", "the last answer (or answer N) to the clipboard", copy_answer),
        Command("reload", "", "rescan the skill directories", _reload),
        Command("trust", "[NAME]", "trust a project skill's allowed-tools (or list them)", _trust),
        Command("exit", "", "leave (or /quit, Ctrl-D)", _exit),
        Command("quit", "", "leave", _exit),
    )
}
ALIASES = {"quit"}


def find(text: str) -> tuple[Command, str] | None:
    """The built-in command `text` runs, with its argument; None for a message."""
    if not text.startswith("/"):
        return None
    name, *rest = text[1:].split(None, 1) or [""]
    command = COMMANDS.get(name)
    return (command, rest[0].strip() if rest else "") if command else None


def completions() -> list[tuple[str, str]]:
    """(name, help) of each command, for Tab completion."""
    return [(c.name, c.help) for c in COMMANDS.values() if c.name not in ALIASES]
