"""`search_files`' engine: matching snippets, each headed by its DocPath and ChunkPath.

    found = search_files(workspace, "round(", path="src", max_bytes=2_000_000)
    hit = found.hits[0]
    hit.path           # 'src/cart.py': the DocPath, what to pass to read_file
    hit.chunk_path     # 'src/cart.py#L40-L58': where in the file (informational)
    hit.snippet        # '40- ...\\n41: total = round(...)\\n...' numbered lines

A retrieval snippet names two paths (docs/tools.md): the DocPath hydrates the whole file
with `read_file`, the ChunkPath says which part the snippet is. Here:

- The query is literal text (case-sensitive, like `git grep -F`) unless `regex`.
  A regex is Python syntax run by the `regex` module, whose matching takes a
  timeout: `re` cannot be interrupted, and a catastrophic pattern (`(a|aa)+$`)
  would hang the chat. One file's match past `REGEX_FILE_SECONDS` ends the search
  with INVALID_ARGUMENT ("simplify it"); the whole search stops at `SEARCH_SECONDS`.
- All matches of one file make one snippet: `CONTEXT_LINES` around each matching
  line, overlapping windows merged, windows far apart joined by a `...` line, at
  most `MAX_SNIPPET_LINES` lines (the rest counted). The ChunkPath spans the
  lines shown.
- Ranking: files whose name contains the query first, then more matching lines,
  then shallower paths, then by path: deterministic, and explainable in a line.
- Bounds: at most `MAX_HITS` snippets and `MAX_RESULT_CHARS` of them; files over
  `max_bytes` (what `read_file` would cut) and binary files are skipped and
  counted; every walk bound of walk.py holds. Each cut is said in `notes`.

Literal search tests the raw bytes before decoding anything, so a workspace of
20,000 files costs about one read of each (benchmarks/bench_workspace_search.py).
"""

from __future__ import annotations

import errno
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from skillchat.errors import FileAccessError, RegexTimeout, SearchFileTooLarge
from skillchat.safe_io.read import FileText, read_bytes_at
from skillchat.workspace.files import Workspace
from skillchat.workspace.scope import compile_glob, folder_error, invalid, resolve_folder
from skillchat.workspace.walk import Entry, Walker

CONTEXT_LINES = 2
MAX_SNIPPET_LINES = 24
MAX_LINE_CHARS = 240
MAX_HITS = 20
MAX_RESULT_CHARS = 24_000
MAX_MATCHES_PER_FILE = 1000
MAX_QUERY_CHARS = 1000
SEARCH_SECONDS = 10.0
REGEX_FILE_SECONDS = 1.0


@dataclass(frozen=True)
class Hit:
    """One file's snippet."""

    path: str  # DocPath
    first: int  # first line shown, 1-based
    last: int
    matches: int  # matching lines in the file (at most MAX_MATCHES_PER_FILE)
    snippet: str

    @property
    def chunk_path(self) -> str:
        return f"{self.path}#L{self.first}-L{self.last}"


@dataclass
class Search:
    """What a search found, and what it could not cover."""

    query: str
    regex: bool
    hits: list[Hit] = field(default_factory=list)
    matched_files: int = 0
    searched_files: int = 0
    notes: list[str] = field(default_factory=list)
    truncated: bool = False


def _matcher(query: str, regex: bool) -> Callable[[str, float], list[int]]:
    """A function giving the offsets of the matches in a text (at most
    MAX_MATCHES_PER_FILE), within a number of seconds."""
    if not regex:

        def literal(text: str, _: float) -> list[int]:
            found: list[int] = []
            at = text.find(query)
            while at != -1 and len(found) < MAX_MATCHES_PER_FILE:
                found.append(at)
                at = text.find(query, at + max(1, len(query)))
            return found

        return literal
    import regex as regex_module  # only a regex search pays for the import

    try:
        pattern = regex_module.compile(query, regex_module.MULTILINE)
    except (regex_module.error, ValueError, OverflowError, RecursionError) as exc:
        raise invalid(f"query is not a valid regex: {exc}") from None

    def search(text: str, seconds: float) -> list[int]:
        found: list[int] = []
        try:
            for match in pattern.finditer(text, timeout=seconds):
                found.append(match.start())
                if len(found) >= MAX_MATCHES_PER_FILE:
                    break
        except TimeoutError:
            raise RegexTimeout from None
        return found

    return search


