"""`allowed-tools`: what a skill says it may use, and whether a command it asks
for runs without a prompt.

A skill's frontmatter may say `allowed-tools: Read Grep Bash(git:*) Bash(python
scripts/fill.py:*)` (Claude Code's syntax; a YAML list is joined with spaces by the
loader). Entries are separated by spaces or commas *outside* parentheses, so
`Bash(git log:*)` stays one entry. Each entry is one of:

- `Bash` or `Bash(*)`: any command.
- `Bash(PREFIX:*)`: a command whose words start with PREFIX's words: `Bash(git log:*)`
  matches `git log` and `git log --oneline -3`, not `git logx` nor `git status`.
- `Bash(COMMAND)`: exactly that command (word by word, so quoting and spacing do not
  matter: `Bash(git status)` matches `git  "status"`).
- `Bash(...*...)`: `*` matches any characters: `Bash(npm run test*)` matches
  `npm run test:unit`; a single trailing ` *` is optional (`Bash(ls *)` matches `ls`).
- A word naming a file of the skill (a relative path whose first part the skill's
  folder has: `scripts/fill.py`, `./run.sh`, `fill.py`; or `$SKILL_DIR/x`) means
  *that file*, wherever the command runs from: `Bash(python3 scripts/fill.py:*)`
  matches `python3 /skills/NAME/scripts/fill.py` and `cd /skills/NAME && python
  scripts/fill.py`, but not `python3 scripts/fill.py` run from /workspace, which
  would run the workspace's own file (command_paths.py says how paths are read).
  A path the skill does not have (`bin/rails`) is a plain word, as in Claude Code.
  `python`, `python3` and `python3.X` are one program; `python3 -m MODULE` of a
  module of the skill matches only from the skill's folder.
- `Read`, `Grep`, `Glob`, `LS` (with or without a path in parentheses): skillchat's
  own read-only tools, which every skill may use anyway.
- Anything else (`Write`, `Edit`, `WebFetch`, `mcp__server__tool`, `Task`, ...) is
  kept, shown, and ignored: skillchat has no such tool.

Words are what the shell would pass (`shlex`, POSIX rules), and matching is on
words, never on raw text: a prefix cannot be stretched (`gitx`) and a quoted `;`
inside an argument is just an argument.

**Shell syntax.** A command line made of simple commands joined by `&&`, `||`,
`;`, `|` or `&` matches only if *every* simple command matches: `git status; rm -rf
~` does not match `Bash(git:*)`. Anything the word-level reading cannot vouch for is
never pre-approved, whatever the rules say, even under a bare `Bash`: command or
process substitution (`$(`, backticks, `<(`, `>(`, found anywhere, even quoted),
redirections (`>`, `<`, `2>&1`, here-documents), subshells and groups in `( )`, a
newline or any other control character, an unclosed quote. Such a command is
"complex": it asks (or, under `restrict`, is refused unless the skill allows every
command). Why not split and check them too: a redirection writes where the rule
never said, and the body of a substitution is a whole second shell program; the
user reads it in the consent prompt instead. An environment assignment in front
(`FOO=1 git log`, `GIT_SSH_COMMAND=... git`) is a different first word, so it does
not match: such variables can run other programs. A `cd` into the skill's own
folder needs no rule (it runs nothing), so `cd /skills/NAME && python3
scripts/fill.py` needs only the rule for the script.

**Policy** (`[run] allowed_tools`, see `decide`):

- `approve` (default): a *trusted* skill's matching command runs without asking;
  everything else asks.
- `restrict`: as `approve`, and a skill that declares `allowed-tools` can run
  nothing that does not match: the command is refused, and the reason names the
  list. This applies to untrusted skills too (it only narrows).
- `ignore`: `allowed-tools` is not read; every command asks.

An untrusted skill's `allowed-tools` never pre-approve anything (see trust.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from skillchat.mounts import SKILLS_MOUNT, WORKSPACE_MOUNT
from skillchat.skills.command_paths import (
    Place,
    changes_shell_state,
    expand_skill_dir,
    program,
    resolve,
    rule_target,
    runs_skill_module,
    wildcard_matches,
    working_folders,
)

if TYPE_CHECKING:
    from skillchat.skills.model import Skill

Decision = Literal["pre-approved", "ask", "refused"]

# Claude Code's read-only tools; skillchat's own read tools cover what they do.
READ_ONLY_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead"})
# Characters that can start substitution anywhere in a line, quoted or not.
_SUBSTITUTION = ("$(", "`", "<(", ">(")
# Shell operators that join simple commands; every part must match.
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&"})
_ENTRY = re.compile(r"^([A-Za-z_][\w.-]*)\((.*)\)$", re.S)


@dataclass(frozen=True)
class BashRule:
    """One `Bash(...)` entry. `kind` is `any`, `prefix`, `exact` or `wildcard`;
    `words` are the prefix or exact words; `text` the wildcard pattern."""

    entry: str
    kind: Literal["any", "prefix", "exact", "wildcard"]
    words: tuple[str, ...] = ()
    text: str = ""

    def matches(self, words: list[str], place: Place | None = None, cwd: str | None = None) -> bool:
        """Whether one simple command (its words), run in `cwd`, is allowed by this
        rule. A rule word naming a file of the skill (`place`) matches only a word
        that leads to that file from `cwd` (command_paths.py)."""
        if self.kind == "any":
            return True
        if self.kind == "wildcard":
            return wildcard_matches(self.text, words, place, cwd)
        if len(words) < len(self.words) or (self.kind == "exact" and len(words) > len(self.words)):
            return False
        if runs_skill_module(self.words, place) and (place is None or cwd != place.skill_dir):
            return False  # `python -m pkg.mod` imports from the folder it runs in
        for index, (ours, theirs) in enumerate(zip(self.words, words, strict=False)):
            target = rule_target(ours, place, program=index == 0)
            if target is None:
                same = program(ours) == program(theirs) if index == 0 else ours == theirs
                if not same:
                    return False
            elif not target or (index == 0 and "/" not in theirs) or resolve(theirs, cwd) != target:
                return False
        return True


@dataclass(frozen=True)
class AllowedTools:
    """A parsed `allowed-tools` value: the command rules, the read-only entries
    (served by skillchat's own tools), and the entries skillchat ignores."""

    declared: bool
    bash: tuple[BashRule, ...] = ()
    read_only: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    @property
    def any_command(self) -> bool:
        return any(rule.kind == "any" for rule in self.bash)

    def summary(self) -> str:
        """The command rules as the user wrote them, for messages."""
        return " ".join(rule.entry for rule in self.bash) or "no Bash(...) entry"


def split_entries(value: str) -> list[str]:
    """Split at spaces and commas outside parentheses: `Read, Bash(git log:*)` ->
    [`Read`, `Bash(git log:*)`]. An unclosed `(` keeps the rest as one entry."""
    entries: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                entries.append("".join(current))
                current = []
            continue
        depth += (char == "(") - (char == ")" and depth > 0)
        current.append(char)
    if current:
        entries.append("".join(current))
    return entries


def _bash_rule(entry: str, inner: str) -> BashRule | None:
    """The rule of `Bash(inner)`, or None when `inner` is not a readable command."""
    inner = inner.strip()
    if inner in ("*", ":*"):
        return BashRule(entry, "any")
    if inner.endswith(":*") and "*" not in inner[:-2]:
        words = _words(inner[:-2])
        return BashRule(entry, "prefix", tuple(words)) if words else None
    if "*" in inner:
        return BashRule(entry, "wildcard", text=inner)
    words = _words(inner)
    return BashRule(entry, "exact", tuple(words)) if words else None


def _words(text: str) -> list[str] | None:
    try:
        return shlex.split(text)
    except ValueError:
        return None


@lru_cache(maxsize=512)
def parse_allowed_tools(value: str | None) -> AllowedTools:
    """Parse an `allowed-tools` string (None: the skill declares none). Never raises:
    an entry that cannot be read is kept in `ignored`."""
    if value is None:
        return AllowedTools(declared=False)
    bash: list[BashRule] = []
    read_only: list[str] = []
    ignored: list[str] = []
    for entry in split_entries(value):
        match = _ENTRY.match(entry)
        tool = match.group(1) if match else entry
        if tool == "Bash":
            rule = BashRule(entry, "any") if match is None else _bash_rule(entry, match.group(2))
            (bash.append(rule) if rule else ignored.append(entry))
        elif tool in READ_ONLY_TOOLS:
            read_only.append(entry)
        else:
            ignored.append(entry)
    return AllowedTools(True, tuple(bash), tuple(read_only), tuple(ignored))


def _split(command: str) -> tuple[list[list[str]], list[str]] | None:
    """The words of each simple command in `command`, with the operators between them
    (`&&`, `;`, ...); None when the line uses shell syntax that word-level matching
    cannot vouch for (see the module doc)."""
    if any(s in command for s in _SUBSTITUTION):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in command):
        return None  # newlines, NUL, escape sequences: never pre-approved
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        return None
    commands: list[list[str]] = [[]]
    operators: list[str] = []
    for token in tokens:
        if token in _SEPARATORS:
            commands.append([])
            operators.append(token)
        elif token and set(token) <= set("();<>|&"):
            return None  # a redirection, a subshell, `;;`, or an operator we do not split
        else:
            commands[-1].append(token)
    if len(commands) > 1 and not commands[-1] and operators[-1] in (";", "&"):
        commands.pop()  # `git log &` or `make;`: a final terminator, not an empty command
        operators.pop()
    if any(not words for words in commands):
        return None  # an empty part: `;`, `a &&`, a leading `|`
    return commands, operators


