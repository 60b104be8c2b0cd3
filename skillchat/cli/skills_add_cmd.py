"""`skillchat skills add | remove | verify`: installing skills from git or a folder,
with a lock that says what was installed (skills/install.py, skills/lock.py).

Everything a repository supplies (names, descriptions, file names, licence,
`allowed-tools`) reaches the terminal through ui/safe.py.
"""

from __future__ import annotations

import os
import select
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skillchat.cli import plugin_cmd
from skillchat.cli.common import ConfigOpt, JsonOpt
from skillchat.cli.invocation import consoles_of
from skillchat.cli.skills_cmd import app, settings_and_registry
from skillchat.errors import FrontmatterError, InstallError
from skillchat.ui import safe

if TYPE_CHECKING:
    from skillchat.ui.console import Consoles

ProjectOpt = Annotated[
    bool,
    typer.Option("--project", help="The project's .agents/skills, not the user-level folder."),
]


def target_dir(project: bool) -> Path:
    """Where installs go: `./.agents/skills` (never through a symlink), or the
    user-level `~/.agents/skills`."""
    from skillchat.skills.install import project_skills_dir

    return project_skills_dir(Path.cwd()) if project else Path.home() / ".agents" / "skills"


def _show(consoles: Consoles, prepared: Any) -> None:
    """The summary the user says yes to: one block per skill, then what was left out."""
    out = consoles.out
    where = safe.one_line(prepared.source.shown)
    if prepared.source.ref:
        where += f" @ {safe.one_line(prepared.source.ref)}"
    if prepared.commit:
        where += f" (commit {prepared.commit})"
    out.print(safe.text(f"source: {where}"), soft_wrap=True)
    for c in prepared.skills:
        out.print(safe.line((safe.one_line(c.name), "strong"), " — ", safe.one_line(c.description)))
        lines = [
            f"path: {c.folder or '.'} · {c.files} files, {c.size:,} bytes · "
            f"licence: {c.license or 'none given'}",
            "scripts: " + (", ".join(c.scripts) or "none"),
            "allowed-tools: " + (c.allowed_tools or "none"),
            "packages: " + _packages(c),
            "inline commands: " + _inline(c.staged),
        ]
        lines += [f"! {finding}" for finding in c.findings]
        lines += [f"✗ {why}" for why in c.refusals]
        for line in lines:
            out.print(safe.text("  " + safe.one_line(line)), soft_wrap=True)
    for skipped in prepared.skipped:
        out.print(safe.text("left out: " + safe.one_line(skipped)), soft_wrap=True)


def _packages(c: Any) -> str:
    """What a candidate's scripts declare (see `_declared`)."""
    return _declared(c.name, c.staged, c.scripts)


def _declared(name: str, root: Path, scripts: list[str]) -> str:
    """What the skill's scripts declare, read as a run would read it (a PEP 723 block
    per script, else the requirements.txt it would use; sandbox/envs/declared.py):
    installed later, with consent, only when a command needs them."""
    from skillchat.errors import RefusedDeclaration
    from skillchat.sandbox.envs.declared import declaration

    found: dict[str, None] = {}
    try:
        for script in [None, *scripts]:
            path = root / script if script else None
            found.update(dict.fromkeys(declaration(name, root, path).packages))
    except RefusedDeclaration as exc:
        return f"refused: {exc}"
    except (OSError, ValueError) as exc:  # a script that is not text
        return f"unreadable: {exc}"
    return ", ".join(found) or "none declared"


def _inline(root: Path) -> str:
    """The inline commands of the skill's SKILL.md (tools/inline_commands.py): they
    run as its body loads, and the yes that installs it trusts its allowed-tools to
    pre-approve them."""
    from skillchat.skills.frontmatter import SKILL_MD_NAMES, locate
    from skillchat.tools.inline_commands import inline_commands

    for name in SKILL_MD_NAMES:
        path = root / name
        if path.is_symlink() or not path.is_file():  # an installed folder may hold
            continue  # a link to a file of the user's, or a FIFO: neither is read
        try:
            data = path.read_bytes()
        except OSError:
            continue
        try:
            where = locate(data, eof=True)
        except FrontmatterError:  # no frontmatter: the whole file is the body
            where = None
        body = data[where[2] if where else 0 :].decode("utf-8", errors="replace")
        found = inline_commands(body)
        shown = ", ".join(f"`{command}`" for command in found[:5])
        return shown + (f" and {len(found) - 5} more" if len(found) > 5 else "") or "none"
    return "none"


def _scripts_in(root: Path) -> list[str]:
    """An installed skill's scripts, as an install lists them: files under `scripts/`
    and executable files (bounded by the skill's own size limits at install)."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        script = rel.startswith("scripts/") or os.access(path, os.X_OK)
        if script and path.is_file() and not path.is_symlink():
            found.append(rel)
    return found


def _confirm(question: str, yes: bool) -> None:
    """Ask `question` on the terminal; InstallError unless the answer is yes.

    The answer is waited for in short turns rather than in one blocking read (as
    `input()` and `typer.confirm` do): a Ctrl-C that comes in the instant between
    the question being printed and the read starting would otherwise be noted but
    not acted on until a key came, leaving the command hung on its question. Each
    turn lets Python act on it, so Ctrl-C always stops the command (exit 130)."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise InstallError("not a terminal: read the summary above, then rerun with --yes")
    typer.echo(f"{question} [y/N]: ", nl=False)
    while not select.select([sys.stdin], [], [], 0.2)[0]:
        pass
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InstallError("nothing installed")


