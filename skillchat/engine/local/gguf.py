"""What skillchat needs from a GGUF file's header, read without loading the model.

A GGUF file starts with `GGUF`, a version (2 or 3), the tensor and key counts, then
typed key/value pairs: `general.architecture`, `<arch>.context_length` (the context
the model was trained for) and `tokenizer.chat_template` (its Jinja template) are
the three read here. Reading the header lets a missing, truncated or foreign file
fail in one line before a server is started, and sets the server's context size
and chat template before it loads.

Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (little-endian).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from skillchat.errors import LocalModelError, NotRegularFile
from skillchat.localfile import open_regular

MAGIC = b"GGUF"
# Value type codes -> struct format of one scalar (8 is a string, 9 an array).
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
# Bounds that a real header stays far below: a corrupt count fails fast instead of
# reading gigabytes (the largest vocabularies have ~260k tokens).
MAX_KEYS = 100_000
MAX_ITEMS = 10_000_000
MAX_STRING = 50_000_000


@dataclass(frozen=True)
class GgufInfo:
    """The header fields skillchat uses."""

    architecture: str
    context_length: int | None
    chat_template: str | None
    name: str | None


class _Reader:
    """Sequential reads over the mapped file: a vocabulary of 150k strings is walked
    in tens of milliseconds this way (file reads cost ~0.3 s per 50k strings)."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.pos = 0

    def scalar(self, fmt: str) -> int | float | bool:
        value: int | float | bool = struct.unpack_from("<" + fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def skip(self, size: int) -> None:
        if size > MAX_STRING or self.pos + size > len(self.data):
            raise ValueError("past the end")
        self.pos += size

    def string(self) -> str:
        size = int(self.scalar("Q"))
        start = self.pos
        self.skip(size)
        return self.data[start : self.pos].decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        unpack, data, pos = struct.unpack_from, self.data, self.pos
        end = len(data)
        for _ in range(count):
            (size,) = unpack("<Q", data, pos)
            pos += 8 + size
            if pos > end:
                raise ValueError("past the end")
        self.pos = pos

    def value(self, kind: int, keep: bool) -> object:
        """The value of type `kind`; arrays are skipped (None): none is needed here."""
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            if keep:
                return self.string()
            self.skip_strings(1)
            return None
        if kind == _ARRAY:
            item, count = int(self.scalar("I")), int(self.scalar("Q"))
            if count > MAX_ITEMS:
                raise ValueError("array too long")
            if item in _SCALARS:
                self.skip(count * struct.calcsize(_SCALARS[item]))
            elif item == _STRING:
                self.skip_strings(count)
            else:
                raise ValueError(f"unknown array type {item}")
            return None
        raise ValueError(f"unknown value type {kind}")


@contextmanager
def _mapped(stream: BinaryIO, path: Path) -> Iterator[mmap.mmap]:
    """The file mapped read-only (an empty file cannot be mapped: it is not GGUF)."""
    try:
        data = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:
        raise LocalModelError(f"{path}: not a GGUF model file (empty)") from None
    try:
        yield data
    finally:
        data.close()


def read_gguf(path: Path) -> GgufInfo:
    """The header of the GGUF file at `path`; LocalModelError (one line) when it is
    missing, unreadable, not GGUF, or cut short."""
    wanted = {"general.architecture", "general.name", "tokenizer.chat_template"}
    found: dict[str, object] = {}
    try:
        with os.fdopen(open_regular(path), "rb") as stream, _mapped(stream, path) as data:
            if data[:4] != MAGIC:
                raise LocalModelError(f"{path}: not a GGUF model file")
            reader = _Reader(data)
            reader.pos = 4
            version = reader.scalar("I")
            if version not in (2, 3):
                raise LocalModelError(f"{path}: GGUF version {version} is not supported")
            reader.scalar("Q")  # tensor count
            keys = int(reader.scalar("Q"))
            if keys > MAX_KEYS:
                raise ValueError("too many keys")
            for _ in range(keys):
                key = reader.string()
                kind = int(reader.scalar("I"))
                keep = key in wanted or key.endswith(".context_length")
                value = reader.value(kind, keep)
                if keep:
                    found[key] = value
    except FileNotFoundError:
        raise LocalModelError(f"{path}: no such model file") from None
    except NotRegularFile as exc:  # a FIFO would block the open; a device never ends
        raise LocalModelError(f"{path}: not a GGUF model file: {exc}") from None
    except PermissionError:
        raise LocalModelError(f"{path}: permission denied") from None
    except (EOFError, ValueError, struct.error, OSError):
        raise LocalModelError(f"{path}: corrupt or truncated GGUF model file") from None
    arch = found.get("general.architecture")
    if not isinstance(arch, str):
        raise LocalModelError(f"{path}: corrupt GGUF model file (no general.architecture)")
    ctx = found.get(f"{arch}.context_length")
    template = found.get("tokenizer.chat_template")
    name = found.get("general.name")
    return GgufInfo(
        architecture=arch,
        context_length=ctx if isinstance(ctx, int) and ctx > 0 else None,
        chat_template=template if isinstance(template, str) else None,
        name=name if isinstance(name, str) else None,
    )