@dataclass(frozen=True)
class Match:
    """How a command stands against a skill's rules: `rule` is the entry that
    matched (the first simple command's), `complex` that the line could not be read."""

    matched: bool
    complex: bool = False
    rule: str | None = None


def match_command(rules: AllowedTools, command: str, place: Place | None = None) -> Match:
    """Whether every simple command of `command` matches one of the `Bash` rules.

    With `place` (the claimed skill and where the command starts), `$SKILL_DIR` is
    read as the run's environment sets it, each command is matched from the folder
    it runs in, and a `cd` into the skill's own folder needs no rule (it runs
    nothing); without it, a rule naming a file of a skill matches nothing."""
    split = _split(command)
    if split is None:
        return Match(False, complex=True)
    parts, operators = split
    folders: list[str | None] = [None] * len(parts)
    skill_cds = [False] * len(parts)
    if place is not None:
        if not any(changes_shell_state(words) for words in parts):
            expanded = _split(expand_skill_dir(command, place.skill_dir))
            if expanded and [len(w) for w in expanded[0]] == [len(w) for w in parts]:
                parts = expanded[0]
        folders, skill_cds = working_folders(parts, operators, place)
    first: str | None = None
    for words, cwd, skill_cd in zip(parts, folders, skill_cds, strict=True):
        if skill_cd:
            continue
        rule = next((r for r in rules.bash if r.matches(words, place, cwd)), None)
        if rule is None:
            return Match(False)
        first = first or rule.entry
    return Match(first is not None, rule=first)


