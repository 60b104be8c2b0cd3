"""What a command's script declares it needs, never guessed from its imports.

For the script a command runs (found among its words: `/skills/NAME/...`,
`$SKILL_DIR/...`, `~/.agents/skills/NAME/...`, or a path relative to the skill), in
this order, the first that exists:

1. a PEP 723 block in the script (`# /// script` ... `dependencies`, `requires-python`);
2. `requirements.txt` beside the script, then in the skill's `scripts/`, then at its root.

A command that names no script of the skill takes 2. from `scripts/` and the root.
The config's `[packages]` table adds what a skill forgot (`skill-creator = ["pyyaml"]`).

Only plain requirements from the index are accepted (`name[extra] >=1, <2 ; marker`),
read by `packaging` (PEP 508's reference parser), one requirement per value: a line
break or any other control character in a value is refused, as it would start a new
line in a requirements file. What is kept is packaging's own rewriting of the parsed
requirement, and it reaches uv as one argument, never as a line of a file uv would
read options from. A line a safe install cannot honour (editable, VCS or URL or
path, an index or host option, an include, any other option) is refused with one
line naming it and its file: the install must never fetch from where the user did
not configure, nor build.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import RefusedDeclaration

MAX_DECLARATION_BYTES = 200_000
# The scripts whose declarations are looked for: Python's, and Node's (envs/node.py).
SCRIPT_SUFFIXES = (".py", ".pyw", ".js", ".mjs", ".cjs")
_PEP723 = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_REFUSED_OPTIONS = {
    "-e": "an editable install builds and runs the project's code",
    "--editable": "an editable install builds and runs the project's code",
    "-i": "only the index the user configured may be used",
    "--index-url": "only the index the user configured may be used",
    "--extra-index-url": "only the index the user configured may be used",
    "-f": "only the index the user configured may be used",
    "--find-links": "only the index the user configured may be used",
    "--trusted-host": "certificate checks stay on",
    "-r": "includes another file",
    "--requirement": "includes another file",
    "-c": "includes another file",
    "--constraint": "includes another file",
}


@dataclass(frozen=True)
class Declaration:
    """What one command needs: requirement strings, the Python they need, and where
    each came from (for `skills deps` and the consent card)."""

    packages: tuple[str, ...] = ()
    requires_python: str | None = None
    sources: tuple[str, ...] = ()
    script: Path | None = None


def check_requirement(text: str, where: str) -> str:
    """`text` as a plain index requirement (packaging's spelling of it), or
    RefusedDeclaration naming `where`."""
    if any(not ch.isprintable() for ch in text):
        raise RefusedDeclaration(
            f"{where}: `{escaped(text.strip())}` is not a requirement skillchat can read: "
            "a line break or control character (one requirement per value)"
        )
    line = text.strip()
    first = line.split(maxsplit=1)[0] if line else ""
    option = first.split("=", 1)[0]
    if option in _REFUSED_OPTIONS:
        raise RefusedDeclaration(f"{where}: `{line}` is refused: {_REFUSED_OPTIONS[option]}")
    if line.startswith("-"):
        raise RefusedDeclaration(f"{where}: `{line}` is refused: options are not accepted")
    lowered = line.lower()
    if "://" in line or lowered.startswith(("git+", "hg+", "svn+", "bzr+", "file:")):
        raise RefusedDeclaration(
            f"{where}: `{line}` is refused: only packages from the configured index, "
            "not URLs or version control"
        )
    if " @ " in line or line.startswith((".", "/", "~")) or "/" in line or "\\" in line:
        raise RefusedDeclaration(
            f"{where}: `{line}` is refused: a path or direct reference, not a package name"
        )
    if lowered.endswith((".whl", ".tar.gz", ".zip", ".tar.bz2")):
        raise RefusedDeclaration(f"{where}: `{line}` is refused: a file, not a package name")
    # Imported here: 10-30 ms that a session pays only once a skill declares packages
    # (this module is imported with the sandbox's tools, at every session's start).
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        parsed = Requirement(line)
    except InvalidRequirement:
        raise RefusedDeclaration(
            f"{where}: `{line}` is not a requirement skillchat can read"
        ) from None
    if parsed.url:
        raise RefusedDeclaration(
            f"{where}: `{line}` is refused: a path or direct reference, not a package name"
        )
    return str(parsed)


def escaped(text: str) -> str:
    """`text` with what is not printable spelled as an escape (`\\n`), for one line."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def read_requirements(root: Path, path: Path, shown: str) -> tuple[str, ...]:
    """The requirements of a requirements.txt of the skill at `root`, each line checked."""
    text = read_in_skill(root, path, shown)
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if line:
            out.append(check_requirement(line, f"{shown}:{number}"))
    return tuple(out)


def read_pep723(root: Path, path: Path, shown: str) -> tuple[tuple[str, ...], str | None] | None:
    """The PEP 723 `script` block of a script of the skill at `root`:
    (dependencies, requires-python), or None."""
    text = read_in_skill(root, path, shown)
    blocks = [m for m in _PEP723.finditer(text) if m.group("type") == "script"]
    if not blocks:
        return None
    if len(blocks) > 1:
        raise RefusedDeclaration(f"{shown}: more than one `# /// script` block")
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:]
        for line in blocks[0].group("content").splitlines(keepends=True)
    )
    try:
        data = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise RefusedDeclaration(f"{shown}: the `# /// script` block is not TOML: {exc}") from None
    deps = data.get("dependencies", [])
    python = data.get("requires-python")
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise RefusedDeclaration(f"{shown}: `dependencies` must be a list of strings")
    if python is not None and not isinstance(python, str):
        raise RefusedDeclaration(f"{shown}: `requires-python` must be a string")
    where = f"{shown} (# /// script)"
    return tuple(check_requirement(d, where) for d in deps), python


