"""Secrets kept off the screen: every error line and `--debug` traceback skillchat
prints goes through `redact` first, and so does what a package install reports (its
progress lines and its failure, which quote the user's index URL, credentials and
all, and go to the model too: sandbox/envs/install.py). Below every layer that
reports: it needs only the environment.

A provider's error body may echo the key it was sent (OpenAI's 401 quotes part of
it; a proxy may quote the whole `Authorization` header), an exception chain under
`--debug` carries that body verbatim, and an `api_base` may hold credentials of its
own (`https://user:password@host`, `?api-key=...`). What is masked:

- the value of every environment variable whose name says it holds a secret
  (ending in `KEY`, or holding `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD` or `CREDENTIAL`:
  OPENAI_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY...), wherever it appears, when it
  is long enough to be one;
- anything shaped like a key: `Bearer <token>`, `sk-...`;
- credentials in URLs: the `user:password@` part and the values of `key`,
  `api-key`/`api_key`/`apikey`, `token`, `access_token`, `sig` and `password`
  query parameters.

Each becomes `***`. The backends already mask what they know in their one-line
messages; this is the last gate, for the lines and tracebacks they do not shape.
"""

from __future__ import annotations

import os
import re

MASK = "***"
MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary words

_SECRET_NAME = re.compile(r"KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
_PATTERNS = (
    (re.compile(r"\b(Bearer\s+)[^\s\"',;]+", re.I), rf"\1{MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_\-.]{8,}"), f"sk-{MASK}"),
    (re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^/\s@:]*:[^/\s@]*@", re.I), rf"\1{MASK}@"),
    (
        re.compile(
            r"([?&;](?:api[-_]?key|key|token|access_token|sig|signature|password)=)[^&#\s\"']+",
            re.I,
        ),
        rf"\1{MASK}",
    ),
)


def secret_name(name: str) -> bool:
    """Whether an environment variable of this name is taken to hold a secret."""
    return _SECRET_NAME.search(name) is not None


def _secret_values() -> list[str]:
    """The values of the secret-looking environment variables, longest first (so a
    key that contains another is masked whole)."""
    values = {
        value
        for name, value in os.environ.items()
        if len(value) >= MIN_SECRET and secret_name(name)
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by `***`."""
    for value in _secret_values():
        text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def traceback_text(exc: BaseException) -> str:
    """The `--debug` traceback of `exc` (its chain included), secrets masked."""
    import traceback  # `--debug` only: not on the path of every warning line

    return redact("".join(traceback.format_exception(exc)))