@dataclass(frozen=True)
class Verdict:
    """What to do with a command before it runs, and a one-line reason for the
    card, the consent prompt or the model (`NOT_ALLOWED` when refused)."""

    decision: Decision
    reason: str


def decide(
    command: str,
    *,
    skill: Skill | None,
    trusted: bool,
    mode: str = "approve",
    cwd: str = WORKSPACE_MOUNT,
) -> Verdict:
    """The `allowed-tools` policy for one command a skill asks for (None: no skill).

    `trusted` is the skill's trust state (trust.py); `mode` is `[run] allowed_tools`
    (one of `config.ALLOWED_TOOLS_MODES`, checked when the config is loaded); `cwd`
    is where the command starts in the sandbox (`/workspace` or `/scratch`). The skill
    is the model's claim (`skill_name`): a rule naming a file of it matches only a
    command that runs that file at `/skills/NAME/`, so a claim cannot lend one
    skill's rules to another's files or to the workspace's. No prompt; the only I/O
    is looking up which rule words name files of the skill's folder.
    """
    if mode == "ignore" or skill is None:
        why = "allowed_tools = ignore" if mode == "ignore" else "no skill named"
        return Verdict("ask", why)
    rules = parse_allowed_tools(skill.allowed_tools)
    if not rules.declared:
        return Verdict("ask", f"skill '{skill.name}' declares no allowed-tools")
    place = Place(f"{SKILLS_MOUNT}/{skill.name}", skill.root, cwd)
    found = match_command(rules, command, place)
    if mode == "restrict" and not found.matched and not (found.complex and rules.any_command):
        what = "uses shell syntax that cannot be checked" if found.complex else "does not match"
        return Verdict(
            "refused",
            f"[run] allowed_tools = restrict: skill '{skill.name}' may run only commands "
            f"matching its allowed-tools ({rules.summary()}), and this one {what}",
        )
    if not found.matched:
        if found.complex:
            return Verdict("ask", "shell syntax (substitution, redirection, ...) always asks")
        return Verdict("ask", f"not in skill '{skill.name}' allowed-tools")
    if not trusted:
        return Verdict(
            "ask", f"skill '{skill.name}' is not trusted: its allowed-tools count only once trusted"
        )
    return Verdict("pre-approved", f"allowed by {found.rule} in skill '{skill.name}' allowed-tools")
