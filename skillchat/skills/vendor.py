"""What other skills clients add to the Agent Skills format, and how skillchat reads it.

Frontmatter keys outside the spec that skillchat honours (see `Skill` in model.py):

- `disable-model-invocation: true` (Claude Code): the model is not told of the skill
  and cannot load it; the user's `/name` still works.
- `user-invocable: false` (Claude Code): no `/name` and no completion; the model
  still sees it.
- `when_to_use` (Claude Code): appended to the description the model sees.
- `argument-hint` and `arguments` (Claude Code): what `/name` takes, shown in
  completion and `/help`; the names of `$name` placeholders (skills/arguments.py).
- `paths` (Claude Code): globs; the model is told of the skill only while the
  workspace has a matching file (skills/paths.py).
- `context: fork` (Claude Code): the skill's work runs in a conversation of its own
  (engine/fork.py); `model` (Claude Code): the model its turns go to
  (engine/skill_model.py).
- `hooks` (Claude Code): commands at the chat's moments while the skill is active,
  run in the sandbox once the user trusted them (skillchat/hooks).

Codex keeps its per-skill settings beside SKILL.md, in `agents/openai.yaml`; its
`policy.allow_implicit_invocation: false` means what `disable-model-invocation`
means. That file is read at discovery, so it must be cheap and safe: opened without
following symlinks, a regular file of at most `MAX_OPENAI_YAML` bytes, parsed with
PyYAML's safe loader. A bad one is a warning on the skill, never a crash.

`skills validate` notes these keys (and the other clients' keys it knows) as honoured
by some clients only, so an author knows what another client will ignore.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from skillchat.skills.model import Problem

MAX_OPENAI_YAML = 64 * 1024
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)

# Keys some clients honour and the spec does not define: what validate says of each.
VENDOR_KEYS: dict[str, str] = {
    "disable-model-invocation": "honoured by Claude Code and skillchat; other clients "
    "ignore it and let the model use the skill",
    "user-invocable": "honoured by Claude Code and skillchat; other clients ignore it",
    "when_to_use": "honoured by Claude Code and skillchat (added to the description); "
    "other clients ignore it: put what matters in the description",
    "argument-hint": "shown by Claude Code and skillchat (completion, /help)",
    "arguments": "honoured by Claude Code and skillchat ($name placeholders filled by "
    "/name's words); other clients leave them as written",
    "paths": "honoured by Claude Code and skillchat (listed to the model only while a "
    "matching file exists); other clients always list the skill",
    "model": "honoured by Claude Code and skillchat (the skill's turns go to that "
    "model); other clients ignore it",
    "context": "`context: fork` is honoured by Claude Code and skillchat (the skill runs "
    "as a conversation of its own); other clients ignore it",
    "agent": "honoured by Claude Code only",
    "hooks": "honoured by Claude Code and skillchat (skillchat runs them in the sandbox, "
    "once trusted: docs/hooks.md); other clients ignore them",
}


def read_codex_policy(root: str) -> tuple[bool, Problem | None]:
    """(allow implicit invocation, a warning) from `root/agents/openai.yaml`.

    True with no warning when there is no such file, the common case: one failed
    open. `root` is the skill folder's real path.
    """
    try:
        folder = os.open(f"{root}/agents", _FLAGS | os.O_DIRECTORY)
    except OSError:
        return True, None
    try:
        fd = os.open("openai.yaml", _FLAGS, dir_fd=folder)
    except OSError:
        return True, None
    finally:
        os.close(folder)
    import yaml  # only for a skill that has the file: most starts never load PyYAML

    path = os.path.join(root, "agents", "openai.yaml")

    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_OPENAI_YAML:
            return True, _warning(path, f"not a regular file of at most {MAX_OPENAI_YAML} bytes")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(os.read(fd, MAX_OPENAI_YAML + 1), Loader=loader)
    except (OSError, yaml.YAMLError, ValueError, RecursionError) as exc:
        return True, _warning(path, f"cannot be read ({type(exc).__name__}); its policy is ignored")
    finally:
        os.close(fd)
    policy = data.get("policy") if isinstance(data, dict) else None
    value = policy.get("allow_implicit_invocation") if isinstance(policy, dict) else None
    if value is None:
        return True, None
    if not isinstance(value, bool):
        return True, _warning(path, "policy.allow_implicit_invocation is not true or false")
    return value, None


def _warning(path: str, message: str) -> Problem:
    return Problem(Path(path), f"agents/openai.yaml {message}", "warning")
