"""`run_command`: one shell command line, run in the sandbox with the user's consent.

    run_command(command, skill_name?, timeout_s?)
        -> {"exit_code", "stdout", "stderr", "truncated", "duration_ms", "files_written"}
         | {"error", "error_code"}   NOT_ALLOWED, NO_SANDBOX, TIMEOUT,
                                     INVALID_ARGUMENT, INTERNAL_ERROR

The tool is only the model-facing side: the schema, the paragraph of the system
prompt that says what the sandbox shows, and when it is offered. The work is done
by the chat's `CommandRunner` (skillchat/sandbox/command_tool.py, a higher layer:
consent, policy, bubblewrap), which the session hands the tool when it makes it,
only when a sandbox works here and running is not switched off. No runner, no tool.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from skillchat.tools.base import Tool, ToolContext, ToolResult, function_schema

RUN_COMMAND = "run_command"


class CommandRunner(Protocol):
    """Runs one call's (parsed) arguments for the chat of `context` (a fork's, or the
    chat's: its gates are that chat's); raises ToolArgumentError for bad ones."""

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolResult: ...


class RunCommand(Tool):
    name = RUN_COMMAND
    schema: ClassVar[dict[str, Any]] = function_schema(
        RUN_COMMAND,
        "Run one shell command line (bash) in a sandbox, e.g. a script a skill's "
        "instructions call for: skill folders are read-only at /skills/<name>, the "
        "writable scratch folder is /scratch. The user may refuse.",
        {
            "command": {
                "type": "string",
                "description": "The command line, e.g. "
                "'python3 /skills/pdf/scripts/fill.py form.pdf'.",
            },
            "skill_name": {
                "type": "string",
                "description": "The skill whose instructions call for this command.",
            },
            "timeout_s": {
                "type": "number",
                "description": "Optional time limit in seconds (default 120).",
            },
        },
        ["command"],
    )
    prompt_rule = (
        "Commands run with run_command, one bash command line at a time, in a sandbox "
        "the user approves (they may refuse). Inside it every skill's folder is read-only "
        "at /skills/<skill-name> (a skill's `scripts/x.py` is "
        "/skills/<skill-name>/scripts/x.py; run Python as `python3 path`, shell scripts "
        "as `bash path`), the workspace (if any) is /workspace, and /scratch is a "
        "writable folder kept for this chat: write output files there. Commands start in "
        "/workspace when there is one, else /scratch; `cd` first when a skill says to run "
        "from its own folder. The home folder is empty, there is no network unless the "
        "user allowed it, and only the standard system programs are installed."
    )

    def __init__(self, runner: CommandRunner) -> None:
        self.runner = runner

    @classmethod
    def offered(cls, context: ToolContext) -> bool:
        """Only for skills' instructions (and only made with a runner: a sandbox)."""
        return bool(context.registry.skills)

    def call(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        return self.runner.run(args, context)
