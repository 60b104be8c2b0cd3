"""The `old` arm's skill: a snapshot of the skill before an edit, from a folder
(`--baseline PATH`) or from git (`--baseline-ref REF`: the skill's folder as it was
at that commit of the repository it lives in), staged as a plain copy.

What may differ between the `with` and `old` arms is the varied axis: the skill's
instructions and files (SKILL.md's body and description, scripts, references).
What the skill declares about its environment may not, or the comparison would
measure the environment: `allowed-tools` (which commands run without asking),
`context`, `model`, `disable-model-invocation`, `user-invocable`, `paths`, and the
packages its scripts declare (every requirements.txt, package.json and
package-lock.json, and each Python script's PEP 723 block). A difference is one
line and nothing runs (`drift`).

Neither source may bring a link: a snapshot folder that is itself a link, or holds
one, is refused (in the sandbox a link would resolve to whatever is mounted there,
and read on the host it could reach a key); from git a link or a submodule is
refused the same way. Nothing from git is checked out: each blob is read with
`git cat-file` and written as a file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from skillchat.errors import RefusedDeclaration, UsageError
from skillchat.sandbox.envs.declared import read_pep723
from skillchat.skills.frontmatter import SKILL_MD_NAMES
from skillchat.skills.model import Skill

# The frontmatter keys that set the skill's environment, not its instructions.
ENVIRONMENT_KEYS = (
    "allowed-tools",
    "context",
    "model",
    "disable-model-invocation",
    "user-invocable",
    "paths",
)
PACKAGE_FILES = ("requirements.txt", "package.json", "package-lock.json")
GIT_TIMEOUT_S = 60
MAX_SNAPSHOT_BYTES = 200_000_000


def snapshot_folder(path: Path, target: Path) -> None:
    """Copy the folder at `path` to `target`: a real folder holding a SKILL.md,
    without links, within MAX_SNAPSHOT_BYTES."""
    where = f"--baseline {path}"
    if path.is_symlink():
        raise UsageError(f"{where}: is a link; give the folder itself")
    if not path.is_dir() or not any((path / n).is_file() for n in SKILL_MD_NAMES):
        raise UsageError(f"{where}: not a skill folder (no SKILL.md in it)")
    total = 0
    for folder, dirs, files in os.walk(path):
        rel = Path(folder).relative_to(path)
        (target / rel).mkdir(parents=True, exist_ok=True)
        for name in [*dirs, *files]:
            entry = Path(folder) / name
            if entry.is_symlink():
                raise UsageError(f"{where}: {rel / name} is a link; a snapshot holds files only")
        for name in files:
            entry = Path(folder) / name
            if not entry.is_file():
                raise UsageError(f"{where}: {rel / name} is not a regular file")
            total += entry.stat().st_size
            if total > MAX_SNAPSHOT_BYTES:
                raise UsageError(f"{where}: larger than {MAX_SNAPSHOT_BYTES:,} bytes")
            data = entry.read_bytes()
            (target / rel / name).write_bytes(data)
            if os.access(entry, os.X_OK):
                (target / rel / name).chmod(0o755)


def snapshot_ref(skill_root: Path, ref: str, target: Path) -> None:
    """Write the skill's folder as it was at `ref` of its git repository to `target`."""
    where = f"--baseline-ref {ref}"
    top = _git(skill_root, where, "rev-parse", "--show-toplevel").strip()
    if not top:
        raise UsageError(f"{where}: the skill's folder is not in a git repository")
    commit = _git(
        skill_root,
        where,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{ref}^{{commit}}",
    ).strip()
    if not commit:
        raise UsageError(f"{where}: no such commit in {top}")
    prefix = skill_root.resolve().relative_to(Path(top).resolve()).as_posix()
    listing = _git(skill_root, where, "ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix)
    entries = [line for line in listing.split("\0") if line]
    if not entries:
        raise UsageError(f"{where}: the skill's folder {prefix} is not in that commit")
    total = 0
    for entry in entries:
        meta, _, name = entry.partition("\t")
        mode, kind, blob = meta.split()
        rel = Path(name).relative_to(prefix)
        if kind != "blob" or mode == "120000":
            raise UsageError(f"{where}: {rel} is a link or submodule; a snapshot holds files only")
        data = _git_bytes(skill_root, where, "cat-file", "blob", blob)
        total += len(data)
        if total > MAX_SNAPSHOT_BYTES:
            raise UsageError(f"{where}: larger than {MAX_SNAPSHOT_BYTES:,} bytes")
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_bytes(data)
        if mode == "100755":
            (target / rel).chmod(0o755)
    if not any((target / n).is_file() for n in SKILL_MD_NAMES):
        raise UsageError(f"{where}: the skill's folder has no SKILL.md at that commit")


def _git_bytes(cwd: Path, where: str, *args: str) -> bytes:
    """git's output; a git that cannot run or fails is one line."""
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{where}: git did not run ({exc})") from None
    if done.returncode != 0 and args[0] != "rev-parse":
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"{where}: git {args[0]} failed ({said[-1] if said else done.returncode})")
    return done.stdout


def _git(cwd: Path, where: str, *args: str) -> str:
    return _git_bytes(cwd, where, *args).decode(errors="replace")


def drift(current: Skill, old: Skill) -> str | None:
    """What the old version declares differently about its environment, or None."""
    for key in ENVIRONMENT_KEYS:
        if current.frontmatter.get(key) != old.frontmatter.get(key):
            return f"its frontmatter's `{key}`"
    mine, theirs = _packages(current.root), _packages(old.root)
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            return f"the packages it declares ({name})"
    return None


def _packages(root: Path) -> dict[str, str]:
    """Every package declaration of the folder, by path: a package file's text, a
    Python script's PEP 723 block (its parsed form, or why it is refused)."""
    found: dict[str, str] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if name in PACKAGE_FILES:
                found[rel] = path.read_text(errors="replace")
            elif name.endswith(".py"):
                try:
                    block = read_pep723(root, path, rel)
                except RefusedDeclaration as exc:
                    block = (("refused", str(exc)), None)
                if block is not None:
                    found[rel] = repr(block)
    return found
