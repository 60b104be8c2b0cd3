"""Where hooks are configured, and each read into a `Hook` (or one line saying why not).

Four places, each its own source:

- the user's config file, `[[hooks.EVENT]]` tables: the user's own, run on the host
  as the user, never asked about;
- the project's `.skillchat/config.toml` in the folder skillchat starts in (where
  the project's `./skills`, `./.agents/skills` and `./.claude/skills` are found):
  came with the project, so each needs the user's trust first;
- a skill's `hooks:` frontmatter: needs trust, and runs in the sandbox while the
  skill is active in the chat;
- an installed plugin's hooks file (hooks/plugin_hooks.py): needs trust, and runs
  in the sandbox with the plugin's folders.

An entry is `{event, command, matcher?, timeout?}`; in a skill's frontmatter also
Claude Code's nesting (`PreToolUse: [{matcher, hooks: [{type: command, command}]}]`),
and either spelling of an event (`pre_tool_use`, `PreToolUse`). A bad entry (a
missing file, an unknown event, a matcher that is no regular expression) is one line
in `problems` and left out; the others are read.

A hook's `digest` is what trust is bound to: its source, its definition and the
bytes of every file its command names. The files are the command's words that are
paths (`./check.sh`, `hooks/x.py`, `/abs/script`): each must exist, relative to the
hook's folder (the project's, the skill's); a bare program name (`python3`, `jq`) is
looked up in PATH as the shell does and is not part of the digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillchat.hooks import PROJECT_CONFIG

if TYPE_CHECKING:
    from skillchat.skills.model import Skill

# skillchat's event names -> Claude Code's (`hook_event_name`, and accepted in config).
EVENTS = {
    "session_start": "SessionStart",
    "user_prompt_submit": "UserPromptSubmit",
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "pre_compact": "PreCompact",
    "stop": "Stop",
    "notification": "Notification",
}
_BY_CLAUDE_NAME = {claude: ours for ours, claude in EVENTS.items()}
# The events whose hooks match a tool's name (`matcher`); the others ignore it.
TOOL_EVENTS = frozenset({"pre_tool_use", "post_tool_use"})
_VARIABLE = re.compile(r"\$(?:(\w+)|\{(\w+)\})")
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0
MAX_HOOK_FILE_BYTES = 10_000_000  # a script hashed for trust: larger is refused
MAX_PROJECT_CONFIG_BYTES = 1_000_000

Source = Literal["user", "project", "skill", "plugin"]


@dataclass(frozen=True)
class Hook:
    """One command attached to one event."""

    event: str  # a key of EVENTS
    command: str  # one shell line, as written
    matcher: str | None  # a regular expression on the tool's name; None: every tool
    timeout_s: float
    source: Source
    origin: Path  # the file it is written in (a config file, a SKILL.md)
    folder: Path  # where its relative paths start, and where it runs on the host
    files: tuple[Path, ...]  # the files its command names, part of its digest
    digest: str
    skill: str | None = None  # the skill whose frontmatter holds it
    plugin: str | None = None  # the installed plugin whose hooks file holds it

    @property
    def needs_trust(self) -> bool:
        """A project's, a skill's or a plugin's: it came with what the user downloaded."""
        return self.source != "user"

    @property
    def sandboxed(self) -> bool:
        """A skill's or a plugin's: a package's code, never run on the host."""
        return self.source in ("skill", "plugin")

    @property
    def where(self) -> str:
        """Its source as the user is shown it."""
        if self.plugin:
            return f"plugin {self.plugin}"
        return f"skill {self.skill}" if self.skill else f"{self.source} ({self.origin})"

    @property
    def short_id(self) -> str:
        """What `skillchat hooks trust` takes: the digest's first 12 characters."""
        return self.digest[:12]

    def matches(self, tool: str | None) -> bool:
        """Whether it runs for `tool` (events without a tool: always)."""
        if self.event not in TOOL_EVENTS or self.matcher in (None, "", "*"):
            return True
        return tool is not None and re.fullmatch(self.matcher, tool) is not None


