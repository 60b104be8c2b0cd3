"""Where `skillchat skills add` gets skills from, and fetching them with git so
that nothing in the repository runs.

SOURCE is one of:

- a git URL: `https://…`, `ssh://…`, `git@host:owner/repo`, `file://…`;
- GitHub shorthand `owner/repo[/path/in/repo][@ref]` (a branch, tag or commit),
  fetched from `https://github.com/owner/repo`; `SKILLCHAT_GITHUB_BASE` replaces
  `https://github.com` (a mirror, a GitHub Enterprise host, a folder in tests);
- a local folder, written as a path (`./x`, `../x`, `/x`, `~/x`), copied as it is.

`--ref` and `--path` say the same for a URL or the shorthand.

**What git may do.** The fetch runs with no system or global git config (so no
filter, LFS smudge, credential helper, `url.insteadOf` or hook of the user's config
applies), hooks pointed at nothing, only the file/git/http(s)/ssh transports (never
`ext::`), no terminal prompt and ssh in batch mode (a repository that wants a
password fails with git's one line instead of waiting), a time limit, and a bound
on what the fetch writes (`MAX_DOWNLOAD`, or `SKILLCHAT_MAX_DOWNLOAD_BYTES`). It fetches
one commit at depth 1 into a bare repository and nothing is checked out: files are
read from the commit's tree as blobs (`git cat-file`), so no `.gitattributes` filter,
no LFS, and no submodule is ever fetched (a submodule is a tree entry of type
`commit`, listed and left out).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from skillchat.errors import InstallError

GITHUB_BASE_ENV = "SKILLCHAT_GITHUB_BASE"
GITHUB_BASE = "https://github.com"
FETCH_TIMEOUT = 120.0
MAX_DOWNLOAD = 100_000_000
MAX_DOWNLOAD_ENV = "SKILLCHAT_MAX_DOWNLOAD_BYTES"
# The most entries a fetched commit may list under the path asked for: ten times
# what one skill may hold (content_hash.MAX_ENTRIES), room for a repository of skills.
MAX_LISTED = 20_000
_SHORTHAND = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)/([A-Za-z0-9_.-]+)((?:/[^@]+)?)(?:@(.+))?$")
_URL = re.compile(r"^(https?|ssh|file|git)://|^[\w.-]+@[\w.-]+:")


@dataclass(frozen=True)
class Source:
    """Where to fetch from: a git `url` or a `local` folder, a `path` inside it
    ("" for the top) and the requested `ref` (None: the default branch)."""

    url: str | None
    local: Path | None
    path: str
    ref: str | None

    @property
    def shown(self) -> str:
        return self.url if self.url is not None else str(self.local)


def parse_source(text: str, *, ref: str | None = None, path: str | None = None) -> Source:
    """SOURCE as the user typed it, with `--ref`/`--path`; InstallError if unclear."""
    if text.startswith(("/", "./", "../", "~")) or text in (".", ".."):
        if ref is not None:
            raise InstallError("--ref needs a git source; a local folder is copied as it is")
        folder = Path(text).expanduser()
        if not folder.is_dir():
            raise InstallError(f"{text}: no such folder")
        return Source(None, folder.resolve(), clean_path(path or ""), None)
    if is_url(text):
        return Source(text, None, clean_path(path or ""), ref)
    found = _SHORTHAND.match(text)
    if found is None:
        raise InstallError(
            f"{text!r} is not a source: give a git URL, owner/repo[/path][@ref], "
            "or a folder as ./path"
        )
    owner, repo, sub, at = found.groups()
    if at is not None and ref is not None:
        raise InstallError(f"two refs: @{at} and --ref {ref}")
    if sub and path:
        raise InstallError(f"two paths: {sub.lstrip('/')} and --path {path}")
    base = os.environ.get(GITHUB_BASE_ENV, GITHUB_BASE).rstrip("/")
    inside = sub[1:] if sub else path or ""
    return Source(f"{base}/{owner}/{repo}", None, clean_path(inside), at or ref)


def is_url(text: str) -> bool:
    """Whether `text` is a git URL (`https://…`, `ssh://…`, `git@host:…`, `file://…`)."""
    return _URL.match(text) is not None


def clean_path(path: str) -> str:
    """A path inside the repository, `/`-separated, with no `..`, no absolute start
    and nothing that is not a plain name: refused with the reason otherwise."""
    parts = [p for p in path.strip("/").split("/") if p not in ("", ".")]
    if path.startswith("/") and path.strip("/"):
        raise InstallError(f"path {path!r}: a path inside the repository is relative")
    for part in parts:
        if part == ".." or "\\" in part or "\0" in part or is_dot_git(part):
            raise InstallError(f"path {path!r}: '{part}' is not allowed in a path")
    return "/".join(parts)


def is_dot_git(name: str) -> bool:
    """`.git` in any case (a case-blind file system makes `.GIT` the real one): never
    installed. `.gitignore`, `.gitattributes`, `.github/` are a skill's plain files."""
    return name.casefold() == ".git"


