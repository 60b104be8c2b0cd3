"""Images among the files skillchat reads: PNG, JPEG, GIF and WebP, known by their
first bytes (never by their names: a PNG named `notes.txt` is an image, a text file
named `logo.png` is text), sized from their headers without decoding them (no
imaging library: a header gives the dimensions a provider's limits are about).

An image over `ImageLimits` (bytes, or pixels on its longer side) is not read
whole: only its header, so a 40 MB PNG costs a few KB of memory, and it is
described to the model instead of sent. Downscaling would need an imaging
library; a model is better told the size and asked for a smaller file than sent a
picture skillchat cannot check.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
from dataclasses import dataclass

from skillchat.localfile import read_at_most

# Enough of a file for any of the four headers' dimensions: JPEG's frame header may
# follow an EXIF block with a thumbnail (tens of KB).
HEADER_BYTES = 256 * 1024
# What `image_type` needs to tell the four kinds apart.
SNIFF_BYTES = 16

_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


@dataclass(frozen=True)
class ImageLimits:
    """The largest image sent to a model: `max_bytes` of file (its base64 is a third
    more), `max_side` pixels on the longer side."""

    max_bytes: int
    max_side: int


@dataclass(frozen=True)
class Image:
    """An image file as read: its kind, size and dimensions, and its bytes unless it
    was over a limit (`over` says which)."""

    path: str
    mime: str  # image/png, image/jpeg, image/gif, image/webp
    size: int
    width: int | None
    height: int | None
    sha256: str  # of the whole file when read whole, else of the header read
    data: bytes | None = None
    over: str | None = None

    @property
    def truncated(self) -> bool:
        """Never: an image is read whole or not at all (a cut one is no image)."""
        return False

    @property
    def offset(self) -> int:
        """Always its start, where its kind is seen (as `FileText.offset`)."""
        return 0

    def describe(self) -> str:
        """`image/png, 12,345 bytes, 640x480`: what a model without images is told."""
        dims = f", {self.width}x{self.height}" if self.width and self.height else ""
        return f"{self.mime}, {self.size:,} bytes{dims}"

    def data_url(self) -> str:
        """The image as an OpenAI `image_url` takes it inline."""
        assert self.data is not None, "an image over a limit has no data"
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def image_type(head: bytes) -> str | None:
    """The MIME type of an image whose file starts with `head`, None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(mime: str, data: bytes) -> tuple[int, int] | None:
    """(width, height) from the header in `data`, None when it does not say (cut,
    malformed): such an image is still an image, only its size unknown."""
    try:
        if mime == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if mime == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if mime == "image/webp":
            return _webp(data)
        if mime == "image/jpeg":
            return _jpeg(data)
    except struct.error:
        return None
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The frame header's size, walking the segments from the start of the file."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD9)):  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def read_image(fd: int, path: str, mime: str, limits: ImageLimits) -> Image:
    """The image open at `fd` (at its start): whole when within `limits`, else its
    header only, with why it is not sent."""
    size = os.fstat(fd).st_size
    if size > limits.max_bytes:
        head = read_at_most(fd, HEADER_BYTES)
        dims = dimensions(mime, head)
        over = f"over the {limits.max_bytes:,}-byte image limit (max_image_bytes)"
        return _image(path, mime, size, dims, head, over=over)
    data = read_at_most(fd, limits.max_bytes + 1)
    if len(data) > limits.max_bytes:  # grew since the fstat
        over = f"over the {limits.max_bytes:,}-byte image limit (max_image_bytes)"
        return _image(path, mime, len(data), dimensions(mime, data), data, over=over)
    dims = dimensions(mime, data)
    if dims is not None and max(dims) > limits.max_side:
        over = f"over {limits.max_side:,} pixels on a side (max_image_side)"
        return _image(path, mime, len(data), dims, data, over=over)
    return _image(path, mime, len(data), dims, data, keep=True)


def _image(
    path: str,
    mime: str,
    size: int,
    dims: tuple[int, int] | None,
    data: bytes,
    *,
    over: str | None = None,
    keep: bool = False,
) -> Image:
    width, height = dims if dims is not None else (None, None)
    digest = hashlib.sha256(data).hexdigest()
    return Image(path, mime, size, width, height, digest, data if keep else None, over)