@dataclass
class Found:
    """Every hook of a session, and one line for each entry that could not be read."""

    hooks: list[Hook]
    problems: list[str]

    def of(self, event: str) -> list[Hook]:
        return [h for h in self.hooks if h.event == event]


def event_name(name: object) -> str | None:
    """skillchat's name of an event written either way; None when unknown."""
    if not isinstance(name, str):
        return None
    return name if name in EVENTS else _BY_CLAUDE_NAME.get(name)


def read_table(
    table: object, *, source: Source, origin: Path, folder: Path, skill: str | None = None
) -> Found:
    """The hooks of one `hooks` table (the config's `[hooks]`, a skill's `hooks:`, a
    plugin's hooks file)."""
    found = Found([], [])
    label = f"skill {skill}" if skill else str(origin)
    if not isinstance(table, Mapping):
        found.problems.append(f"{label}: 'hooks' must be a table of events")
        return found
    for name, entries in table.items():
        event = event_name(name)
        if event is None:
            known = ", ".join(EVENTS)
            found.problems.append(f"{label}: unknown hook event '{name}' ({known})")
            continue
        for entry in _flattened(entries):
            hook = _read_entry(entry, event, source, origin, folder, skill)
            if isinstance(hook, str):
                found.problems.append(f"{label}: {event} hook: {hook}")
            else:
                found.hooks.append(hook)
    return found


def _flattened(entries: object) -> Iterable[object]:
    """Entries as `{command, matcher, timeout}`: Claude Code's `{matcher, hooks: [...]}`
    groups opened, a lone table taken as a list of one."""
    for entry in entries if isinstance(entries, list) else [entries]:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("hooks"), list):
            yield entry
            continue
        matcher = entry.get("matcher")
        for hook in entry["hooks"]:
            yield {"matcher": matcher, **hook} if isinstance(hook, Mapping) else hook


def _read_entry(
    entry: object,
    event: str,
    source: Source,
    origin: Path,
    folder: Path,
    skill: str | None,
) -> Hook | str:
    """One hook, or why it cannot be one."""
    if not isinstance(entry, Mapping):
        return "must be a table with a 'command'"
    command, matcher, timeout = entry.get("command"), entry.get("matcher"), entry.get("timeout")
    if entry.get("type", "command") != "command":
        return f"type '{entry.get('type')}' is not supported (only 'command')"
    if not isinstance(command, str) or not command.strip():
        return "needs a 'command' (one shell line)"
    if matcher is not None and not isinstance(matcher, str):
        return "'matcher' must be a string"
    if matcher not in (None, "", "*"):
        try:
            re.compile(matcher)
        except re.error as exc:
            return f"matcher {matcher!r} is not a regular expression ({exc})"
    if timeout is None:
        timeout = DEFAULT_TIMEOUT_S
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return "'timeout' must be a number of seconds above 0"
    files = _named_files(command, folder, _variables(source, folder))
    if isinstance(files, str):
        return files
    definition = {
        "source": source,
        "origin": str(origin),
        "skill": skill,
        "event": event,
        "matcher": matcher,
        "command": command,
        "timeout": timeout,
    }
    return Hook(
        event=event,
        command=command,
        matcher=matcher or None,
        timeout_s=min(float(timeout), MAX_TIMEOUT_S),
        source=source,
        origin=origin,
        folder=folder,
        files=files,
        digest=_digest(definition, files),
        skill=skill,
    )


