"""`skillchat doctor`: what a new user can get wrong, checked in one go.

One line per check: the sandbox, the config file, the key (or local model), the
model server (one request, short timeout), the skills left out and why, the chats
database. Exit 1 when something blocks a chat or a skill command, so a setup script
can check; warnings (a skill left out) do not.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from skillchat.cli.common import ConfigOpt, SkillsDirOpt
from skillchat.cli.session_options import ApiBaseOpt, GgufOpt, LocalOpt, ModelOpt

if TYPE_CHECKING:
    from skillchat.config import Settings

# One request to the model server: long enough for a slow link, short enough that
# doctor answers at once when nothing listens.
PROBE_TIMEOUT = 5.0


def sandbox_line(*, refresh: bool = False) -> tuple[bool, str]:
    """(works, one line) about the sandbox, for `doctor` (which tries it afresh)
    and `config show`."""
    from skillchat.sandbox.detect import probe

    status = probe(refresh=refresh)
    if status.available:
        return True, f"sandbox: available: {status.reason}"
    line = f"sandbox: not available: {status.reason}"
    return False, line + (f"; {status.hint}" if status.hint else "")


class _Report:
    """The lines printed so far and whether one of them blocks."""

    def __init__(self) -> None:
        self.blocked = 0

    def line(self, text: str, *, blocks: bool = False) -> None:
        from skillchat.ui.safe import one_line

        self.blocked += blocks
        typer.echo(one_line(text))


def _model_lines(report: _Report, settings: Settings, local: bool) -> None:
    """The key, or the local model's file and llama.cpp; then the server, once."""
    from skillchat.backend_table import backend_row
    from skillchat.engine.backends.select import key_problem
    from skillchat.engine.resolve import asked

    if local or settings.model.gguf:
        from skillchat.engine.local.hub import DEFAULT_FILE, DEFAULT_REPO, cache_dir, hub_endpoint
        from skillchat.engine.local.server import install_hint

        if find_spec("xllamacpp") is None:
            report.line(f"local model: {install_hint()}", blocks=True)
        if settings.model.gguf:
            found = Path(settings.model.gguf).expanduser().is_file()
            where = f"local model: {settings.model.gguf}"
            report.line(f"{where}: found" if found else f"{where}: no such file", blocks=not found)
            return
        cached = cache_dir() / DEFAULT_REPO.replace("/", "--") / DEFAULT_FILE
        if cached.is_file():
            report.line(f"local model: {DEFAULT_REPO} downloaded ({cached})")
        else:
            report.line(
                f"local model: {DEFAULT_REPO} not downloaded yet: the first --local "
                f"fetches ~1.1 GB from {hub_endpoint()} (HF_ENDPOINT for a mirror)"
            )
        return
    if problem := key_problem(asked(settings)):
        report.line(f"key: {problem}", blocks=True)
        return
    api_base = settings.model.api_base or os.environ.get("OPENAI_BASE_URL")
    row = backend_row(settings.model.name, settings.model.backend, settings.model.api_base)
    if not row.probed:
        report.line(f"model: {settings.model.name} through {row.name} (its server is not probed)")
        return
    key = os.environ.get("OPENAI_API_KEY")
    report.line("key: " + ("OPENAI_API_KEY is set" if key else f"none needed for {api_base}"))
    _probe(report, api_base or "https://api.openai.com/v1", key)


def _probe(report: _Report, base: str, key: str | None) -> None:
    """GET BASE/models once: any HTTP answer means a server listens; 401/403 that
    the key is refused; no answer blocks."""
    from urllib.error import HTTPError, URLError
    from urllib.parse import urlsplit
    from urllib.request import Request, urlopen

    parts = urlsplit(base)
    shown = (
        parts._replace(netloc=parts.hostname or "").geturl()
        if parts.port is None
        else (parts._replace(netloc=f"{parts.hostname}:{parts.port}").geturl())
    )
    request = Request(base.rstrip("/") + "/models")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urlopen(request, timeout=PROBE_TIMEOUT) as answer:
            report.line(f"model server: {shown} answers (HTTP {answer.status})")
    except HTTPError as exc:
        refused = exc.code in (401, 403)
        what = "refuses the key" if refused else "answers"
        report.line(f"model server: {shown} {what} (HTTP {exc.code})", blocks=refused)
    except (URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, OSError) and reason.strerror:  # no raw "[Errno 111]"
            reason = reason.strerror.lower()
        report.line(
            f"model server: cannot reach {shown}: {reason} (is the server running?)", blocks=True
        )


def _skills_lines(report: _Report, settings: Settings) -> None:
    from skillchat.session_settings import load_registry

    registry = load_registry(settings)
    dirs = sum(folder.is_dir() for folder in settings.skills.resolved_dirs())
    left_out = registry.left_out()
    report.line(
        f"skills: {len(registry.skills)} loaded from {dirs} folder(s), {len(left_out)} left out"
    )
    for problem in registry.problems:
        report.line(f"skills: {problem.path}: {problem.message}")
    for excluded in left_out:
        report.line(f"skills: left out {excluded.path}: {excluded.summary()}")


def _chats_line(report: _Report, settings: Settings) -> None:
    from skillchat.errors import SkillchatError
    from skillchat.session_settings import open_store

    try:
        open_store(settings.storage).close()
    except SkillchatError as exc:
        report.line(f"chats: {exc}", blocks=True)
        return
    report.line(f"chats: database {settings.storage.database_path()} opens")


def doctor(
    ctx: typer.Context,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    gguf: GgufOpt = None,
    local: LocalOpt = False,
    skills_dir: SkillsDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Check what a chat needs: the key, the server, skills, chats, sandbox."""
    from skillchat.cli.invocation import load, skill_dirs_override
    from skillchat.errors import ConfigError

    report = _Report()
    works, line = sandbox_line(refresh=True)
    report.line(line, blocks=not works)
    try:
        settings = load(
            ctx,
            config,
            model=model,
            api_base=api_base,
            gguf=str(gguf) if gguf else None,
            skill_dirs=skill_dirs_override(skills_dir),
        )
    except ConfigError as exc:
        report.line(f"config: {exc}", blocks=True)
        raise typer.Exit(1) from None
    where = settings.config_path
    report.line(f"config: {where}" if where else "config: no file (the defaults)")
    for warning in settings.warnings:
        report.line(f"config: {warning}")
    _model_lines(report, settings, local)
    _skills_lines(report, settings)
    _chats_line(report, settings)
    if report.blocked:
        report.line(f"{report.blocked} problem(s) above block skillchat")
        raise typer.Exit(1)
