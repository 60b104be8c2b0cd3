"""The three skill tools the model can call: schemas, implementations, stored forms.

    list_skills()                                  -> {"skills": [names]}  | {"error"}
    get_skill(skill_name, task?)                   -> {"skill_name", "documentation",
                                                       "frontmatter", "files", "truncated"}
                                                      | {"skill_name", "forked", "model",
                                                         "answer", ...}   (context: fork)
                                                      | {"error", "error_code"}
    read_file_in_skill(skill_name, file_path,
                       max_bytes?)                 -> the file's text | "ERROR: <message>"
                                                      | an image's note, the image with it

The result shapes and error messages are a contract (docs/tools.md): models and
prompts written against them must work unchanged. Every
file read goes through `skillchat/safe_io/read.py`. They are offered only in a chat that has
skills. In the chat database, a get_skill result is a stub (SKILL.md bodies are the
skill's, and a resumed chat must read the current version) and so is the text of a
successful read_file_in_skill; errors are kept, so a resumed model sees why a call
failed.
"""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from skillchat.errors import FileAccessError, FrontmatterError
from skillchat.mounts import SKILLS_MOUNT
from skillchat.safe_io.read import FileText, truncation_notice
from skillchat.skills.arguments import ArgumentFiller, argument_names, substitute_skill_dir
from skillchat.skills.frontmatter import split_skill_md
from skillchat.skills.frontmatter_yaml import json_safe
from skillchat.skills.model import Skill
from skillchat.tools.base import (
    MAX_BYTES_SCHEMA,
    OFFSET_SCHEMA,
    Stored,
    Tool,
    ToolContext,
    ToolResult,
    function_schema,
    image_limits,
    image_result,
    loads_or_none,
    max_bytes_arg,
    offset_arg,
    result_cap,
    string_arg,
    to_json,
)
from skillchat.tools.context import ContentKey
from skillchat.tools.run_command import CommandRunner

if TYPE_CHECKING:
    from skillchat.tools.inline_commands import InlineRuns

LIST_SKILLS = "list_skills"
GET_SKILL = "get_skill"
READ_FILE = "read_file_in_skill"
STUB_NOTE = "SKILL.md body not stored; call get_skill again if needed"
SKILL_FILE_STUB_NOTE = "file content not stored; call read_file_in_skill again if needed"
FOR_OTHER_FILES = (
    "{n} more skill(s) not listed: their `paths` match no file in this workspace "
    "or this chat (they are for other files)"
)

_SKILL_NAME = {"type": "string", "description": "Name of the skill, as in available_skills."}


_TASK = {
    "type": "string",
    "description": "For a skill marked (runs on its own) in available_skills: what it "
    "should do, with everything it needs to know. It works in a conversation of its own "
    "and returns only its answer. Ignored for other skills.",
}


class Forker(Protocol):
    """Runs a `context: fork` skill's work as a conversation of its own and returns
    its answer as get_skill's result (engine/fork.py; the session hands it over)."""

    def __call__(self, skill: Skill, body: str, task: str | None) -> ToolResult: ...


def _invalid_name_message(name: str) -> str:
    return f"Invalid skill name: '{name}'. Skill names must not contain '/', '\\', or '..'"


def _already(tool: type[Tool], what: str, holder: str) -> ToolResult:
    message = (
        f"{what} is already in context above (result of tool call {holder}), "
        "unchanged; reuse that content instead of loading it again."
    )
    return tool.error("ALREADY_IN_CONTEXT", message)


def lookup(context: ToolContext, skill_name: str, *, by_model: bool = True) -> Skill:
    """The named skill, or a FileAccessError with the contract's message.

    A skill its author hid from the model (`disable-model-invocation`, Codex's
    `allow_implicit_invocation: false`) is the user's to start: the model may use
    it only once the user's `/name` activated it in this chat.
    """
    if "/" in skill_name or "\\" in skill_name or ".." in skill_name:
        raise FileAccessError("INVALID_ARGUMENT", _invalid_name_message(skill_name))
    skill = context.registry.get(skill_name)
    if skill is None:
        raise FileAccessError("NOT_FOUND", f"Skill '{skill_name}' not found in skills folder")
    if by_model and not skill.model_invocable and skill.name not in context.activated:
        raise FileAccessError(
            "USER_ONLY",
            f"Skill '{skill.name}' can only be started by the user (/{skill.name}); "
            + (
                "the user made it manual"
                if skill.override == "manual"
                else "its author turned off model invocation"
            ),
        )
    return skill


def _stub(skill_name: object, **more: object) -> str:
    return to_json({"skill_name": skill_name, **more, "stub": STUB_NOTE})


class SkillTool(Tool):
    """A tool over the chat's skills: offered only when the chat has some."""

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        return bool(context.registry.skills)


