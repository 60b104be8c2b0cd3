"""Find, bound and parse the YAML frontmatter at the top of a SKILL.md.

Discovery runs over every skill a user has, at every start, so it must be cheap and
must survive hostile files. Hence:

* Only the frontmatter is read: one bounded `os.read` (rarely two or three), never
  the body. A first read of 8 KiB may pull the start of the body into memory with
  the frontmatter; those bytes are discarded, never decoded or parsed. A file whose
  frontmatter is not closed within 64 KiB is rejected after reading ~66 KiB, so a
  100 MB file costs what a small one does.
* Delimiters are whole lines at column 0: `---` plus optional trailing spaces, tabs
  or `\\r`. That is also YAML's own rule (a `---` line at column 0 always starts a
  new YAML document, even inside a quoted or block scalar), so no valid YAML value
  can contain the closing delimiter; an *indented* `---` is just text.
* YAML is parsed by PyYAML's safe loader, hardened: skills/frontmatter_yaml.py; a
  text parsed in an earlier run comes from skills/frontmatter_cache.py instead.
* A SKILL.md that is not a regular file, or has more than one hard link (another
  name for it may be outside the skill folder: the rule of every read, see
  skillchat/safe_io/read.py), is refused before a byte of it is read.
* Every failure is a `FrontmatterError` carrying a one-line message and the line of
  the SKILL.md it points to, never a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillchat.errors import FileAccessError, FrontmatterError
from skillchat.safe_io.read import Container, open_contained
from skillchat.skills.frontmatter_cache import parsed
from skillchat.skills.frontmatter_yaml import Frontmatter, json_safe, quote_colon_values

MAX_FRONTMATTER_BYTES = 64 * 1024
_FIRST_READ = 8 * 1024
_LINE_SLACK = 256  # room for a delimiter line padded with trailing whitespace
_BOM = b"\xef\xbb\xbf"
_READ_CAP = len(_BOM) + _LINE_SLACK + MAX_FRONTMATTER_BYTES + _LINE_SLACK
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
SKILL_MD_NAMES = ("SKILL.md", "skill.md")  # in order of preference


# --------------------------------------------------------------------------- delimiters


def _is_delimiter(line: bytes) -> bool:
    """`---` at column 0 followed only by spaces, tabs or a CR."""
    return line[:3] == b"---" and not line[3:].strip(b" \t\r")


def _opening_end(buf: bytes, start: int, eof: bool) -> int | None:
    """Offset just past the opening `---` line, None if more bytes are needed.

    Raises when the file does not start with a delimiter line, with a message that
    says *why* (empty, blank first line, UTF-16, anything else).
    """
    nl = buf.find(b"\n", start)
    if nl == -1 and not eof and len(buf) - start <= _LINE_SLACK and _is_delimiter(buf[start:]):
        return None
    line = buf[start:] if nl == -1 else buf[start:nl]
    if _is_delimiter(line):
        return len(buf) if nl == -1 else nl + 1
    if not buf[start:] and eof:
        raise FrontmatterError("SKILL.md is empty", 1)
    if buf.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FrontmatterError("SKILL.md is UTF-16; it must be UTF-8", 1)
    if not line.strip():
        raise FrontmatterError(
            "line 1 is blank: the frontmatter's opening '---' must be the very first line", 1
        )
    raise FrontmatterError("SKILL.md does not start with YAML frontmatter ('---' on line 1)", 1)


def _closing(buf: bytes, start: int, eof: bool) -> tuple[int, int] | None:
    """(end of the YAML text, start of the body) for the first closing delimiter line
    at or after `start`; None if it is not in the bytes read so far."""
    pos = start
    if not buf.startswith(b"---", start):
        pos = buf.find(b"\n---", start) + 1
        if pos == 0:
            return None
    while True:
        nl = buf.find(b"\n", pos)
        if nl == -1 and not eof:
            return None  # the candidate line is cut: read more
        if _is_delimiter(buf[pos:] if nl == -1 else buf[pos:nl]):
            return pos, (len(buf) if nl == -1 else nl + 1)
        pos = buf.find(b"\n---", pos) + 1
        if pos == 0:
            return None


def locate(buf: bytes, *, eof: bool) -> tuple[int, int, int] | None:
    """Find the frontmatter in the first bytes of a SKILL.md.

    Returns (yaml_start, yaml_end, body_start) offsets into `buf`, or None when the
    closing delimiter is not in `buf` yet and `eof` is False. Raises
    FrontmatterError for a missing opening, an unclosed or an oversized block.
    """
    start = len(_BOM) if buf.startswith(_BOM) else 0
    yaml_start = _opening_end(buf, start, eof)
    if yaml_start is None:
        return None
    found = _closing(buf, yaml_start, eof)
    if found is not None:
        yaml_end, body_start = found
        if yaml_end - yaml_start > MAX_FRONTMATTER_BYTES:
            raise _too_large()
        return yaml_start, yaml_end, body_start
    if len(buf) - yaml_start > MAX_FRONTMATTER_BYTES + _LINE_SLACK:
        raise _too_large()
    if eof:
        raise FrontmatterError("frontmatter is not closed: no '---' line after line 1", 1)
    return None


def _too_large() -> FrontmatterError:
    return FrontmatterError("frontmatter larger than 64 KiB", 1)


# --------------------------------------------------------------------------- reading


def _read_head(fd: int) -> tuple[bytes, tuple[int, int, int]]:
    """Read just enough of an open SKILL.md to hold its frontmatter."""
    buf = os.read(fd, _FIRST_READ)
    eof = len(buf) < _FIRST_READ
    while True:
        found = locate(buf, eof=eof)
        if found is not None:
            return buf, found
        if eof or len(buf) >= _READ_CAP:
            raise _too_large()  # locate() raises first for every other case
        want = _READ_CAP - len(buf)
        more = os.read(fd, want)
        eof = len(more) < want
        buf += more


def read_frontmatter_text(fd: int, *, hard_links: bool = False) -> str:
    """The frontmatter's YAML text from an open file descriptor (not closed here);
    a file with more than one hard link only when `hard_links` (hardlinks.py)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise FrontmatterError("SKILL.md is not a regular file")
    if st.st_nlink > 1 and not hard_links:  # the same rule as every read (safe_io/read.py)
        raise FrontmatterError(
            f"SKILL.md has {st.st_nlink} hard links; a hard-linked file may be a second "
            "name for one outside the skill folder, so it is not read"
        )
    buf, (yaml_start, yaml_end, _) = _read_head(fd)
    return decode_yaml_bytes(buf, yaml_start, yaml_end)


