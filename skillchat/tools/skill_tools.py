"""The three skill tools the model can call (DESIGN §5): schemas and implementations.

    list_skills()                                  -> {"skills": [names]}  | {"error"}
    get_skill(skill_name)                          -> {"skill_name", "documentation",
                                                       "frontmatter", "files", "truncated"}
                                                      | {"error", "error_code"}
    read_file_in_skill(skill_name, file_path,
                       max_bytes?)                 -> the file's text | "ERROR: <message>"

The result shapes and error messages are the seeds' own (000, 003, 004), because
models and prompts written against those contracts should work unchanged. Every
file read goes through `skillchat/files.py`. `SkillTools.run` never raises: invalid
JSON, unknown tools, wrong arguments and unexpected failures all become error
results the model can read and recover from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from skillchat.errors import FileAccessError
from skillchat.files import FileText, list_skill_files, read_skill_file, read_skill_md
from skillchat.skills.frontmatter import FrontmatterError, json_safe, split_skill_md
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry
from skillchat.tools.context import ContentKey, ContextLedger

LIST_SKILLS = "list_skills"
GET_SKILL = "get_skill"
READ_FILE = "read_file_in_skill"
TOOL_NAMES = (LIST_SKILLS, GET_SKILL, READ_FILE)
ARGUMENTS_PLACEHOLDER = "$ARGUMENTS"

_SKILL_NAME = {"type": "string", "description": "Name of the skill, as in available_skills."}
SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": LIST_SKILLS,
            "description": "List the names of all available skills, sorted. Use it when "
            "the available_skills list in the system prompt is incomplete.",
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    },
    {
        "type": "function",
        "function": {
            "name": GET_SKILL,
            "description": "Load a skill: returns its SKILL.md instructions (documentation), "
            "frontmatter and the relative paths of its files. Call it before following a "
            "skill, once per skill.",
            "parameters": {
                "type": "object",
                "properties": {"skill_name": _SKILL_NAME},
                "required": ["skill_name"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": READ_FILE,
            "description": "Read a text file inside a skill's folder, e.g. one that its "
            "SKILL.md references. The path is relative to the skill folder.",
            "parameters": {
                "type": "object",
                "properties": {
                    "skill_name": _SKILL_NAME,
                    "file_path": {
                        "type": "string",
                        "description": "Relative path inside the skill folder, "
                        "e.g. 'references/REFERENCE.md'.",
                    },
                    "max_bytes": {
                        "type": "integer",
                        "description": "Optional: return at most this many bytes.",
                    },
                },
                "required": ["skill_name", "file_path"],
            },
        },
    },
]


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome: `content` is exactly what the model receives.

    The other fields are for the user and the loop: `preview` is what a tool card may
    show (never a whole SKILL.md body), `activated` names a skill a successful
    get_skill loaded, `context_key` identifies the content this result puts in context.
    """

    content: str
    is_error: bool = False
    error_code: str | None = None
    preview: str = ""
    size: int | None = None
    truncated: bool = False
    activated: str | None = None
    context_key: ContentKey | None = None


class ToolArgumentError(Exception):
    """Arguments the model sent that the tool cannot use (reported, never raised out)."""


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, default=str)


def _invalid_name_message(name: str) -> str:
    return f"Invalid skill name: '{name}'. Skill names must not contain '/', '\\', or '..'"


