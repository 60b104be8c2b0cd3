"""The contract every tool the model can call follows, and the per-chat state it gets.

A tool is a subclass of `Tool` in its own module, registered once in
`skillchat/tools/toolbox.py` (`TOOLS`). Everything else follows from the class:

- `name` and `schema`: what the model is offered (OpenAI function schema);
- `offered(context)`: whether *this* chat offers it (skill tools only when there are
  skills, `read_file` only with a workspace); a tool not offered is unknown to it;
- `call(args, context)`: the work, on arguments already parsed into a dict; it may
  raise `ToolArgumentError` for arguments it cannot use. `run` wraps it and never
  raises: bad JSON, bad arguments and bugs all become `error(...)` results;
- `error(code, message)`: the tool's own error shape (they differ per tool:
  docs/tools.md);
- `stored(args, content)`: the result as the chat database keeps it (file contents
  and SKILL.md bodies become stubs; a resumed chat's model reads them again);
- `prompt_rule`: a paragraph for the system prompt while the tool is offered (and
  tools are on), for a tool whose use needs more than its schema says; the skill
  and workspace tools' rules are built with the catalog and the workspace name in
  prompt.py instead, so theirs are empty;
- the card: the loop shows `ToolResult.preview`, `size` and `truncated`, so a tool
  decides what its card says by what it puts there.

`ToolContext` is the state of one chat the tools share: the settings (replaced by
`/model`), the skill registry (swapped by `/reload`), the workspace, the ledger of
content already in context, the skills activated so far, and whether the model
takes images (`vision`: an image read is then sent with `ToolResult.image`). A tool that needs a
service of its own (run_command's sandbox runner) is given it when it is made, and
the toolbox holds it only when that service exists: the context has no slot for it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from skillchat.config import Settings
from skillchat.errors import ToolArgumentError
from skillchat.sections import LimitsSettings, ModelSettings
from skillchat.skills.registry import Registry
from skillchat.tools.context import ContentKey, ContextLedger

if TYPE_CHECKING:
    from skillchat.safe_io.images import Image, ImageLimits
    from skillchat.workspace.files import Workspace


@dataclass(frozen=True, eq=False)
class ToolResult:
    """One tool call's outcome: `content` is exactly what the model receives.

    The other fields are for the user and the loop: `preview` is what a tool card may
    show (never a whole SKILL.md body), `activated` names a skill a successful
    get_skill loaded, `context_key` identifies the content this result puts in context,
    `image` is an image to send the model with it (`content` then describes it).
    """

    content: str
    is_error: bool = False
    error_code: str | None = None
    preview: str = ""
    size: int | None = None
    truncated: bool = False
    activated: str | None = None
    context_key: ContentKey | None = None
    image: Image | None = None


@dataclass(frozen=True, eq=False)
class Stored:
    """A tool result as the chat database keeps it, the skill it activated and, for a
    served skill, the digest of the content read (skills/remote.py `digest`)."""

    content: Any
    activated: str | None = None
    digest: str | None = None


@dataclass
class ToolContext:
    """The per-chat state every tool of the chat sees (one object, shared)."""

    settings: Settings
    registry: Registry
    workspace: Workspace | None = None
    ledger: ContextLedger = field(default_factory=ContextLedger)
    activated: list[str] = field(default_factory=list)
    # The served skills among them: each one's digest as this chat read it (what
    # `trusted_as_activated` holds the skill to; a resumed chat's come from its store).
    served: dict[str, str] = field(default_factory=dict)
    # The catalog shortened descriptions or cut names: search_skills is offered.
    catalog_incomplete: bool = False
    # Skills whose `paths` match no file now (engine/steps/paths.py): out of the
    # catalog, so list_skills and search_skills leave them out too.
    unlisted: frozenset[str] = frozenset()
    # run_command is offered: a skill's folder is named as the sandbox shows it.
    commands: bool = False
    # Whether a model (the settings') takes images: engine/images.py decides, asked
    # only when an image is read (it may parse litellm's model map).
    takes_images: Callable[[ModelSettings], bool] = field(default=lambda _model: False)

    @property
    def vision(self) -> bool:
        """The chat's model, as it is now (`/model`), takes images."""
        return self.takes_images(self.settings.model)


def to_json(payload: dict[str, Any]) -> str:
    """A result payload as the model gets it: UTF-8 text, not `\\u` escapes."""
    return json.dumps(payload, ensure_ascii=False, default=str)