@app.command("add", short_help="Install skills from git or a folder, and lock them.")
def add_cmd(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="git URL, owner/repo[/path][@ref], or ./folder")],
    names: Annotated[list[str] | None, typer.Argument(help="Skills to install.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every skill in the source.")] = False,
    ref: Annotated[str | None, typer.Option("--ref", help="Branch, tag or commit.")] = None,
    path: Annotated[str | None, typer.Option("--path", help="Folder in the repository.")] = None,
    project: ProjectOpt = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Install without asking.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Fetch SOURCE (shallow; nothing in it runs), show what it holds, and on a yes
    install it atomically, locked to its commit and content, and trusted."""
    from skillchat.skills import install
    from skillchat.skills.gitfetch import parse_source
    from skillchat.skills.staged import collisions

    src = parse_source(source, ref=ref, path=path)
    target = target_dir(project)
    settings, registry = settings_and_registry(ctx, config, None)
    installed = {name: skill.root for name, skill in registry.skills.items()}
    work = Path(tempfile.mkdtemp(prefix="skillchat-add-"))
    try:
        prepared = install.prepare(src, work, names or [], all_)
        for c in prepared.skills:
            collisions(c, target, installed)
        if prepared.plugin is not None:
            plugin_cmd.check(prepared, target, project, settings)
        _show(consoles_of(ctx), prepared)
        if prepared.plugin is not None:
            plugin_cmd.show(consoles_of(ctx), prepared, target)
        refused = [(c.name, why) for c in prepared.skills for why in c.refusals]
        if refused:
            name, why = refused[0]
            raise InstallError(f"{name}: {why}: nothing installed")
        n = safe.counted(len(prepared.skills), "skill")
        _confirm(f"Install and trust {n} into {target}?", yes)
        if prepared.plugin is not None:
            moved = plugin_cmd.install(prepared, target, src.ref)
        else:
            moved = install.install(prepared, target, src.ref)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if project:
        _trust_installed(target, [p.name for p in moved], settings.run.packages)
    for folder in moved:
        c = next(c for c in prepared.skills if c.name == folder.name)
        typer.echo(safe.one_line(f"installed {c.name} (sha256 {c.digest[:12]}…) in {folder}"))


def _trust_installed(target: Path, names: list[str], packages: Mapping[str, Sequence[str]]) -> None:
    """Trust project installs, bound to the digest just locked (and the config's
    `[packages]` of the moment): the yes was for them."""
    from skillchat.skills.registry import discover
    from skillchat.skills.trust import TrustStore

    store = TrustStore.load(packages=packages)
    registry = discover([target])
    for name in names:
        if (skill := registry.get(name)) is not None:
            store.trust(skill)
    store.save()


@app.command("remove", short_help="Remove a skill installed with `skills add`.")
def remove_cmd(
    name: Annotated[str, typer.Argument(help="The installed skill.")],
    project: ProjectOpt = False,
) -> None:
    """Remove an installed skill: its folder and its lock entry; or a plugin, whole."""
    from skillchat.skills.install import remove

    target = target_dir(project)
    if plugin_cmd.remove(target, name):
        return
    remove(target, name)
    typer.echo(safe.one_line(f"removed {name} from {target}"))


def _locked_folders(project: bool) -> list[Path]:
    """The skills folders whose locks `verify` and `sync` read: with `--project`
    the project's; else the user-level one and, when the folder the command runs in
    has a lock, that project's too (CI runs there: a tampered project skill must
    fail it). In the home itself the two are one."""
    user = target_dir(False)
    if project:
        return [target_dir(True)]
    here = Path.cwd() / ".agents" / "skills.lock"
    if not os.path.lexists(here) or os.path.realpath(Path.cwd()) == os.path.realpath(Path.home()):
        return [user]
    return [user, target_dir(True)]


@app.command("verify", short_help="Check installed skills against their locks (for CI).")
def verify_cmd(
    ctx: typer.Context,
    project: Annotated[
        bool, typer.Option("--project", help="Only the project's lock, not the user-level one.")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Hash every skill the locks list (the user-level lock, and the lock of the
    project the command runs in); exit 1 if any changed, is missing, or a lock cannot
    be read."""
    from skillchat.skills.lock import Lock, lock_path

    results: list[tuple[Path, str, list[str]]] = []
    locks = []
    for folder in _locked_folders(project):
        locks.append(lock := Lock.load(lock_path(folder)))
        results += [
            (lock.path, n, _verified(folder / n, r)) for n, r in sorted(lock.skills.items())
        ]
        results += [(lock.path, n, c) for n, c in plugin_cmd.verified(folder, lock.plugins)]
    bad = [r for r in results if r[2]]
    if json_out:
        doc = {
            "ok": not bad,
            "locks": [str(lock.path) for lock in locks],
            "skills": [
                {"name": n, "lock": str(p), "ok": not c, "changes": c} for p, n, c in results
            ],
        }
        typer.echo(safe.json_text(doc, indent=2))
    else:
        for lock in locks:
            typer.echo(safe.one_line(f"lock: {lock.path}"))
            for _, name, changes in (r for r in results if r[0] == lock.path):
                state = "ok" if not changes else "changed since installed: " + "; ".join(changes)
                typer.echo(f"{safe.one_line(name)}\t{safe.one_line(state)}")
        if not results:
            paths = " or ".join(str(lock.path) for lock in locks)
            consoles_of(ctx).err.print(f"no skills in {paths}", markup=False)
    if bad:
        raise typer.Exit(1)