def _variables(source: Source, folder: Path) -> Mapping[str, str] | None:
    """What `$VAR` and `${VAR}` in a hook's command are read as, as its shell will:
    on the host the user's environment, with `$CLAUDE_PROJECT_DIR` and
    `$SKILLCHAT_PROJECT_DIR` the folder (Claude Code's hooks name their scripts
    `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh`); for a plugin's, only its root
    (`${CLAUDE_PLUGIN_ROOT}/hooks/x.sh`); a skill's: nothing."""
    if source == "skill":
        return None
    if source == "plugin":
        return {"PLUGIN_ROOT": str(folder), "CLAUDE_PLUGIN_ROOT": str(folder)}
    return {**os.environ, "CLAUDE_PROJECT_DIR": str(folder), "SKILLCHAT_PROJECT_DIR": str(folder)}


def _named_files(
    command: str, folder: Path, env: Mapping[str, str] | None
) -> tuple[Path, ...] | str:
    """The files `command` names, each existing; or why not (a missing one), its
    variables read from `env` first."""
    try:
        words = shlex.split(command)
    except ValueError:
        return f"cannot read its command line ({command!r}: an unclosed quote)"
    if env is not None:
        words = [_VARIABLE.sub(lambda m: env.get(m[1] or m[2], m[0]), w) for w in words]
    files: list[Path] = []
    for n, word in enumerate(words):
        pathlike = word.startswith(("/", "./", "../", "~/")) or (n == 0 and "/" in word)
        path = folder / Path(word).expanduser()
        if pathlike and not path.is_file():
            return f"names a missing file: {word} (command: {command})"
        if pathlike and path.stat().st_size > MAX_HOOK_FILE_BYTES:
            return f"names a file over {MAX_HOOK_FILE_BYTES // 1_000_000} MB: {word}"
        if pathlike or (n > 0 and _is_file(path)):  # `python3 hook.py`'s script too
            files.append(path.resolve())
    return tuple(files)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _digest(definition: Mapping[str, Any], files: Iterable[Path]) -> str:
    """SHA-256 of the definition and of every named file's path and bytes: a hook
    whose script changed is another hook, untrusted until trusted again."""
    h = hashlib.sha256(json.dumps(definition, sort_keys=True).encode())
    for path in files:
        h.update(b"\0file\0" + str(path).encode() + b"\0")
        try:
            with path.open("rb") as fh:
                h.update(fh.read(MAX_HOOK_FILE_BYTES + 1))
        except OSError as exc:
            h.update(f"unreadable: {exc.strerror}".encode())
    return h.hexdigest()


def find_hooks(
    user_table: object, user_config: Path | None, cwd: Path, skills: Iterable[Skill]
) -> Found:
    """Every hook of a session started in `cwd`: the user's (`user_table`, the config
    file's `[hooks]`), the project's, each local skill's frontmatter (a skill
    served over MCP is read, never run: its hooks are not), and each installed
    plugin's."""
    from skillchat.hooks.plugin_hooks import plugin_hooks

    found = Found([], [])
    if user_table is not None and user_config is not None:
        _add(found, read_table(user_table, source="user", origin=user_config, folder=cwd))
    project = cwd / PROJECT_CONFIG
    if project.is_file():
        table = _project_table(project)
        if isinstance(table, str):
            found.problems.append(table)
        elif table is not None:
            _add(found, read_table(table, source="project", origin=project, folder=cwd))
    for skill in skills:
        table = skill.frontmatter.get("hooks")
        if table is not None and skill.remote is None:
            read = read_table(
                table, source="skill", origin=skill.skill_md, folder=skill.root, skill=skill.name
            )
            _add(found, read)
    _add(found, plugin_hooks())
    return found


def _add(found: Found, more: Found) -> None:
    found.hooks += more.hooks
    found.problems += more.problems


def _project_table(path: Path) -> object | str | None:
    """The `[hooks]` of the project's config, None when it has none, or one line."""
    import tomllib

    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_PROJECT_CONFIG_BYTES + 1)
        if len(raw) > MAX_PROJECT_CONFIG_BYTES:
            return f"{path}: over {MAX_PROJECT_CONFIG_BYTES // 1_000_000} MB, its hooks not read"
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"{path}: cannot read the project's hooks: {exc}"
    return data.get("hooks")
