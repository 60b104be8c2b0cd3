"""skillchat's exceptions, in two trees: what the user is told, and what never
leaves the code just above the one that raised it.

    Exception
    ├── SkillchatError              user-facing: the CLI prints str(err) as one line
    │   │                           and exits with exit_code (1), never a traceback
    │   ├── UsageError              exit 2: bad flags or arguments, an unknown `/skill`
    │   ├── ConfigError             a config file or value that cannot be used:
    │   │   └── HookError           a hook id that names none, hook trust not saved
    │   ├── HookBlocked             a `user_prompt_submit` hook refused the message
    │   ├── SkillError              a skill that cannot be used:
    │   │   ├── FrontmatterError    its SKILL.md's frontmatter (has a line)
    │   │   ├── TrustError          its folder cannot be hashed, or trust not saved
    │   │   ├── InstallError        `skills add/update/sync` cannot go on: nothing written
    │   │   ├── LockError           a skills.lock that cannot be read or written
    │   │   ├── RefusedDeclaration  a declared package a safe install cannot honour
    │   │   └── InstallFailed       a skill's package environment could not be made
    │   ├── FileError               a file or folder pointed at:
    │   │   ├── FileAccessError     a read refused by the path rules (has a tool code)
    │   │   └── WorkspaceError      the workspace is missing, not a folder, unreadable
    │   ├── ChatError               the saved chats:
    │   │   ├── StorageError        the database is corrupt, locked or too new
    │   │   └── UnknownChatError    no chat has that id (or the prefix is ambiguous)
    │   ├── McpError                an MCP server cannot be started or answered
    │   ├── TerminalError           the external editor gave nothing usable
    │   └── ModelError              the model could not answer:
    │       ├── ProviderError       its provider failed (auth, network, 5xx...)
    │       ├── LocalModelError     a local model cannot be found, fetched or served
    │       └── ToolRoundLimit      it kept calling tools past max_tool_rounds
    └── InternalSignal              never shown: the caller turns it into something
        │                           else, so one reaching the CLI is a bug
        ├── ToolArgumentError       unusable tool arguments → INVALID_ARGUMENT result
        ├── MalformedChunk          a stream chunk of the wrong shape → ProviderError
        ├── SearchFileTooLarge      a file over the read limit → counted as skipped
        ├── RegexTimeout            a regex past its time → INVALID_ARGUMENT result
        ├── IgnoreFileError         an unreadable .gitignore → its folder fails closed
        ├── GlobTimeout             a glob matched past the search's deadline → the walk
        │                           is cut with the time-limit note
        ├── NotRegularFile          a path the user named is a FIFO, device, socket or
        │                           folder (localfile.py) → each caller's own error
        ├── EnvRefused              a command's packages not ready → its error result
        ├── SandboxFailure          bubblewrap could not start → INTERNAL_ERROR
        │                           result, or `doctor`'s "sandbox unusable"
        ├── WireError               the model's server cannot be reached, went silent,
        │                           broke the connection or redirected → ProviderError
        └── CrossOriginRedirect     a redirect to another origin → ProviderError; in
                                    engine/backends/origin.py, as it is also an
                                    httpx.HTTPError (this module imports nothing)

The families are what a caller catches when it does not care which member it got.
The internal signals are outside the user-facing root on purpose: `except
SkillchatError` (the CLI, the REPL, eval) must never swallow one and show its text
as if it were the user's to act on; tests/test_errors_cli.py checks that this
drawing is the real tree.

Where they are raised: UsageError and ConfigError in the CLI, config.py and the
engine; FrontmatterError in skills/frontmatter.py (discovery and validation turn it
into a Problem); TrustError in skills/trust.py; FileAccessError in safe_io/read.py
(and the tools' skill lookup); WorkspaceError in workspace/files.py (the session
words it as a ConfigError or UsageError naming where the workspace came from);
StorageError and UnknownChatError in chats/; HookError and HookBlocked in hooks/,
cli/hooks_cmd.py and engine/steps/hooks.py; McpError in mcp/; ProviderError in engine/backends and
engine/retry; LocalModelError in engine/local/; ToolRoundLimit in engine/loop.py;
ToolArgumentError in tools/, sandbox/command_tool.py and skills/shell_words.py (a `/name`
word that cannot be quoted into an inline command); MalformedChunk in the
chunk reader (engine/backends/sse.py); SearchFileTooLarge and RegexTimeout in
workspace/search.py; IgnoreFileError in workspace/ignore.py; SandboxFailure in
sandbox/; WireError in engine/backends/wire.py.

Anything else reaching the CLI is a bug, reported as "internal error: <class>".
"""

from __future__ import annotations


class SkillchatError(Exception):
    """Base class: `str(err)` is the one line shown to the user."""

    exit_code: int = 1


class InternalSignal(Exception):
    """Raised to the code just above, which turns it into a result, a skip or a
    user-facing error; never meant to reach the user as it is."""


class SkillError(SkillchatError):
    """A skill cannot be used (its frontmatter, its trust)."""


class FileError(SkillchatError):
    """A file or folder the user or the model pointed at cannot be used."""


class ChatError(SkillchatError):
    """The saved chats cannot be used as asked."""