def parse_arguments(raw: str) -> dict[str, Any]:
    """The arguments of a call as a dict: empty text means no arguments."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ToolArgumentError(f"arguments are not valid JSON ({exc.msg}): {raw[:200]}") from None
    if not isinstance(value, dict):
        raise ToolArgumentError("arguments must be a JSON object")
    return value


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


class SkillTools:
    """The tools over one registry, with the read limits of the settings.

    `ledger` is the conversation's record of what is in context; results that would
    repeat it become ALREADY_IN_CONTEXT errors.
    """

    def __init__(
        self,
        registry: Registry,
        ledger: ContextLedger,
        *,
        max_skill_md_bytes: int,
        max_resource_bytes: int,
    ) -> None:
        self.registry = registry
        self.ledger = ledger
        self.max_skill_md_bytes = max_skill_md_bytes
        self.max_resource_bytes = max_resource_bytes

    def run(self, name: str, raw_arguments: str) -> ToolResult:
        """Run the call `name(raw_arguments)`; every failure is an error result."""
        try:
            args = parse_arguments(raw_arguments) if name in TOOL_NAMES else {}
            if name == LIST_SKILLS:
                return self.list_skills()
            if name == GET_SKILL:
                return self.get_skill(string_arg(args, "skill_name"))
            if name == READ_FILE:
                return self.read_file_in_skill(
                    string_arg(args, "skill_name"),
                    string_arg(args, "file_path"),
                    max_bytes_arg(args),
                )
        except ToolArgumentError as exc:
            return _error(name, "INVALID_ARGUMENT", f"Invalid arguments for {name}: {exc}")
        except Exception as exc:  # a bug must not end the chat; the model can go on
            return _error(name, "INTERNAL_ERROR", f"{name} failed: {type(exc).__name__}: {exc}")
        known = ", ".join(TOOL_NAMES)
        return _error(name, "INVALID_ARGUMENT", f"Unknown tool '{name}'. Available: {known}")

    def list_skills(self) -> ToolResult:
        """Seed 004. With no skill directory at all, the seed's "folder not found"."""
        names = self.registry.names()
        dirs = self.registry.directories
        if not names and dirs and not any(d.is_dir() for d in dirs):
            where = ", ".join(str(d) for d in dirs)
            return _error(LIST_SKILLS, "NOT_FOUND", f"Skills folder not found at path: {where}")
        return ToolResult(_json({"skills": names}), preview=", ".join(names) or "(no skills)")

    def _lookup(self, skill_name: str) -> Skill:
        """The named skill, or a FileAccessError with the seeds' message."""
        if "/" in skill_name or "\\" in skill_name or ".." in skill_name:
            raise FileAccessError("INVALID_ARGUMENT", _invalid_name_message(skill_name))
        skill = self.registry.get(skill_name)
        if skill is None:
            raise FileAccessError("NOT_FOUND", f"Skill '{skill_name}' not found in skills folder")
        return skill

    def _load(
        self, skill_name: str, arguments: str | None
    ) -> tuple[Skill, FileText, dict[str, Any], str]:
        """(skill, SKILL.md as read, frontmatter, body with $ARGUMENTS and any cut notice)."""
        skill = self._lookup(skill_name)
        md = read_skill_md(skill, limit=self.max_skill_md_bytes)
        try:
            frontmatter, body = split_skill_md(md.text)
        except FrontmatterError:  # edited since discovery, or cut inside the frontmatter
            frontmatter, body = json_safe(skill.frontmatter), md.text
        if arguments is not None:
            body = body.replace(ARGUMENTS_PLACEHOLDER, arguments)
        if md.truncated:
            body = FileText(md.path, body, md.size, True, md.sha256).with_notice()
        return skill, md, frontmatter, body

    def skill_body(self, skill_name: str, arguments: str | None = None) -> str:
        """The SKILL.md body alone, for the system prompt when tools are off (seed 001
        §6.3). Raises FileAccessError with get_skill's message."""
        return self._load(skill_name, arguments)[3]

    def get_skill(self, skill_name: str, arguments: str | None = None) -> ToolResult:
        """Seed 003 / seed 001's activate. `arguments` replaces `$ARGUMENTS` in the body
        (explicit `/name rest` invocation)."""
        try:
            skill, md, frontmatter, body = self._load(skill_name, arguments)
        except FileAccessError as exc:
            return _error(GET_SKILL, exc.code, exc.message)
        key = ContentKey(skill.name, md.path, md.sha256)
        if (holder := self.ledger.holder(key)) is not None:
            return _already(GET_SKILL, f"Skill '{skill.name}'", holder)
        files = list_skill_files(skill)
        payload = {
            "skill_name": skill.name,
            "documentation": body,
            "frontmatter": frontmatter,
            "files": files,
            "truncated": md.truncated,
        }
        shown = ", ".join(files[:8]) + (f", … ({len(files)} files)" if len(files) > 8 else "")
        return ToolResult(
            _json(payload),
            preview=f"files: {shown}",
            size=md.size,
            truncated=md.truncated,
            activated=skill.name,
            context_key=key,
        )

    def read_file_in_skill(
        self, skill_name: str, file_path: str, max_bytes: int | None = None
    ) -> ToolResult:
        """Seed 000 / seed 001's readResource. `max_bytes` can only lower the limit."""
        limit = min(max_bytes or self.max_resource_bytes, self.max_resource_bytes)
        try:
            skill = self._lookup(skill_name)
            file = read_skill_file(skill, file_path, limit=limit)
        except FileAccessError as exc:
            return _error(READ_FILE, exc.code, exc.message)
        text = file.with_notice()
        key = ContentKey(skill.name, file.path, file.sha256)
        if (holder := self.ledger.holder(key)) is not None:
            return _already(READ_FILE, f"File '{file.path}' of skill '{skill.name}'", holder)
        return ToolResult(
            text, preview=text, size=file.size, truncated=file.truncated, context_key=key
        )


def _error(tool: str, code: str, message: str) -> ToolResult:
    """The error shape of each tool: text for read_file_in_skill, JSON otherwise."""
    if tool == READ_FILE:
        content = f"ERROR: {message}"
    elif tool == LIST_SKILLS:
        content = _json({"error": message})
    else:
        content = _json({"error": message, "error_code": code})
    return ToolResult(content, is_error=True, error_code=code, preview=message)


def _already(tool: str, what: str, holder: str) -> ToolResult:
    message = (
        f"{what} is already in context above (result of tool call {holder}), "
        "unchanged; reuse that content instead of loading it again."
    )
    return _error(tool, "ALREADY_IN_CONTEXT", message)
