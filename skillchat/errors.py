"""The exception hierarchy: one base class the CLI catches, so every failure the
user can act on ends as one line and an exit code, never a traceback.

    SkillchatError              exit 1, message printed as one line
    ├── ConfigError             a config file that cannot be read or is wrong
    ├── UsageError              exit 2: bad flags or arguments
    ├── FileAccessError         a skill or workspace file refused by the path rules (has a code)
    ├── StorageError            the chat database is corrupt, locked or too new
    ├── TrustError              a skill folder that cannot be hashed, a trust store not saved
    └── ProviderError           the model's provider failed (auth, network, 5xx...)
"""

from __future__ import annotations


class SkillchatError(Exception):
    """Base class: `str(err)` is the one line shown to the user."""

    exit_code: int = 1


class ConfigError(SkillchatError):
    """A configuration file or value that cannot be used."""


class UsageError(SkillchatError):
    """The command line itself is wrong (unknown skill, bad option value)."""

    exit_code = 2


class FileAccessError(SkillchatError):
    """A read of a skill or workspace file was refused (skillchat/files.py).

    `code` is one of the tool error codes of DESIGN §5 (NOT_FOUND,
    PATH_TRAVERSAL, ...), so tools can pass it to the model unchanged.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class StorageError(SkillchatError):
    """The chat store cannot be used safely (corrupt, newer schema, locked)."""


class TrustError(SkillchatError):
    """A skill cannot be trusted (its folder is too big or unreadable to hash) or
    the trust store cannot be saved (skillchat/skills/trust.py)."""


class ProviderError(SkillchatError):
    """The model provider failed in a way the user must act on.

    `retryable` marks faults worth another try (429, 5xx, connection, timeout);
    `retry_after` is the provider's Retry-After in seconds, when it sent one.
    """

    def __init__(
        self, message: str, *, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