def _line_numbers(text: str, offsets: list[int]) -> list[int]:
    """The 1-based line of each offset (sorted), each line once."""
    lines: list[int] = []
    line, pos = 1, 0
    for offset in offsets:
        line += text.count("\n", pos, offset)
        pos = offset
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _snippet(text: str, matching: list[int]) -> tuple[int, int, str]:
    """The numbered snippet of `matching` lines in `text`: (first, last, text)."""
    lines = text.removesuffix("\n").split("\n")
    windows: list[list[int]] = []
    for n in matching:
        start, end = max(1, n - CONTEXT_LINES), min(len(lines), n + CONTEXT_LINES)
        if windows and start <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    marked = set(matching)
    out: list[str] = []
    shown_lines = 0
    first = last = windows[0][0]
    for start, end in windows:
        if shown_lines >= MAX_SNIPPET_LINES:
            break
        if out:
            out.append("...")
        end = min(end, start + MAX_SNIPPET_LINES - shown_lines - 1)
        for n in range(start, end + 1):
            line = lines[n - 1]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + "…"
            out.append(f"{n}{':' if n in marked else '-'} {line}")
        shown_lines += end - start + 1
        last = end
    hidden = sum(1 for n in matching if n > last)
    if hidden:
        out.append(f"... {hidden} more matching line{'s' if hidden != 1 else ''} in this file")
    return first, last, "\n".join(out)


