"""Where `list_files` and `search_files` look: a workspace folder and a glob, checked.

    folder = resolve_folder(workspace, walker, "src")      # '' for the root
    selects = compile_glob("**/*.py")                     # None without a glob

A folder is named like `read_file`'s path (relative, no `..`), passes the same
hidden and `.gitignore` rules, and is walked by its real path: a link to a folder
inside the workspace is followed here, once, so the paths in the results are the
ones `read_file` takes. A glob is gitignore-style, like `rg -g`: `*.py` matches the
name at any depth, a `/` anchors it to the folder searched (`src/**/*.py`), a
trailing `/` selects everything in matching folders. A glob that tries to leave
(`../*`, `/etc/*`) is refused as a traversal rather than silently anchored.
"""

from __future__ import annotations

import errno
import functools
import os
import re
from collections.abc import Callable

from skillchat.errors import FileAccessError, GlobTimeout
from skillchat.safe_io.read import normalise_relative_path, traversal_error
from skillchat.safe_io.walk import is_inside
from skillchat.workspace.files import Workspace
from skillchat.workspace.globmatch import compile_pattern
from skillchat.workspace.ignore import as_bytes_path, parse_rule
from skillchat.workspace.walk import Walker

_DRIVE = re.compile(r"^[A-Za-z]:")
MAX_GLOB_CHARS = 1000


def invalid(message: str) -> FileAccessError:
    return FileAccessError("INVALID_ARGUMENT", message)


def resolve_folder(workspace: Workspace, walker: Walker, path: object) -> str:
    """The real workspace-relative folder (or file) `path` names, '' for the root,
    after every path rule; FileAccessError with the tool error code otherwise."""
    if path is None or (isinstance(path, str) and path.strip() in ("", ".", "./")):
        return ""
    if not isinstance(path, str):
        raise invalid("path must be a string")
    rel = normalise_relative_path(path, workspace.container)
    root = str(workspace.root)
    real = os.path.realpath(os.path.join(root, rel))
    if real != root and not is_inside(real, root):
        raise traversal_error(workspace.container)
    real_rel = "" if real == root else os.path.relpath(real, root).replace(os.sep, "/")
    for name in dict.fromkeys((rel, real_rel)):
        if name:
            workspace.check(name, walker=walker, is_dir=os.path.isdir(real))
    try:
        os.stat(real)  # a loop or a dangling link ends here, with its own message
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:  # a name below a file: nothing there
            exc.errno = errno.ENOENT
        raise folder_error(exc, rel) from None
    return real_rel


def compile_glob(glob: object, walker: Walker) -> Callable[[str], bool] | None:
    """A test of paths relative to the folder searched, or None for no glob.

    Matched in bounded work (globmatch.py) under the walk's deadline: past it, the
    path is not selected and the walk is cut with the time-limit note."""
    if glob is None or glob == "":
        return None
    if not isinstance(glob, str):
        raise invalid("glob must be a string")
    if "\x00" in glob or len(glob) > MAX_GLOB_CHARS:
        raise invalid(f"glob must be at most {MAX_GLOB_CHARS} characters, without NUL")
    if glob.startswith(("/", "\\")) or _DRIVE.match(glob):
        raise FileAccessError(
            "PATH_TRAVERSAL",
            f"glob '{glob}' is absolute: globs are relative to the folder searched "
            "(the workspace root unless you pass path)",
        )
    if any(part == ".." for part in re.split(r"[\\/]", glob)):
        raise FileAccessError(
            "PATH_TRAVERSAL", f"glob '{glob}' has a '..': globs cannot leave the workspace"
        )
    if glob.startswith("!"):
        raise invalid(f"glob '{glob}' starts with '!': give the files to select, not to skip")
    rule = parse_rule(glob.encode("utf-8").decode("latin-1"))
    if rule is None or "\n" in glob or "\r" in glob:
        raise invalid(f"glob '{glob}' selects nothing")

    matches = compile_pattern(rule.pattern, pathname=rule.anchored, deadline=walker.deadline)

    @functools.cache
    def folder_selected(folder: str) -> bool:
        """Whether a folder on the way matches (then every file in it is selected)."""
        if not folder:
            return False
        parent, _, name = folder.rpartition("/")
        return folder_selected(parent) or matches(folder if rule.anchored else name)

    def selects(rel: str) -> bool:
        """Whether the file `rel` or one of its folders matches, as a .gitignore line
        would (rules and names as ignore.py reads them)."""
        path = as_bytes_path(rel)
        folder, _, name = path.rpartition("/")
        try:
            if folder_selected(folder):
                return True
            return not rule.dir_only and matches(path if rule.anchored else name)
        except GlobTimeout:
            walker.report.cut = "stopped at the time limit: narrow it with path or glob"
            return False

    return selects


def folder_error(exc: OSError, rel: str) -> FileAccessError:
    """Why the folder a tool was pointed at cannot be walked, as a tool error."""
    shown = rel or "."
    if exc.errno == errno.ENOENT:
        return FileAccessError("NOT_FOUND", f"Folder '{shown}' not found in the workspace")
    if exc.errno == errno.ENOTDIR:
        return FileAccessError("UNSUPPORTED_FILE", f"'{shown}' is not a folder")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileAccessError("PERMISSION_DENIED", f"Folder '{shown}' cannot be opened")
    if exc.errno == errno.ELOOP:
        return FileAccessError("UNSUPPORTED_FILE", f"Cannot open '{shown}': symlink loop")
    return FileAccessError("INTERNAL_ERROR", f"Cannot open '{shown}': {exc.strerror}")
