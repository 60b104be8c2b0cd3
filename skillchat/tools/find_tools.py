"""`list_files` and `search_files`: the model finds workspace files, not only reads them.

    list_files(path?, glob?) -> {"success": true, "path", "glob", "entries": [
                                   {"path": "src/cart.py", "type": "file", "sizeBytes": 1834},
                                   {"path": "src/util/", "type": "directory"}],
                                 "total", "isTruncated", "notices": [...]}
    search_files(query, path?, glob?, regex?)
        -> {"success": true, "query", "regex", "results": [
              {"docPath": "src/cart.py", "chunkPath": "src/cart.py#L40-L58",
               "matchingLines": 3, "snippet": "40- ...\\n41: ...", "alreadyInContext": false}],
            "filesMatched", "filesSearched", "isTruncated", "notices": [...]}

Errors are `{"success": false, "errorCode", "errors": [...]}`, as read_file's
(docs/tools.md): INVALID_ARGUMENT (a bad regex, a glob starting with '!'),
PATH_TRAVERSAL (`../*`, an absolute glob or path), NOT_FOUND, PERMISSION_DENIED
(hidden, ignored, or a folder whose `.gitignore` cannot be read), UNSUPPORTED_FILE.

Snippets name two paths: the DocPath is what to pass to
read_file, the ChunkPath where the snippet sits. A result whose file's whole text
is already in the conversation (the ledger holds read_file's key for it) is marked
`alreadyInContext`: the model should reuse that text, and a read_file of it would be
ALREADY_IN_CONTEXT anyway. The engines (skillchat/workspace/listing.py, search.py)
apply read_file's rules; these classes only shape what they found.

Offered only with a workspace. A search result is stored as a stub (paths and
counts, no snippets): snippets are file contents, which the chat never keeps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillchat.errors import FileAccessError, ToolArgumentError
from skillchat.tools.base import (
    Stored,
    Tool,
    ToolContext,
    ToolResult,
    function_schema,
    loads_or_none,
    to_json,
)
from skillchat.tools.workspace_tools import ReadWorkspaceFile, content_key, read_workspace

if TYPE_CHECKING:  # the walkers load at the first call, not before the first request
    from skillchat.workspace.listing import Listing
    from skillchat.workspace.search import Search

LIST_FILES = "list_files"
SEARCH_FILES = "search_files"
SNIPPETS_NOT_STORED = "snippets not stored; call search_files again if needed"
ACTIVE_NOTICE = (
    "results marked alreadyInContext come from files whose full text is already in "
    "this conversation: reuse that text instead of calling read_file"
)

_PATH = {
    "type": "string",
    "description": "Optional: a folder relative to the workspace root (default: the root).",
}
_GLOB = {
    "type": "string",
    "description": "Optional: gitignore-style glob relative to path: '*.py' matches at any "
    "depth, 'src/**/*.ts' is anchored, 'tests/' selects a folder's files.",
}


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _optional_string(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise ToolArgumentError(f"'{key}' must be a string")
    return value


class _WorkspaceFinder(Tool):
    """What both tools share: offered with a workspace, read_file's error shape."""

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        return context.workspace is not None

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        return ReadWorkspaceFile.error(code, message)


class ListFiles(_WorkspaceFinder):
    name = LIST_FILES
    schema = function_schema(
        LIST_FILES,
        "List the user's workspace: a folder's entries (folders end with '/'), or with a "
        "glob every file below the folder it selects, with sizes. Paths are what "
        "read_file takes. Hidden and git-ignored files are never listed.",
        {"path": _PATH, "glob": _GLOB},
        [],
    )

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        assert context.workspace is not None, "list_files is offered only with a workspace"
        path, glob = _optional_string(args, "path"), _optional_string(args, "glob")
        from skillchat.workspace.listing import list_files

        try:
            listing = list_files(context.workspace, path, glob)
        except FileAccessError as exc:
            return self.error(exc.code, exc.message)
        return listing_result(listing)