def search_files(
    workspace: Workspace,
    query: object,
    path: object = None,
    glob: object = None,
    regex: object = False,
    *,
    max_bytes: int,
    deadline_seconds: float = SEARCH_SECONDS,
) -> Search:
    """Search the workspace; FileAccessError (with a tool error code) for bad input."""
    if not isinstance(query, str) or not query:
        raise invalid("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS or "\x00" in query:
        raise invalid(f"query must be at most {MAX_QUERY_CHARS} characters, without NUL")
    if not isinstance(regex, bool):
        raise invalid("regex must be true or false")
    deadline = time.monotonic() + deadline_seconds
    walker = workspace.walker(deadline=deadline, sizes=False)
    run = _Run(workspace, walker, _matcher(query, regex), max_bytes, deadline)
    selects = compile_glob(glob, walker)
    folder = resolve_folder(workspace, walker, path)
    needle = query.encode("utf-8") if not regex else None
    found: list[tuple[Any, ...]] = []
    for entry in _files(workspace, walker, folder):
        if selects is not None and not selects(entry.rel[len(folder) :].lstrip("/")):
            continue
        hit = run.file(entry, needle)
        if hit is not None:
            file, lines = hit
            name_hit = not regex and query in entry.name
            found.append((not name_hit, -len(lines), entry.rel.count("/"), entry.rel, file, lines))
        if walker.report.cut:
            break
    found.sort(key=lambda c: c[:4])
    search = Search(query, regex, matched_files=len(found), searched_files=run.searched)
    used = 0
    for *_, file, lines in found:
        if len(search.hits) >= MAX_HITS or used >= MAX_RESULT_CHARS:
            break
        first, last, snippet = _snippet(file.text, lines)
        search.hits.append(Hit(file.path, first, last, len(lines), snippet))
        used += len(snippet)
    search.notes = _notes(search, walker, run.too_large, run.refused, max_bytes)
    return search


@dataclass
class _Run:
    """One search's state: what it costs and what it skipped."""

    workspace: Workspace
    walker: Walker
    matcher: Callable[[str, float], list[int]]
    max_bytes: int
    deadline: float
    searched: int = 0
    refused: int = 0  # binary or unreadable
    too_large: list[str] = field(default_factory=list)

    def file(self, entry: Entry, needle: bytes | None) -> tuple[FileText, list[int]] | None:
        """The file's text (as read_file reads it) and its matching lines, if any."""
        try:
            if entry.is_link:  # a link is judged by read_file's rules, by its path
                if entry.size > self.max_bytes:
                    raise SearchFileTooLarge
                text: str | None = self._read(entry.rel).text
            else:
                text = _candidate(entry, self.max_bytes, needle)
            self.searched += 1
            if text is None or not self._matches(text, entry.rel):
                return None
            file = self._read(entry.rel)
            offsets = self._matches(file.text, entry.rel)
        except SearchFileTooLarge:
            self.too_large.append(entry.rel)
            return None
        except (OSError, FileAccessError) as exc:  # binary, gone, unreadable
            if isinstance(exc, FileAccessError) and exc.code == "INVALID_ARGUMENT":
                raise
            self.refused += 1
            return None
        return (file, _line_numbers(file.text, offsets)) if offsets else None

    def _read(self, rel: str) -> FileText:
        return self.workspace.read(rel, limit=self.max_bytes, walker=self.walker)

    def _matches(self, text: str, rel: str) -> list[int]:
        """The match offsets, within what is left of the time (one file's worth at most)."""
        remaining = self.deadline - time.monotonic()
        try:
            return self.matcher(text, max(0.01, min(REGEX_FILE_SECONDS, remaining)))
        except RegexTimeout:
            if remaining < REGEX_FILE_SECONDS:
                self.walker.report.cut = "stopped at the time limit: narrow it with path or glob"
                return []
            raise invalid(
                f"the regex took over {REGEX_FILE_SECONDS:g} s on '{rel}' (catastrophic "
                "backtracking?): simplify it, or search for literal text"
            ) from None


def _files(workspace: Workspace, walker: Walker, folder: str) -> Iterator[Entry]:
    """The entries to search: the folder's files, or the one file `folder` names."""
    try:
        yield from walker.files(folder)
    except OSError as exc:
        if exc.errno != errno.ENOTDIR or not folder:
            raise folder_error(exc, folder) from None
        yield from _one_file(workspace, walker, folder)


def _one_file(workspace: Workspace, walker: Walker, rel: str) -> Iterator[Entry]:
    parent, _, name = rel.rpartition("/")
    for entry in walker.folder(parent):
        if entry.name == name and not entry.is_dir:
            yield entry
            return
    raise FileAccessError("UNSUPPORTED_FILE", f"'{rel}' is not a regular file or folder")


def _candidate(entry: Entry, max_bytes: int, needle: bytes | None) -> str | None:
    """A quick first look, in the folder the walk holds (never through a link): the
    file's text loosely decoded, or None when it cannot match (the literal is not in
    its bytes, or it has NUL bytes). The file that matches is then read again by
    `read_file`'s own rules, whose text and hash are the ones used."""
    data, size = read_bytes_at(entry.dir_fd, entry.name, limit=max_bytes)
    if size > max_bytes:
        raise SearchFileTooLarge
    if needle is not None and needle not in data:
        return None
    if b"\x00" in data:
        raise OSError(errno.EINVAL, "binary")
    return data.decode("utf-8", errors="replace")


def _notes(
    search: Search, walker: Walker, too_large: list[str], binary: int, limit: int
) -> list[str]:
    notes = walker.report.notes()
    shown = len(search.hits)
    if search.matched_files > shown:
        notes.append(
            f"showing the {shown} best of {search.matched_files} matching files: narrow the "
            "query, path or glob to see others"
        )
    if too_large:
        names = ", ".join(f"'{p}'" for p in too_large[:3])
        more = f" and {len(too_large) - 3} more" if len(too_large) > 3 else ""
        notes.append(
            f"{len(too_large)} files over {limit:,} bytes were not searched: {names}{more}"
        )
    if binary:
        notes.append(f"{binary} binary or unreadable files were not searched")
    search.truncated = search.matched_files > shown or walker.report.cut is not None
    return notes