class ListSkills(SkillTool):
    """The skills' names; with no skill directory at all, "folder not found"."""

    name = LIST_SKILLS
    schema = function_schema(
        LIST_SKILLS,
        "List the names of all available skills, sorted. Use it when "
        "the available_skills list in the system prompt is incomplete.",
        {},
        [],
    )

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        return ToolResult(to_json({"error": message}), True, code, preview=message)

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        every = context.registry.model_names()
        names = [name for name in every if name not in context.unlisted]
        dirs = context.registry.directories
        if not every and dirs and not any(d.is_dir() for d in dirs):
            where = ", ".join(str(d) for d in dirs)
            return self.error("NOT_FOUND", f"Skills folder not found at path: {where}")
        payload: dict[str, Any] = {"skills": names}
        if len(names) < len(every):  # as the catalog: for files this workspace lacks
            payload["notice"] = FOR_OTHER_FILES.format(n=len(every) - len(names))
        return ToolResult(to_json(payload), preview=", ".join(names) or "(no skills)")


class GetSkill(SkillTool):
    """A skill's instructions (activating it); also what `/name` runs (with
    `$ARGUMENTS`). Made with a `Forker`, it runs a `context: fork` skill instead of
    loading it; without one (inside a fork, in eval's bare chats) it loads it."""

    name = GET_SKILL
    schema = function_schema(
        GET_SKILL,
        "Load a skill: returns its SKILL.md instructions (documentation), "
        "frontmatter and the relative paths of its files. Call it before following a "
        "skill, once per skill. A skill that runs on its own does the task you give "
        "it and returns its answer instead.",
        {"skill_name": _SKILL_NAME, "task": _TASK},
        ["skill_name"],
    )

    def __init__(self, runner: CommandRunner | None = None, fork: Forker | None = None) -> None:
        self.runner = runner  # runs the body's inline commands (inline_commands.py)
        self.fork = fork  # runs a `context: fork` skill as a conversation of its own

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        task = args.get("task")
        task = task if isinstance(task, str) and task.strip() else None
        return self.load(context, string_arg(args, "skill_name"), task=task)

    @staticmethod
    def source(
        context: ToolContext, skill_name: str, *, by_model: bool
    ) -> tuple[Skill, FileText, dict[str, Any], str]:
        """(skill, SKILL.md as read, frontmatter, body as written). Raises
        FileAccessError with get_skill's message."""
        # Imported at a skill's first read: their dataclasses cost every start.
        from skillchat.skills.files import read_skill_md

        skill = lookup(context, skill_name, by_model=by_model)
        md = read_skill_md(skill, limit=context.settings.skills.max_skill_md_bytes)
        try:
            frontmatter, body = split_skill_md(md.text)
        except FrontmatterError:  # edited since discovery, or cut inside the frontmatter
            frontmatter, body = json_safe(skill.frontmatter), md.text
        return skill, md, frontmatter, body

    @staticmethod
    def render(
        context: ToolContext,
        skill: Skill,
        md: FileText,
        frontmatter: dict[str, Any],
        body: str,
        arguments: str | None,
        runner: CommandRunner | None,
    ) -> tuple[str, InlineRuns]:
        """The body as the model gets it: its skill-folder variables, its inline
        commands run by `runner` (or kept, noted) and, from `/name`, its arguments
        filled in (skills/arguments.py), then any cut notice."""
        from skillchat.tools.inline_commands import run_inline_commands

        body = substitute_skill_dir(body, skill.name, sandbox=context.commands)
        filler = (
            None if arguments is None else ArgumentFiller(arguments, argument_names(frontmatter))
        )
        run = partial(runner.run, context=context) if runner is not None else None
        body, inline = run_inline_commands(body, skill.name, run, filler)
        if filler is not None:
            body = filler.finish(body)
        if md.truncated:
            body += truncation_notice(md.path, md.offset, md.end, md.size)
        return body, inline

    @classmethod
    def read(
        cls, context: ToolContext, skill_name: str, arguments: str | None
    ) -> tuple[str, InlineRuns]:
        """The body of `/name arguments` with no runner (tools off: nothing runs), and
        what became of its inline commands. Raises FileAccessError."""
        skill, md, frontmatter, body = cls.source(context, skill_name, by_model=False)
        return cls.render(context, skill, md, frontmatter, body, arguments, None)

    def load(
        self,
        context: ToolContext,
        skill_name: str,
        arguments: str | None = None,
        task: str | None = None,
    ) -> ToolResult:
        """get_skill(skill_name); `arguments` fills the body's placeholders
        (explicit `/name rest` invocation: set on the user's path only) and is a
        forked skill's task."""
        try:
            skill, md, frontmatter, body = self.source(
                context, skill_name, by_model=arguments is None
            )
        except FileAccessError as exc:
            return self.error(exc.code, exc.message)
        if skill.forked and self.fork is not None:
            body, _ = self.render(context, skill, md, frontmatter, body, arguments, self.runner)
            return self.fork(skill, body, arguments or task)
        key = ContentKey(skill.name, md.path, md.sha256)
        # `/pdf a` then `/pdf b` fills the body's placeholders with other words: sent again.
        filled = arguments and ArgumentFiller(arguments, argument_names(frontmatter)).fills(body)
        if not filled and (holder := context.ledger.holder(key)) is not None:
            return _already(GetSkill, f"Skill '{skill.name}'", holder)
        body, inline = self.render(context, skill, md, frontmatter, body, arguments, self.runner)
        from skillchat.skills.files import list_skill_files

        listing = list_skill_files(skill)
        files = listing.paths
        payload = {
            "skill_name": skill.name,
            "documentation": body,
            "frontmatter": frontmatter,
            "files": files,
            "truncated": md.truncated,
        }
        if skill.remote is not None:  # the server it came from, with the text it sent
            payload["origin"] = skill.origin
            payload["digest"] = skill.remote.digest  # what the chat records it read
        shown = ", ".join(files[:8]) + (f", … ({len(files)} files)" if len(files) > 8 else "")
        if (cut := listing.notice()) is not None:  # a cut list says so, to model and user
            payload["files_notice"] = cut
            shown += f"\n{cut}"
        if (ran := inline.summary()) is not None:
            shown += f"\n{ran}"
        return ToolResult(
            to_json(payload),
            preview=f"files: {shown}",
            size=md.size,
            truncated=md.truncated,
            activated=skill.name,
            context_key=key,
        )

    @classmethod
    def stored(cls, args: dict[str, Any], content: Any) -> Stored:
        """A stub, except errors and a fork's answer (they hold no body); only a
        loaded skill activates."""
        result = loads_or_none(content)
        kept = isinstance(result, dict) and ("error" in result or result.get("forked") is True)
        if kept and "documentation" not in result:
            return Stored(content)
        name = result.get("skill_name") if isinstance(result, dict) else None
        name = name if isinstance(name, str) and name else args.get("skill_name")
        activated = name if isinstance(result, dict) and isinstance(name, str) else None
        digest = result.get("digest") if isinstance(result, dict) else None
        return Stored(_stub(name), activated, digest if isinstance(digest, str) else None)