@dataclass(frozen=True)
class TreeEntry:
    """One entry of the fetched commit: `kind` is blob (file or symlink), or commit
    (a submodule); `size` is None for a submodule."""

    path: str
    mode: str
    kind: str
    oid: str
    size: int | None


def git_env() -> dict[str, str]:
    """The environment git runs in: the caller's, minus everything that would let
    a fetch read the user's config, ask for a password, or run a helper."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SSH_ASKPASS"))}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="true",  # asked anyway, it answers empty: the server says no
        GIT_ALLOW_PROTOCOL="file:git:http:https:ssh",
        GIT_SSH_COMMAND="ssh -o BatchMode=yes -o ConnectTimeout=30",
        GIT_LFS_SKIP_SMUDGE="1",
        LC_ALL="C",
    )
    return env


def max_download() -> int:
    """The most a fetch may write to disk: MAX_DOWNLOAD, or SKILLCHAT_MAX_DOWNLOAD_BYTES."""
    try:
        return int(os.environ.get(MAX_DOWNLOAD_ENV, MAX_DOWNLOAD))
    except ValueError:
        return MAX_DOWNLOAD


def _disk_use(folder: Path) -> int:
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                continue  # git renamed or removed it meanwhile
    return total


def run_git(
    args: list[str], cwd: Path, *, timeout: float = FETCH_TIMEOUT, bound: Path | None = None
) -> str:
    """`git ARGS` in `cwd`, its stdout; InstallError with git's own line if it fails.
    With `bound`, git is stopped as soon as that folder holds more than
    `max_download()` bytes (checked as it grows, and once more at the end)."""
    import tempfile
    import time

    cmd = ["git", "-c", "core.hooksPath=/dev/null", "-c", "credential.helper=", *args]
    verb = next(a for a in args if not a.startswith("-") and "=" not in a)
    limit, deadline = max_download(), time.monotonic() + timeout
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                cmd, cwd=cwd, env=git_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
        except FileNotFoundError:
            raise InstallError(
                "git is not installed: installing from a repository needs it"
            ) from None
        try:
            while True:
                try:
                    proc.wait(timeout=0.25 if bound else max(deadline - time.monotonic(), 0))
                    break
                except subprocess.TimeoutExpired:
                    pass
                if bound is not None and _disk_use(bound) > limit:
                    raise InstallError(f"git {verb}: the download passed {limit:,} bytes: stopped")
                if time.monotonic() > deadline:
                    raise InstallError(f"git {verb} took longer than {timeout:.0f}s: stopped")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if bound is not None and _disk_use(bound) > limit:
            raise InstallError(f"git {verb}: the download passed {limit:,} bytes: stopped")
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise _failed(verb, proc.returncode, stderr)
    return stdout.decode(errors="surrogateescape")


def _failed(verb: str, code: int, stderr: bytes) -> InstallError:
    """git's own line for a step that failed."""
    lines = [ln.strip() for ln in stderr.decode(errors="replace").splitlines()]
    # git's first error names the cause (a bad object); its last fatal, the step
    why = next((ln for ln in lines if ln.startswith("error:")), None)
    why = why or next((ln for ln in reversed(lines) if ln.startswith("fatal:")), None)
    why = why or next((ln for ln in reversed(lines) if ln), f"exit {code}")
    return InstallError(f"git {verb}: {why}")


