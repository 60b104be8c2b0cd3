"""A real headless browser for the tests of HTML reports: Chromium from Debian's
packages (.ci/run installs it as root when missing; a normal user runs the same
binary). `screenshot` gives a page's pixels, `dump_dom` its DOM once it loaded.

Chromium runs with a profile folder of the test's own, no sandbox of its own (as
root it refuses one; the page is the test's file, read from disk, and has no
network: the reports forbid every fetch), and no GPU.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

BOUND_S = 180  # a browser that never ends fails the test instead of hanging it


def require_chromium() -> str:
    """The browser's path; skipped (failed on CI, which installs it) when missing."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    message = "no chromium here (Debian: apt-get install chromium)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _run(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    browser = require_chromium()
    argv = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={profile}", "--hide-scrollbars", *args, page.resolve().as_uri(),
    ]  # fmt: skip
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=BOUND_S, stdin=subprocess.DEVNULL
    )


def dump_dom(page: Path, profile: Path) -> str:
    """The page's DOM as Chromium serialises it after loading it."""
    done = _run(page, profile, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(page: Path, profile: Path, width: int = 1200, height: int = 900) -> Pixels:
    """The page as Chromium draws it, as pixels."""
    png = profile / "shot.png"
    done = _run(page, profile, f"--screenshot={png}", f"--window-size={width},{height}")
    assert png.is_file(), done.stderr[-2000:]
    return Pixels.of_png(png.read_bytes())


class Pixels:
    """An 8-bit RGB(A) PNG, decoded (the standard library has no PNG reader)."""

    def __init__(self, width: int, height: int, rows: list[bytes], channels: int) -> None:
        self.width, self.height, self.rows, self.channels = width, height, rows, channels

    @classmethod
    def of_png(cls, data: bytes) -> Pixels:
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        at, idat, header = 8, b"", b""
        while at < len(data):
            (length,) = struct.unpack(">I", data[at : at + 4])
            kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
            if kind == b"IHDR":
                header = body
            elif kind == b"IDAT":
                idat += body
            at += 12 + length
        width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
        assert depth == 8 and colour in (2, 6) and interlace == 0, header
        channels = 3 if colour == 2 else 4
        raw = zlib.decompress(idat)
        stride = width * channels
        rows: list[bytes] = []
        previous = bytearray(stride)
        for y in range(height):
            start = y * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                corner = previous[i - channels] if i >= channels else 0
                if kind == 1:
                    line[i] = (line[i] + left) & 0xFF
                elif kind == 2:
                    line[i] = (line[i] + up) & 0xFF
                elif kind == 3:
                    line[i] = (line[i] + (left + up) // 2) & 0xFF
                elif kind == 4:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    near = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                    line[i] = (line[i] + near) & 0xFF
            rows.append(bytes(line))
            previous = line
        return cls(width, height, rows, channels)

    def count(self, rgb: tuple[int, int, int], within: int = 8) -> int:
        """How many pixels are `rgb` (each channel within `within`)."""
        n = 0
        for row in self.rows:
            for x in range(0, len(row), self.channels):
                if all(abs(row[x + c] - rgb[c]) <= within for c in range(3)):
                    n += 1
        return n