class ReadFileInSkill(SkillTool):
    """One file of a skill, from byte `offset` on. `max_bytes` can only
    lower the limit, which is `result_cap`."""

    name = READ_FILE
    schema = function_schema(
        READ_FILE,
        "Read a file inside a skill's folder, e.g. one that its SKILL.md "
        "references: text, or an image (PNG, JPEG, GIF, WebP). The path is relative "
        "to the skill folder.",
        {
            "skill_name": _SKILL_NAME,
            "file_path": {
                "type": "string",
                "description": "Relative path inside the skill folder, "
                "e.g. 'references/REFERENCE.md'.",
            },
            "max_bytes": MAX_BYTES_SCHEMA,
            "offset": OFFSET_SCHEMA,
        },
        ["skill_name", "file_path"],
    )

    @classmethod
    def error(cls, code: str, message: str) -> ToolResult:
        return ToolResult(f"ERROR: {message}", True, code, preview=message)

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        skill_name, file_path = string_arg(args, "skill_name"), string_arg(args, "file_path")
        most = result_cap(context.settings)
        limit, offset = min(max_bytes_arg(args) or most, most), offset_arg(args)
        # The folder as commands see it (`${CLAUDE_SKILL_DIR}`) is the skill's own.
        file_path = file_path.removeprefix(f"{SKILLS_MOUNT}/{skill_name}/")
        images = image_limits(context.settings.limits)
        try:
            from skillchat.skills.files import read_skill_resource

            skill = lookup(context, skill_name)
            file = read_skill_resource(skill, file_path, limit=limit, offset=offset, images=images)
        except FileAccessError as exc:
            return self.error(exc.code, exc.message)
        key = ContentKey(skill.name, file.path, file.sha256, file.offset)
        if (holder := context.ledger.holder(key)) is not None:
            return _already(ReadFileInSkill, f"File '{file.path}' of skill '{skill.name}'", holder)
        if not isinstance(file, FileText):  # an Image
            return image_result(file, context.vision, key)
        text = file.with_notice()
        return ToolResult(
            text, preview=text, size=file.size, truncated=file.truncated, context_key=key
        )

    @classmethod
    def stored(cls, args: dict[str, Any], content: Any) -> Stored:
        """A successful read is a stub naming the file (the SKILL.md's with get_skill's
        note, since it is that body); an error is kept."""
        if not isinstance(content, str) or content.startswith("ERROR:"):
            return Stored(content)
        path = args.get("file_path")
        parts = re.split(r"[/\\]", path) if isinstance(path, str) else []
        parts = [p for p in parts if p not in ("", ".")]
        if [p.lower() for p in parts] == ["skill.md"]:
            return Stored(_stub(args.get("skill_name"), file_path=path))
        note = {"skill_name": args.get("skill_name"), "file_path": path}
        return Stored(to_json({**note, "stub": SKILL_FILE_STUB_NOTE}))