class ModelError(SkillchatError):
    """The model could not give an answer (its provider, a local model, its tool use)."""


class ConfigError(SkillchatError):
    """A configuration file or value that cannot be used."""


class UsageError(SkillchatError):
    """The command line itself is wrong (unknown skill, bad option value)."""

    exit_code = 2


class TerminalError(SkillchatError):
    """The external editor gave nothing usable (ui/external_editor.py)."""


class FileAccessError(FileError):
    """A read of a skill or workspace file was refused (skillchat/safe_io/read.py).

    `code` is one of the tool error codes (NOT_FOUND, PATH_TRAVERSAL,
    PERMISSION_DENIED, UNSUPPORTED_FILE, INVALID_ARGUMENT, INTERNAL_ERROR), so tools
    can pass it to the model unchanged.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class FrontmatterError(SkillError):
    """The frontmatter cannot be used. `line` is a 1-based SKILL.md line, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class WorkspaceError(FileError):
    """The workspace folder cannot be used (missing, not a folder, unreadable)."""


class StorageError(ChatError):
    """The chat store cannot be used safely (corrupt, newer schema, locked)."""


class TrustError(SkillError):
    """A skill cannot be trusted (its folder is too big or unreadable to hash) or
    the trust store cannot be saved (skillchat/skills/trust.py)."""


class InstallError(SkillError):
    """An install (`skills add`, `update`, `sync`) that cannot go on: one line, nothing
    written (skills/install.py)."""


class LockError(SkillError):
    """A skills.lock that cannot be read or written: one line, nothing changed
    (skills/lock.py)."""


class RefusedDeclaration(SkillError):
    """A declared requirement a safe install cannot honour (one line: file, line,
    why; sandbox/envs/declared.py)."""


class InstallFailed(SkillError):
    """A package install that did not give an environment (one line: what and why;
    sandbox/envs/install.py)."""


class McpError(SkillchatError):
    """An MCP server that could not be started, reached, or answered in time
    (skillchat/mcp/): `mcp list` and `mcp tools` say it; a tool call turns it into
    its error result and the chat goes on."""


class ProviderError(ModelError):
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


class UnknownChatError(ChatError):
    """No saved chat has that id (or the prefix names more than one): exit 1."""


class ToolRoundLimit(ModelError):
    """The model kept calling tools past `max_tool_rounds` (exit 1)."""


class ToolArgumentError(InternalSignal):
    """Arguments the model sent that the tool cannot use (reported, never raised out)."""


class MalformedChunk(InternalSignal):
    """A chunk that parsed as JSON but is not shaped like a chat.completion.chunk
    (`content: 12345`, `tool_calls: 5`); the backend reports it as a ProviderError."""


class WireError(InternalSignal):
    """The model's HTTP connection failed (engine/backends/wire.py); each backend
    words it as its one-line ProviderError. `timed_out`: no answer, or no data,
    within the timeout. `refused`: nothing listens there. `redirect`: the server
    answered 3xx, not followed; the target's `scheme://host:port` when it is another
    origin, else its path."""

    def __init__(
        self,
        message: str,
        *,
        timed_out: bool = False,
        refused: bool = False,
        redirect: str | None = None,
    ) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.refused = refused
        self.redirect = redirect


class IgnoreFileError(InternalSignal):
    """A rules file that exists could not be read: nothing below `folder` is served."""

    def __init__(self, folder: str, name: str, reason: str) -> None:
        super().__init__(reason)
        self.folder = folder  # '' for the root
        self.name = name  # '.gitignore' or '.git/info/exclude'
        self.reason = reason

    @property
    def file(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name


class SearchFileTooLarge(InternalSignal):
    """A file over the read limit while searching: what read_file would cut is not
    searched (workspace/search.py counts it as skipped; never reaches the user)."""


class RegexTimeout(InternalSignal):
    """One file took longer than a search regex may (workspace/search.py turns it into
    an INVALID_ARGUMENT result asking for a simpler pattern)."""


class GlobTimeout(InternalSignal):
    """The search's deadline passed while a glob was being matched against a path
    (workspace/globmatch.py); workspace/scope.py cuts the walk with the time-limit note."""


class NotRegularFile(InternalSignal):
    """A path the user named is not a regular file; `str()` says what it is ("it is a
    FIFO, not a regular file"). Raised by localfile.py, worded by its callers."""


class EnvRefused(InternalSignal):
    """A command cannot run with its packages (not allowed, refused, failed):
    `code` and one line, which run_command turns into the model's error result."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class SandboxFailure(InternalSignal):
    """bubblewrap could not set up the sandbox (the command never ran): run_command
    answers INTERNAL_ERROR, `skillchat doctor` reports the sandbox as unusable."""


class LocalModelError(ModelError):
    """A local model cannot be used: a missing or corrupt GGUF file, a failed or
    unverified download, a server that did not start, or no `xllamacpp`
    (skillchat/engine/local/)."""


class HookError(ConfigError):
    """A hook cannot be used as configured (`skillchat hooks trust` of an unknown one,
    an unusable hooks trust store)."""


class HookBlocked(SkillchatError):
    """A `user_prompt_submit` hook refused the message: its reason is the line."""
