"""The exception hierarchy: one base class the CLI catches, so every failure the
user can act on ends as one line and an exit code, never a traceback.

    SkillchatError              exit 1, message printed as one line
    ├── ConfigError             a config file that cannot be read or is wrong
    ├── UsageError              exit 2: bad flags or arguments
    ├── FileAccessError         a skill or workspace file refused by the path rules (has a code)
    ├── FrontmatterError        a SKILL.md whose frontmatter cannot be used (has a line)
    ├── WorkspaceError          the workspace folder is missing, not a folder or unreadable
    ├── StorageError            the chat database is corrupt, locked or too new
    ├── UnknownChatError        no saved chat has that id (or the prefix is ambiguous)
    ├── TrustError              a skill folder that cannot be hashed, a trust store not saved
    ├── ProviderError           the model's provider failed (auth, network, 5xx...)
    ├── IgnoreFileError         a .gitignore (or .git/info/exclude) that exists but cannot be
    │                           read: its folder fails closed (workspace/)
    ├── SearchFileTooLarge      internal to search_files: a file over the read limit, skipped
    ├── RegexTimeout            internal to search_files: a regex past its time, reported
    │                           to the model as INVALID_ARGUMENT
    ├── GlobTimeout             internal to list_files/search_files: the deadline passed
    │                           while a glob was matched; the walk is cut with a note
    ├── NotRegularFile          a path the user named (query file, chat database, GGUF) is a
    │                           FIFO, device, socket or folder (localfile.py); each caller
    │                           words it as its own error
    ├── SandboxFailure          bubblewrap could not set up the sandbox (sandbox/)
    ├── MalformedChunk          a streamed chunk not shaped like a chat.completion.chunk;
    │                           the backends turn it into a ProviderError naming the server
    ├── ToolRoundLimit          the model kept calling tools past max_tool_rounds
    ├── ToolArgumentError       a tool call's arguments are unusable; the tools turn it
    │                           into an error result for the model, so it never reaches
    │                           the user
    └── LocalModelError         a local model (--gguf, --local) cannot be found, read,
                                downloaded or served, or its library is not installed

Where they are raised: ConfigError in config.py and the CLI, UsageError in the CLI
and the engine (an unknown `/skill`), FileAccessError in files.py (and the tools'
skill lookup), FrontmatterError in skills/frontmatter.py (discovery and validation
turn it into a Problem; `skills show` and get_skill fall back to the frontmatter
read at discovery), WorkspaceError in workspace/files.py (the session turns it into
a ConfigError or UsageError naming where the workspace came from), StorageError and
UnknownChatError in chats/, ProviderError in engine/backends and engine/retry (MalformedChunk in the
openai backend's chunk checks, used by both backends),
TrustError in skills/trust.py, ToolRoundLimit in engine/loop.py,
ToolArgumentError in tools/, LocalModelError in engine/local/.

Anything else reaching the CLI is a bug, reported as "internal error: <class>".
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


class FrontmatterError(SkillchatError):
    """The frontmatter cannot be used. `line` is a 1-based SKILL.md line, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class WorkspaceError(SkillchatError):
    """The workspace folder cannot be used (missing, not a folder, unreadable)."""


class StorageError(SkillchatError):
    """The chat store cannot be used safely (corrupt, newer schema, locked)."""


class TrustError(SkillchatError):
    """A skill cannot be trusted (its folder is too big or unreadable to hash) or
    the trust store cannot be saved (skillchat/skills/trust.py)."""


class ProviderError(SkillchatError):
    """The model provider failed in a way the user must act on.

    `retryable` marks faults worth another try (429, 5xx, a refused or dropped
    connection; not a timeout, which is the user's whole wait);
    `retry_after` is the provider's Retry-After in seconds, when it sent one.
    """

    def __init__(
        self, message: str, *, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class UnknownChatError(SkillchatError):
    """No saved chat has that id (or the prefix names more than one): exit 1."""


class ToolRoundLimit(SkillchatError):
    """The model kept calling tools past `max_tool_rounds` (exit 1)."""


class ToolArgumentError(SkillchatError):
    """Arguments the model sent that the tool cannot use (reported, never raised out)."""


class MalformedChunk(SkillchatError):
    """A chunk that parsed as JSON but is not shaped like a chat.completion.chunk
    (`content: 12345`, `tool_calls: 5`); the backend reports it as a ProviderError."""


class IgnoreFileError(SkillchatError):
    """A rules file that exists could not be read: nothing below `folder` is served."""

    def __init__(self, folder: str, name: str, reason: str) -> None:
        super().__init__(reason)
        self.folder = folder  # '' for the root
        self.name = name  # '.gitignore' or '.git/info/exclude'
        self.reason = reason

    @property
    def file(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name


class SearchFileTooLarge(SkillchatError):
    """A file over the read limit while searching: what read_file would cut is not
    searched (workspace/search.py counts it as skipped; never reaches the user)."""


class RegexTimeout(SkillchatError):
    """One file took longer than a search regex may (workspace/search.py turns it into
    an INVALID_ARGUMENT result asking for a simpler pattern)."""


class GlobTimeout(SkillchatError):
    """The search's deadline passed while a glob was being matched against a path
    (workspace/globmatch.py); workspace/scope.py cuts the walk with the time-limit note."""


class NotRegularFile(SkillchatError):
    """A path the user named is not a regular file; `str()` says what it is ("it is a
    FIFO, not a regular file"). Raised by localfile.py, worded by its callers."""


class SandboxFailure(SkillchatError):
    """bubblewrap could not set up the sandbox (the command never ran): run_command
    answers INTERNAL_ERROR, `skillchat doctor` reports the sandbox as unusable."""


class LocalModelError(SkillchatError):
    """A local model cannot be used: a missing or corrupt GGUF file, a failed or
    unverified download, a server that did not start, or no `xllamacpp`
    (skillchat/engine/local/)."""