def parse_arguments(raw: str) -> dict[str, Any]:
    """The arguments of a call as a dict: empty text means no arguments."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, or an int past Python's 4,300 digits
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ToolArgumentError(f"arguments are not valid JSON ({reason}): {raw[:200]}") from None
    if not isinstance(value, dict):
        raise ToolArgumentError("arguments must be a JSON object")
    return value


def loads_or_none(text: Any) -> Any:
    """JSON text as a value, None when it is not JSON (stored results may be anything)."""
    try:
        return json.loads(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def string_arg(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if value is None:
        raise ToolArgumentError(f"missing required argument '{key}'")
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentError(f"'{key}' must be a non-empty string")
    return value


def max_bytes_arg(args: dict[str, Any]) -> int | None:
    value = args.get("max_bytes")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolArgumentError("'max_bytes' must be a positive integer")
    return value


def offset_arg(args: dict[str, Any]) -> int:
    value = args.get("offset")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolArgumentError("'offset' must be a non-negative integer (bytes)")
    return value


MAX_BYTES_SCHEMA = {"type": "integer", "description": "Optional: return at most this many bytes."}
OFFSET_SCHEMA = {
    "type": "integer",
    "description": "Optional: start at this byte of the file (default 0). A cut result "
    "names the offset to read on from.",
}


def result_cap(settings: Settings) -> int:
    """The most bytes of file text one tool result may hold.

    A quarter of the context budget (`context_max_chars`; a byte is at most a
    character, so the text fits it), never more than `max_resource_bytes`: a few
    reads in one turn still fit the request, and a bigger file is read in pieces
    with `offset`, each cut result saying where the next piece starts.
    """
    return max(1, min(settings.skills.max_resource_bytes, settings.limits.budget // 4))


def image_limits(limits: LimitsSettings) -> ImageLimits:
    """The largest image the settings let a read send (`max_image_bytes`, `_side`)."""
    from skillchat.safe_io.images import ImageLimits  # loaded with a read, not at start

    return ImageLimits(limits.max_image_bytes, limits.max_image_side)


def image_note(image: Image, vision: bool) -> str:
    """What the model reads in place of an image's bytes: its type, size and
    dimensions, and whether the image itself comes with the result."""
    if image.over is not None:
        why = f"not sent, {image.over}; ask the user for a smaller copy if you need it"
    elif not vision:
        why = "not sent: this model is not sent images, only this description"
    else:
        why = "sent as an image with this result"
    return f"[image '{image.path}': {image.describe()}; {why}]"


def image_result(image: Image, vision: bool, key: ContentKey) -> ToolResult:
    """A read that found an image: `content` is the note (the tool's shape wraps it),
    the image rides along when the model takes it and it is within the limits."""
    sent = image if vision and image.data is not None else None
    note = image_note(image, vision)
    return ToolResult(note, preview=note, size=image.size, context_key=key, image=sent)


def function_schema(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    """An OpenAI function-tool schema."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


class Tool(ABC):
    """One tool the model can call (see the module docstring for the whole contract)."""

    name: ClassVar[str]
    schema: ClassVar[dict[str, Any]]
    prompt_rule: ClassVar[str] = ""

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        """Whether a chat with `context` offers this tool."""
        return True

    @abstractmethod
    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        """Do the work; may raise ToolArgumentError, and nothing else on purpose."""

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        """This tool's error result; the default is `{"error", "error_code"}`."""
        content = to_json({"error": message, "error_code": code})
        return ToolResult(content, is_error=True, error_code=code, preview=message)

    @classmethod
    def stored(cls, args: dict[str, Any], content: Any) -> Stored:
        """What the chat database keeps of a result; the default keeps it whole."""
        return Stored(content)

    def run(self, raw_arguments: str, context: ToolContext) -> ToolResult:
        """Run the call on the model's raw argument text; every failure is a result."""
        try:
            return self.call(parse_arguments(raw_arguments), context)
        except ToolArgumentError as exc:
            return self.error("INVALID_ARGUMENT", f"Invalid arguments for {self.name}: {exc}")
        except Exception as exc:  # a bug must not end the chat; the model can go on
            message = f"{self.name} failed: {type(exc).__name__}: {exc}"
            return self.error("INTERNAL_ERROR", message)
