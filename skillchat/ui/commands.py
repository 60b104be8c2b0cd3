"""The REPL's built-in commands: `/help`, `/skills`, `/model`, `/new`, `/retry`, `/chats`,
`/resume`, `/show`, `/attach`, `/files`, `/grep`, `/compact`, `/context`, `/copy`,
`/reload`, `/trust`, `/exit`.

A line whose first word is one of these runs it and never reaches the model; a
skill with the same name is reached with `/skill NAME`, and the REPL
says so once. Each command is a function of the session and the rest of the line;
it returns True only to end the session. Every line goes through `_print`, onto
the consoles of the `Repl` it is given, each part made safe (ui/safe.py): skill
descriptions, chat titles, tool arguments and results are text, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillchat.errors import UsageError
from skillchat.ui.context_view import show_context
from skillchat.ui.copy_command import copy_answer
from skillchat.ui.override_command import OVERRIDE_USAGE, OVERRIDES, override
from skillchat.ui.safe import counted, one_line

if TYPE_CHECKING:
    from skillchat.skills.model import Skill
    from skillchat.ui.repl import Repl

CHATS_SHOWN = 20
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


def _print(repl: Repl, *parts: str | tuple[str, str]) -> None:
    """One line on the REPL's stdout console from plain strings and (text, style)
    pairs, each cleaned."""
    from skillchat.ui import safe

    repl.consoles.out.print(safe.line(*parts))


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
        _print(repl, (left.ljust(width), "strong"), text)
    _print(repl, ("keys".ljust(width), "muted"), keys)
    if skills:
        _print(repl, ("skills that take arguments (their argument-hint):", "muted"))
    for left, text in skills[:SKILL_USAGES_SHOWN]:
        if len(left) > USAGE_ALIGNED:
            _print(repl, (left, "strong"))
            left = ""
        _print(repl, (left.ljust(width), "strong"), one_line(text, 80))
    if (more := len(skills) - SKILL_USAGES_SHOWN) > 0:
        _print(repl, (f"… and {more} more (Tab after / shows them)", "muted"))


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
        _print(repl, ("no skills found", "warning"), where)
    active = set(session.chat.activated)
    for name in names:
        skill = session.registry.skills[name]
        mark = ("● ", "ok") if name in active else "  "
        shadowed = " (use /skill " + name + ")" if name in COMMANDS else ""
        note = " (user only)" if not skill.model_invocable else ""
        note += " (model only)" if not skill.user_invocable else ""
        note += f" ({skill.override})" if skill.override else ""
        _print(
            repl,
            mark,
            (name, "strong"),
            shadowed,
            (note, "warning"),
            ("  " + one_line(skill.description), "muted"),
        )
    for name in session.settings.skills.disabled:
        _print(repl, "  ", (name, "strong"), ("  disabled", "warning"))
    for excluded in session.registry.excluded:
        if excluded.reason == "off" and excluded.name:
            _print(repl, "  ", (excluded.name, "strong"), ("  off (/skills reset NAME)", "warning"))


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
    _print(
        repl,
        (f"{name} {action}d for this session", "strong"),
        (f"; to keep it, edit [skills] disabled in {where}", "muted"),
    )


def _retry(repl: Repl, arg: str) -> None:
    """`/retry`: send the last message again, as typed. After a failure it is the
    turn that got no answer (the failed copy is not sent twice); after an answer it
    asks for another, both answers staying in the chat."""
    text = repl.last_sent
    if text is None:  # a resumed chat: its last message as stored (`/name` applied)
        users = [m for m in repl.session.chat.messages if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        text = content if isinstance(content, str) else None
    if not text:
        raise UsageError("nothing to retry: no message was sent in this chat")
    _print(repl, ("retrying: ", "muted"), (one_line(text)[:80], "muted"))
    repl.send(text)


def _model(repl: Repl, arg: str) -> None:
    session = repl.session
    if arg:
        session.switch_model(arg)
    from skillchat.redact import redact

    base, gguf = session.target.api_base, session.target.gguf
    server = f"local model {gguf}" if gguf else redact(base) if base else "the provider's own"
    _print(
        repl,
        "model: ",
        (session.target.model, "strong"),
        f" (backend: {session.backend.name}, server: {server})",
    )


def _new(repl: Repl, arg: str) -> None:
    repl.start_chat(None)
    _print(repl, ("new chat", "muted"))


def _chats(repl: Repl, arg: str) -> None:
    from skillchat.chats.export import local_time

    chats = repl.session.store.list_chats(limit=CHATS_SHOWN) if repl.session.store else []
    if not chats:
        _print(repl, ("no saved chats yet", "muted"))
    for chat in chats:
        current = chat.id == repl.session.chat_id
        _print(
            repl,
            ("* " if current else "  ", "ok"),
            (chat.id, "strong"),
            f"  {local_time(chat.updated_at)}  {chat.message_count:>4} msgs  ",
            one_line(chat.title or "(untitled)"),
        )


def _resume(repl: Repl, arg: str) -> None:
    if not arg:
        raise UsageError("/resume needs a chat id (see /chats; Tab completes)")
    store = repl.session.store
    if store is None:
        raise UsageError("/resume needs the chat database")
    repl.start_chat(store.load_transcript(arg))
    repl.show_resumed()


def _show(repl: Repl, arg: str) -> None:
    records = repl.view.records
    if not arg.isdigit() or not 1 <= int(arg) <= len(records):
        shown = f"1-{len(records)}" if records else "none yet in this chat"
        raise UsageError(f"/show needs the number of a tool card ({shown})")
    record = records[int(arg) - 1]
    from skillchat.ui import safe

    head = safe.exact(f"#{arg} {record.name}", "strong")  # invisible characters marked
    repl.consoles.out.print(head.append("  ").append(safe.exact(record.arguments, "muted")))
    try:
        value = json.loads(record.result.content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        _print(repl, record.result.content)
        return
    for key, item in value.items():  # get_skill's documentation as text, not one JSON line
        if isinstance(item, str) and "\n" in item:
            _print(repl, (f"{key}:", "key"))
            _print(repl, item)
        else:
            _print(repl, (f"{key}: ", "key"), json.dumps(item, ensure_ascii=False))
    if (fork := repl.view.forks.get(int(arg))) is not None:  # a fork's card: its transcript
        from skillchat.ui.fork_view import transcript_lines

        for part in transcript_lines(fork):
            _print(repl, part)


def _attach(repl: Repl, arg: str) -> None:
    """Queue a workspace file for the next message (read now, so errors show at once)."""
    from skillchat.ui.cards import human_size

    if not arg:
        attachments = repl.session.chat.attachments
        pending = attachments.pending if attachments else []
        if not pending:
            raise UsageError("/attach needs a path in the workspace (Tab completes)")
        _print(repl, ("for the next message: ", "muted"), ", ".join(pending))
        return
    file = repl.session.chat.attach(arg)
    cut = ", cut to the limit" if file.truncated else ""
    _print(
        repl,
        ("attached ", "muted"),
        (file.path, "strong"),
        (f" ({human_size(file.size)}{cut}): it goes with your next message", "muted"),
    )


def _find(repl: Repl, tool: str, args: dict[str, str]) -> None:
    """Run a workspace tool as the model would, and show what the model would get:
    every entry or snippet, then the notices. Nothing joins the chat."""
    from skillchat.ui.cards import human_size

    if repl.session.workspace is None:
        raise UsageError(
            f"/{'files' if tool == 'list_files' else 'grep'} needs a workspace: "
            "--workspace DIR, or `workspace` in the config"
        )
    result = json.loads(repl.session.run_tool(tool, json.dumps(args)).content)
    if not result.get("success"):
        raise UsageError(f"{result['errorCode']}: {result['errors'][0]}")
    for entry in result.get("entries", []):
        size = f"  {human_size(entry['sizeBytes'])}" if "sizeBytes" in entry else ""
        _print(repl, entry["path"], (size, "muted"))
    for hit in result.get("results", []):
        mark = "  (already in the chat)" if hit["alreadyInContext"] else ""
        _print(repl, (hit["docPath"], "strong"), ("  " + hit["chunkPath"] + mark, "muted"))
        _print(repl, hit["snippet"])
    if "results" in result:
        _print(
            repl, (f"{result['filesMatched']} of {result['filesSearched']} files match", "muted")
        )
    for notice in result["notices"]:
        _print(repl, (notice, "warning"))


def _files(repl: Repl, arg: str) -> None:
    _find(repl, "list_files", {"glob": arg} if arg else {})


def _grep(repl: Repl, arg: str) -> None:
    if not arg:
        raise UsageError("/grep needs the text to find")
    _find(repl, "search_files", {"query": arg})


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
    _print(repl, (line, "muted"))


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
        _print(repl, ("every skill is trusted", "muted"))
        return
    if not arg:
        for skill, state in pending:
            _print(repl, "  ", (skill.name, "strong"), ("  " + state.describe(), "warning"))
        _print(repl, ("/trust NAME (or --all) trusts as it is now; a change revokes it", "muted"))
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
        _print(repl, ("✓ ", "ok"), line)


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
        Command("new", "", "start a new chat", _new),
        Command(
            "retry",
            "",
            "send the last message again (after an error, or for another answer)",
            _retry,
        ),
        Command("chats", "", f"the {CHATS_SHOWN} most recent saved chats", _chats),
        Command("resume", "ID", "continue a saved chat", _resume),
        Command("show", "N", "the whole result of tool card #N", _show),
        Command(
            "attach", "PATH", "attach a workspace file to the next message (or @PATH)", _attach
        ),
        Command("files", "[GLOB]", "list the workspace as the model sees it", _files),
        Command("grep", "TEXT", "search the workspace as the model would", _grep),
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
