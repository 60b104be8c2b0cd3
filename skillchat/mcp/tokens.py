"""Where an HTTP MCP server's OAuth tokens are kept: one file per server, the user's only.

    $XDG_DATA_HOME/skillchat/mcp-auth/NAME.json     mode 0600, in a 0700 folder

It holds what `skillchat mcp login NAME` obtained: the tokens (access, refresh, when
the access token expires), the client registration the authorization server gave
(dynamic registration), the URL of the server they are for (a changed `url` makes
them unused), and a scope a server asked for more of (step-up) for the next login.
Never the chats database, a log, a card or `--json`: nothing else reads this file.

A file that others can read, that is not the user's, or that is not this JSON is
refused in one line naming `skillchat mcp login NAME` (which writes it anew): a
token someone else may have seen or written is not sent.
"""

from __future__ import annotations

import json
import os
import stat
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from skillchat.errors import McpError

MAX_BYTES = 256 * 1024  # a token file is a few kilobytes; more is not ours


def auth_dir() -> Path:
    from skillchat.sections import user_data_dir

    return user_data_dir() / "mcp-auth"


class TokenFile:
    """One server's token file: read when its connection starts, written as the
    authorization flow obtains or refreshes tokens (see the module docstring)."""

    def __init__(self, name: str, url: str) -> None:
        self.name, self.url = name, url
        self.path = auth_dir() / f"{name}.json"
        self.data: dict[str, Any] = {}
        self.seen: tuple[int, int] | None = None  # the file as last read or written

    def changed(self) -> bool:
        """Whether the file is not the one last read or written here (another
        `skillchat mcp login` wrote it since)."""
        return self._stamp() != self.seen

    def _stamp(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return info.st_ino, info.st_mtime_ns

    def load(self) -> TokenFile:
        """Read the file if there is one (tokens for another URL are not used);
        McpError for one that is loose, not the user's, or unreadable."""
        self.seen = self._stamp()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return self
        except OSError as exc:
            raise self._refused(f"cannot be read ({exc.strerror})") from None
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                raise self._refused("is not a file of this user")
            if info.st_mode & 0o077:
                mode = oct(stat.S_IMODE(info.st_mode))
                raise self._refused(f"can be read by others (mode {mode}), so it is not used")
            raw = file.read(MAX_BYTES + 1)
        try:
            data = json.loads(raw) if len(raw) <= MAX_BYTES else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._refused("is not a token file skillchat wrote")
        if data.get("url") == self.url:
            self.data = data
        return self

    def _refused(self, why: str) -> McpError:
        return McpError(f"its token file {self.path} {why}: run `skillchat mcp login {self.name}`")

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def expires_at(self) -> float | None:
        at = self.data.get("expires_at")
        return float(at) if isinstance(at, (int, float)) else None

    def save(self, **values: Any) -> None:
        """Set `values` (None removes one) and write the file: a new 0600 file in the
        private folder, renamed over the old one."""
        self.data = {
            k: v for k, v in {**self.data, **values, "url": self.url}.items() if v is not None
        }
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
        temporary = folder / f".{self.name}.{os.getpid()}.tmp"
        with suppress(FileNotFoundError):
            temporary.unlink()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(self.data, file)
        os.replace(temporary, self.path)
        self.seen = self._stamp()

    def tokens_saved(self, tokens: dict[str, Any]) -> None:
        expires_in = tokens.get("expires_in")
        at = time.time() + expires_in if isinstance(expires_in, (int, float)) else None
        self.save(tokens=tokens, expires_at=at)

    def forget(self) -> bool:
        """Remove the file (`mcp logout`); whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        self.data = {}
        return True
