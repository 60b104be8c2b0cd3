"""Provider keys stored by `skillchat keys set NAME`, as `llm keys` stores them: one
private JSON file (`keys.json` in the user config folder, 0600), name -> key.

A stored key is used as the environment variable it is named after
(`OPENAI_API_KEY`; `openai` is short for it), put into skillchat's own environment
at start when that variable is not set: **the environment wins**, as a flag wins
over the config file (a key given for one command beats the stored one). Every
backend then finds it where it already looks, and the redaction of secrets
(redact.py masks the value of every variable whose name ends in `KEY` or holds
`TOKEN`, `SECRET`...) covers stored keys too: only such names can be stored.

The file is read only when it is the user's alone: one readable by group or others
(a copy, `umask 000`) or not a JSON object of names to keys is one line, and no
key of it is used; `keys set` and `keys remove` refuse to rewrite it (its keys
would be lost). Values are never printed: `keys list` shows names.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from skillchat.errors import ConfigError, UsageError
from skillchat.sections import user_config_dir

KEYS_FILE = "keys.json"
MAX_BYTES = 64 * 1024  # a keys file is a few hundred bytes
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_SHORT = re.compile(r"[a-z][a-z0-9_]{0,40}")


def keys_path() -> Path:
    return user_config_dir() / KEYS_FILE


def variable(name: str) -> str:
    """The environment variable a stored key stands for: `openai` -> OPENAI_API_KEY."""
    from skillchat.redact import secret_name  # `keys set|remove`, not every start

    if _SHORT.fullmatch(name):
        name = f"{name.upper()}_API_KEY"
    if not _NAME.fullmatch(name) or not secret_name(name):
        shown = json.dumps(name, ensure_ascii=True)
        raise UsageError(
            f"{shown} is no key name: a provider (openai) or a variable whose name ends "
            "in KEY or holds TOKEN or SECRET (OPENAI_API_KEY)"
        )
    return name


def read_keys(path: Path | None = None) -> dict[str, str]:
    """The stored keys; {} without a file. Raises ConfigError for a file that is
    not the user's alone or not a JSON object of key names to keys."""
    path = path or keys_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: stored keys not read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file; stored keys not used")
        if info.st_mode & 0o077:
            mode = oct(stat.S_IMODE(info.st_mode))[2:]
            raise ConfigError(
                f"{path} is readable by others (mode {mode}): stored keys not used; "
                f"`chmod 600 {path}` if it is yours"
            )
        data = file.read(MAX_BYTES + 1)
    try:
        keys = json.loads(data) if len(data) <= MAX_BYTES else None
    except ValueError:
        keys = None
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and _NAME.fullmatch(k) and isinstance(v, str) for k, v in keys.items()
    ):
        raise ConfigError(f"{path}: not a keys file (a JSON object of names to keys); not used")
    return keys


def use_stored_keys() -> str | None:
    """Put each stored key into the environment where its variable is not set;
    the line to say when the file cannot be used, else None."""
    try:
        keys = read_keys()
    except ConfigError as exc:
        return str(exc)
    for name, value in keys.items():
        if value and not os.environ.get(name):
            os.environ[name] = value
    return None


def store_key(name: str, value: str | None) -> None:
    """Set (or, with None, remove) one key; the file is written whole, 0600."""
    path = keys_path()
    keys = read_keys(path)
    if value is None:
        if keys.pop(name, None) is None:
            raise UsageError(f"no key named {name} is stored (see `skillchat keys list`)")
    else:
        keys[name] = value
    data = (json.dumps(keys, indent=2, sort_keys=True) + "\n").encode("utf-8")
    from skillchat.safe_io.write import replace_atomically  # not every start's

    replace_atomically(path, data, ConfigError, "stored keys not written")
