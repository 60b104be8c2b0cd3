"""What a user's browser does with the authorization URL `skillchat mcp login NAME`
prints, for the tests and the conformance client (tests/conformance/client.py): the
authorization servers of the tests approve at once and redirect to skillchat's
loopback listener, which the "browser" then opens."""

from __future__ import annotations

import contextlib
import subprocess
import urllib.error
import urllib.request
from typing import Any


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def redirect_of(url: str) -> str | None:
    """Where the authorization server sends the browser from `url` (None: nowhere)."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(url, timeout=60)
    except urllib.error.HTTPError as answer:
        return answer.headers.get("Location")
    return None


def browse(url: str) -> None:
    """Open `url`, then the page it redirects to (the login's listener)."""
    location = redirect_of(url)
    if location:
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(location, timeout=60).read()


def logging_in(login: subprocess.Popen[bytes], open_url: Any = browse) -> str:
    """`skillchat mcp login NAME` started with its stdout piped: the URL it printed,
    opened with `open_url` (if it printed one)."""
    assert login.stdout is not None
    url = login.stdout.readline().decode().strip()
    if url:
        open_url(url)
    return url