def _verified(root: Path, record: dict[str, Any]) -> list[str]:
    """What differs between an installed skill and its lock record (nothing: same)."""
    from skillchat.errors import TrustError
    from skillchat.skills.content_hash import content_hash
    from skillchat.skills.lock import changed_files

    if not root.is_dir() or root.is_symlink():
        return ["missing (or no longer a folder)"]
    try:
        same = content_hash(root) == record["digest"]
    except TrustError:
        same = False
    return [] if same else changed_files(root, record)


@app.command("sync", short_help="Install exactly what the locks say (--frozen for CI).")
def sync_cmd(
    project: Annotated[
        bool, typer.Option("--project", help="Only the project's lock, not the user-level one.")
    ] = False,
    frozen: Annotated[
        bool,
        typer.Option("--frozen", help="Fail if a locked commit is gone or hashes differently."),
    ] = False,
    yes: Annotated[  # taken, not read: sync never asks
        bool,
        typer.Option(
            "--yes", "-y", help="Taken as add and update take it; sync installs without asking."
        ),
    ] = False,
) -> None:
    """Install every skill of the locks (the user-level lock, and the lock of the
    project the command runs in) that is not in its folder yet, each at its locked
    commit. Synced project skills are not trusted: the lock came with the project, so
    `skills trust` them once you have read them; and a project's lock copies no local
    folder from outside the project."""
    from skillchat.skills.lock import Lock, lock_path
    from skillchat.skills.sync import sync

    user, folders = target_dir(False), _locked_folders(project)
    locked = [f for f in folders if Lock.load(lock_path(f)).skills]
    if not locked:
        paths = " or ".join(str(lock_path(f)) for f in folders)
        raise InstallError(f"no skills to sync in {paths}")
    for folder in locked:
        typer.echo(safe.one_line(f"lock: {lock_path(folder)}"))
        inside = None if folder == user else Path.cwd()
        for line in sync(folder, frozen=frozen, project=inside):
            typer.echo(safe.one_line(line))
        if folder == user:  # plugins install for the user only
            plugin_cmd.sync(folder)


@app.command("update", short_help="Update installed skills to their ref's newest commit.")
def update_cmd(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Skills (default: all).")] = None,
    project: ProjectOpt = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Update without asking.")] = False,
) -> None:
    """Fetch each installed skill's ref again, show what changed (files, scripts,
    allowed-tools), and on a yes swap the new content in and lock it."""
    from skillchat.skills import update

    target = target_dir(project)
    skills = plugin_cmd.update(ctx, target, names or [], yes)
    if not skills:
        return
    work = Path(tempfile.mkdtemp(prefix="skillchat-update-"))
    try:
        updates, current = update.plan(target, skills, work)
        for line in current:
            typer.echo(safe.one_line(line))
        if not updates:
            return
        out = consoles_of(ctx).out
        for u in updates:
            head = f"{u.name}: {u.old_commit[:12]} -> {(u.prepared.commit or '?')[:12]}"
            out.print(safe.text(safe.one_line(head), "strong"), soft_wrap=True)
            lines = list(u.changes)
            here = target / u.name
            before = (
                "not read (the installed folder is a symlink)"
                if here.is_symlink()
                else _declared(u.name, here, _scripts_in(here))
            )
            if (after := _packages(u.skill)) != before:
                lines.append(f"packages: {before} -> {after}")
            was = "not read" if here.is_symlink() else _inline(here)
            if (now := _inline(u.skill.staged)) != was:
                lines.append(f"inline commands: {was} -> {now}")
            for line in [*lines, *(f"! {f}" for f in u.skill.findings)]:
                out.print(safe.text("  " + safe.one_line(line)), soft_wrap=True)
        _confirm(f"Update and trust {safe.counted(len(updates), 'skill')}?", yes)
        update.apply(target, updates)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if project:
        from skillchat.config import load_settings

        _trust_installed(target, [u.name for u in updates], load_settings().run.packages)
    for u in updates:
        typer.echo(safe.one_line(f"updated {u.name} (sha256 {u.skill.digest[:12]}…)"))