def read_in_skill(root: Path, path: Path, shown: str, limit: int = MAX_DECLARATION_BYTES) -> str:
    """The text of `path`, a file of the skill at `root`, read as every skill file is
    (safe_io/read.py): inside the folder, checked on what is opened, a regular file,
    at most `limit` bytes. These files are read on the host before a command runs,
    and a refusal quotes their lines to the model: a link out of the folder
    (`requirements.txt -> ../../../.env`, which an untrusted skill may hold) must
    not be followed."""
    from skillchat.errors import FileAccessError
    from skillchat.hardlinks import hard_links_allowed
    from skillchat.safe_io.read import Container, read_contained

    folder = Container(root, shown, "the skill's folder", hard_links=hard_links_allowed(root))
    try:
        found = read_contained(folder, path.relative_to(root).as_posix(), limit=limit)
    except (FileAccessError, ValueError) as exc:
        raise RefusedDeclaration(f"{shown}: cannot read: {exc}") from None
    if found.truncated:
        raise RefusedDeclaration(f"{shown}: larger than {limit} bytes")
    return found.text


def script_of(
    command: str, skill: str | None, roots: Mapping[str, Path]
) -> tuple[str | None, Path | None]:
    """The skill and the script file a command runs: the first word naming a file
    inside a skill's folder, however the command spells that folder."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        found = _skill_file(word, skill, roots)
        if found is not None:
            return found
    return skill, None


_SPELLINGS = re.compile(
    r"^(?:/skills|(?:~|/home/user)/(?:\.agents/skills|\.claude/skills|\.config/skillchat/skills))"
    r"/(?P<name>[^/]+)/(?P<rest>.+)$"
)


def _skill_file(word: str, skill: str | None, roots: Mapping[str, Path]) -> tuple[str, Path] | None:
    name: str | None
    if match := _SPELLINGS.match(word):
        name, rest = match.group("name"), match.group("rest")
    elif word.startswith(("$SKILL_DIR/", "${SKILL_DIR}/")) and skill:
        name, rest = skill, word.split("/", 1)[1]
    elif skill and not word.startswith(("/", "-", "~", "$")):
        name, rest = skill, word
    else:
        return None
    root = roots.get(name)
    if root is None or ".." in Path(rest).parts:
        return None
    path = root / rest
    if path.suffix not in SCRIPT_SUFFIXES or not path.is_file():
        return None
    return name, path


def declaration(
    skill: str, root: Path, script: Path | None, override: Sequence[str] = ()
) -> Declaration:
    """What a command of `skill` running `script` (or no script) needs."""
    packages: list[str] = []
    sources: list[str] = []
    python: str | None = None
    found = None
    if script is not None:
        found = read_pep723(root, script, shown_path(skill, root, script))
    if found is not None and script is not None:
        packages += found[0]
        python = found[1]
        sources.append(f"{shown_path(skill, root, script)} (# /// script)")
    else:
        places = [script.parent] if script is not None else []
        places += [root / "scripts", root]
        seen: set[Path] = set()
        for folder in places:
            candidate = folder / "requirements.txt"
            if candidate in seen:
                continue
            seen.add(candidate)
            if candidate.is_file():
                shown = shown_path(skill, root, candidate)
                packages += read_requirements(root, candidate, shown)
                sources.append(shown)
                break
    if override:
        where = f"config [packages] {skill}"
        packages += [check_requirement(p, where) for p in override]
        sources.append(where)
    unique = tuple(dict.fromkeys(packages))
    return Declaration(unique, python, tuple(sources), script)


def shown_path(skill: str, root: Path, path: Path) -> str:
    """A declaration's file as the model and the user see it: /skills/NAME/..."""
    try:
        return f"/skills/{skill}/{path.relative_to(root).as_posix()}"
    except ValueError:
        return str(path)


def python_satisfies(version: tuple[int, ...], spec: str | None) -> bool:
    """Whether `version` meets a `requires-python` (comma-separated clauses)."""
    if not spec:
        return True
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(===|==|!=|~=|<=|>=|<|>)\s*([0-9.*]+)\s*", clause)
        if not match:
            return False
        op, text = match.groups()
        if text.endswith(".*"):
            want = tuple(int(p) for p in text[:-2].split("."))
            same = version[: len(want)] == want
            if (op == "==" and not same) or (op == "!=" and same):
                return False
            continue
        want = tuple(int(p) for p in text.split("."))
        have = version[: max(len(want), 1)] + (0,) * (len(want) - len(version))
        ok = {
            "==": have == want,
            "===": have == want,
            "!=": have != want,
            ">=": have >= want,
            "<=": have <= want,
            ">": have > want,
            "<": have < want,
            "~=": have >= want and version[: len(want) - 1] == want[:-1],
        }[op]
        if not ok:
            return False
    return True