def _records(args: list[str], cwd: Path) -> Generator[str, None, None]:
    """The NUL-ended records `git ARGS` writes, each as soon as git writes it: a
    listing is read as it comes, never whole, so its reader can stop at a bound
    (git is killed then, or at the time limit)."""
    import tempfile
    import threading

    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            ["git", *args], cwd=cwd, env=git_env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=err,
        )  # fmt: skip
        timer = threading.Timer(FETCH_TIMEOUT, proc.kill)
        timer.start()
        out = proc.stdout
        assert out is not None
        try:
            pending = b""
            while chunk := os.read(out.fileno(), 1 << 16):
                *done, pending = (pending + chunk).split(b"\0")
                for record in done:
                    yield record.decode(errors="surrogateescape")
            if proc.wait() != 0:
                err.seek(0)
                raise _failed(args[0], proc.returncode, err.read())
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            out.close()


def fetch_commit(source: Source, repo: Path) -> str:
    """Fetch the one commit `source` names into a new bare repository at `repo`;
    its full id."""
    assert source.url is not None
    run_git(["init", "-q", "--bare", str(repo)], repo.parent)
    want = source.ref or "HEAD"
    if want.startswith("-"):
        raise InstallError(f"ref {want!r} is not a ref")
    try:
        run_git(
            [
                "-c",
                "fetch.fsckObjects=true",  # refuse trees naming `..`, `.git`, a name twice
                "fetch",
                "-q",
                "--depth=1",
                "--no-tags",
                "--no-recurse-submodules",
                "--",
                source.url,
                want,
            ],
            repo,
            bound=repo,
        )
    except InstallError as exc:
        if "couldn't find remote ref" in str(exc) or "not our ref" in str(exc):
            raise InstallError(f"{source.url}: no branch, tag or commit '{want}'") from None
        raise
    return run_git(["rev-parse", "--verify", "FETCH_HEAD^{commit}"], repo).strip()


def list_tree(repo: Path, commit: str, path: str) -> list[TreeEntry]:
    """Every entry under `path` in the commit (sizes from git, nothing read yet)."""
    spec = [f"{commit}:{path}"] if path else [commit]
    if path:
        kind = run_git(["cat-file", "-t", spec[0]], repo).strip() if _exists(repo, spec[0]) else ""
        if kind != "tree":
            raise InstallError(f"'{path}' is not a folder in commit {commit[:12]}")
    entries: list[TreeEntry] = []
    with closing(_records(["ls-tree", "-r", "-z", "--long", *spec], repo)) as records:
        for item in records:
            if len(entries) == MAX_LISTED:  # a few KB of trees can list millions of files
                where = f"under '{path}'" if path else "in the repository"
                raise InstallError(
                    f"more than {MAX_LISTED:,} entries {where}: over the limit "
                    "(give --path to the skills' folder)"
                )
            meta, name = item.split("\t", 1)
            mode, kind, oid, size = meta.split()
            entries.append(TreeEntry(name, mode, kind, oid, None if size == "-" else int(size)))
    return entries


def _exists(repo: Path, spec: str) -> bool:
    try:
        run_git(["cat-file", "-e", spec], repo)
    except InstallError:
        return False
    return True


def write_blobs(repo: Path, entries: list[TreeEntry], dest: Path) -> None:
    """Write each blob entry under `dest` as git stored it (no filter): a file
    (0755 when executable in git, else 0644) or a symlink (its stored target).
    A crafted tree can name a symlink and then a file "under" it: each entry's
    folder must still be the folder it names, never one a link led to."""
    real_dest = os.path.realpath(dest)
    for entry in entries:
        if entry.kind != "blob":
            continue
        clean_path(entry.path)
        data = subprocess.run(
            ["git", "cat-file", "blob", entry.oid],
            cwd=repo,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=FETCH_TIMEOUT,
        ).stdout
        try:
            _write_blob(dest / entry.path, entry, data, real_dest)
        except OSError as exc:  # a name or link target longer than the file system takes
            kind = "symlink" if entry.mode == "120000" else "file"
            raise InstallError(
                f"{entry.path}: a {kind} that cannot be written ({exc.strerror})"
            ) from None


def _write_blob(target: Path, entry: TreeEntry, data: bytes, real_dest: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    expected = os.path.join(real_dest, os.path.dirname(entry.path)).rstrip("/")
    if os.path.realpath(target.parent) != expected:
        raise InstallError(f"{entry.path}: its folder is a symlink in the repository")
    if entry.mode == "120000":
        if b"\0" in data:  # git stores any bytes; no file system takes a NUL
            raise InstallError(f"{entry.path}: a symlink whose target holds a NUL byte")
        os.symlink(os.fsdecode(data), target)
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(target, 0o755 if entry.mode == "100755" else 0o644)