def decode_yaml_bytes(buf: bytes, yaml_start: int, yaml_end: int) -> str:
    """Decode the YAML bytes, reporting the line of the first bad byte."""
    try:
        return buf[yaml_start:yaml_end].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = yaml_start + exc.start
        line = buf.count(b"\n", 0, at) + 1
        raise FrontmatterError(
            f"frontmatter is not valid UTF-8 (byte 0x{buf[at]:02x} at line {line})", line
        ) from None


def parse_open_frontmatter(
    fd: int, filename: str, *, hard_links: bool = False, lenient: bool = False
) -> Frontmatter:
    """Read the frontmatter from an open SKILL.md (`filename` names it in errors),
    close the descriptor, and parse (`lenient`: as `parsed_leniently`); every failure
    is a FrontmatterError. `hard_links`: as in `read_frontmatter_text`."""
    try:
        text = read_frontmatter_text(fd, hard_links=hard_links)
    except OSError as exc:
        raise FrontmatterError(f"cannot read {filename}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return parsed_leniently(text) if lenient else parsed(text)


def parsed_leniently(text: str) -> Frontmatter:
    """`parsed(text)`, or when that fails, the parse of `text` with its unquoted ': '
    values quoted as other clients read them (`quote_colon_values`), `quoted` naming
    their keys; the first error when that does not parse either."""
    try:
        return parsed(text)
    except FrontmatterError as exc:
        repaired, keys = quote_colon_values(text)
        if not keys:
            raise
        try:
            return replace(parsed(repaired), quoted=keys)
        except FrontmatterError:
            raise exc from None


def _open_symlinked(root: str, filename: str) -> int:
    """Open a SKILL.md that is a symlink through the descriptor walk of every read: it
    is served only if it leads to a regular file inside the skill folder (files
    outside it are never served, so they must not be listed either), and what is
    opened is what the walk checked."""
    container = Container(Path(os.path.realpath(root)), "skill folder", "skill folder")
    try:
        return open_contained(container, filename)
    except FileAccessError as exc:
        if exc.code == "PATH_TRAVERSAL":
            raise FrontmatterError(
                f"{filename} is a symlink to a file outside the skill folder"
            ) from None
        if exc.code == "UNSUPPORTED_FILE":
            raise FrontmatterError(f"{filename} is not a regular file") from None
        raise FrontmatterError(exc.message) from None


def open_skill_md(root: str) -> tuple[int, str] | None:
    """Open a skill folder's SKILL.md (else skill.md): (fd, file name), or None when
    the folder has neither, i.e. is not a skill.

    Opens with O_NOFOLLOW so the common case costs one syscall; a symlinked
    SKILL.md takes the descriptor walk. Raises FrontmatterError.
    """
    for filename in SKILL_MD_NAMES:
        path = os.path.join(root, filename)
        try:
            return os.open(path, _OPEN_FLAGS | _NOFOLLOW), filename
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return _open_symlinked(root, filename), filename
            raise FrontmatterError(f"cannot open {filename}: {exc.strerror or exc}") from None
    return None


def split_skill_md(text: str) -> tuple[dict[Any, Any], str]:
    """Split a whole SKILL.md text into (frontmatter mapping, body).

    For callers that already hold the text (get_skill). Same delimiter rules, limits
    and YAML refusals as discovery; the body is everything after the closing
    delimiter line, unchanged. The mapping is made JSON-safe (see `json_safe`).
    Parsed leniently: discovery already decided whether such a skill loads, and
    a skill it loaded must not fail when read. Raises FrontmatterError.
    """
    buf = text.encode("utf-8", "surrogatepass")
    found = locate(buf, eof=True)
    assert found is not None  # eof=True: locate() returns or raises
    yaml_start, yaml_end, body_start = found
    fm = parsed_leniently(decode_yaml_bytes(buf, yaml_start, yaml_end))
    body = buf[body_start:].decode("utf-8", "surrogatepass")
    return json_safe(fm.data), body