def listing_result(listing: Listing) -> ToolResult:
    """The payload of a listing, and a card preview of its first entries."""
    entries: list[dict[str, Any]] = [
        {"path": e.path, "type": "directory"}
        if e.is_dir
        else {"path": e.path, "type": "file", "sizeBytes": e.size}
        for e in listing.entries
    ]
    notices = list(listing.notes)
    if listing.total > len(listing.entries):
        notices.append(
            f"showing the first {len(listing.entries)} of {listing.total} entries: "
            "narrow it with path or glob"
        )
    payload: dict[str, Any] = {"success": True, "path": listing.folder or "."}
    if listing.glob is not None:
        payload["glob"] = listing.glob
    payload |= {
        "entries": entries,
        "total": listing.total,
        "isTruncated": listing.truncated,
        "notices": notices,
    }
    head = _count(listing.total, "entry", "entries")
    head += f" ({len(entries)} shown)" if listing.truncated else ""
    preview = "\n".join([head, *(e["path"] for e in entries), *notices])
    return ToolResult(to_json(payload), preview=preview, truncated=listing.truncated)


class SearchFiles(_WorkspaceFinder):
    name = SEARCH_FILES
    prompt_rule = (
        "Find workspace files with list_files and search_files before guessing paths: "
        "a search result's docPath is the path read_file takes, and a snippet is often "
        "enough without reading the whole file."
    )
    schema = function_schema(
        SEARCH_FILES,
        "Search the text files of the user's workspace. Returns ranked snippets with "
        "numbered lines ('40:' matches, '41-' context), each headed by its docPath (pass "
        "it to read_file for the whole file) and chunkPath (the lines shown). Several "
        "matches in one file are one snippet. Literal, case-sensitive text unless "
        "regex is true (Python syntax).",
        {
            "query": {"type": "string", "description": "The text (or regex) to find."},
            "path": _PATH,
            "glob": _GLOB,
            "regex": {
                "type": "boolean",
                "description": "Optional: treat query as a regular expression (default false).",
            },
        },
        ["query"],
    )

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        assert context.workspace is not None, "search_files is offered only with a workspace"
        query = args.get("query")
        if query is None:
            raise ToolArgumentError("missing required argument 'query'")
        regex = args.get("regex", False)
        path, glob = _optional_string(args, "path"), _optional_string(args, "glob")
        from skillchat.workspace.search import search_files

        try:
            found = search_files(
                context.workspace,
                query,
                path,
                glob,
                False if regex is None else regex,
                max_bytes=context.settings.skills.max_resource_bytes,
            )
        except FileAccessError as exc:
            return self.error(exc.code, exc.message)
        return search_result(found, context)

    @classmethod
    def stored(cls, args: dict[str, Any], content: Any) -> Stored:
        """A success keeps its paths and counts; the snippets are file contents."""
        result = loads_or_none(content)
        if not isinstance(result, dict) or result.get("success") is not True:
            return Stored(content)
        results = result.get("results")
        kept = [
            {k: r.get(k) for k in ("docPath", "chunkPath", "matchingLines")}
            for r in (results if isinstance(results, list) else [])
            if isinstance(r, dict)
        ]
        stub = {k: v for k, v in result.items() if k != "results"}
        return Stored(to_json({**stub, "results": kept, "stub": SNIPPETS_NOT_STORED}))


def _in_context(context: ToolContext, path: str) -> bool:
    """Whether read_file's whole read of `path` is what the conversation holds."""
    try:
        file = read_workspace(context, path)
    except FileAccessError:
        return False
    return not file.truncated and context.ledger.holder(content_key(file)) is not None


def search_result(found: Search, context: ToolContext) -> ToolResult:
    """The payload of a search, and a card preview: the count, then the ChunkPaths."""
    results: list[dict[str, Any]] = [
        {
            "docPath": hit.path,
            "chunkPath": hit.chunk_path,
            "matchingLines": hit.matches,
            "snippet": hit.snippet,
            "alreadyInContext": _in_context(context, hit.path),
        }
        for hit in found.hits
    ]
    notices = list(found.notes)
    if any(r["alreadyInContext"] for r in results):
        notices.append(ACTIVE_NOTICE)
    payload = {
        "success": True,
        "query": found.query,
        "regex": found.regex,
        "results": results,
        "filesMatched": found.matched_files,
        "filesSearched": found.searched_files,
        "isTruncated": found.truncated,
        "notices": notices,
    }
    head = f"{_count(found.matched_files, 'matching file')} of {found.searched_files} searched"
    lines = [r["chunkPath"] + (" (in context)" if r["alreadyInContext"] else "") for r in results]
    preview = "\n".join([head, *lines, *notices])
    return ToolResult(to_json(payload), preview=preview, truncated=found.truncated)
