"""How many of the real skills' scripts run when a model copies the command line its
SKILL.md shows through run_command: commands allowed, installs allowed (with the
config's [packages] below, what the corpus's notes say the skills forgot), no
workspace, the network off for the run (on only for the install, to the configured
index and registry). Run it with this checkout and with an older one on PYTHONPATH
to compare.

The command is the SKILL.md's line as written, with what a model fills in: each
`<placeholder>` becomes `x` (one naming the skill's path, its folder
`/skills/NAME`, which the model is told), `[optional parts]` are dropped, and an import line
(`from core.x import Y`) becomes `python -c "import core.x"`. A row whose SKILL.md
names no command line (a helper another script imports, a mention in prose) is
counted apart.

"Runs" means the script started: no exit 126/127, no missing module or package, no
missing or unexecutable script file, no refusal or failed install. It may still
stop on its placeholder arguments, or run past the time limit ("exit 0" counts
those that ended well).

    python benchmarks/measure_real_commands.py CORPUS_FOLDER [DATA_FOLDER]

DATA_FOLDER keeps the environments between runs (default: a temporary folder).
"""

from __future__ import annotations

import csv
import json
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillchat.config import Settings
from skillchat.sandbox.command_tool import RunRequest, Verdict
from skillchat.sandbox.setup import command_runner
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry

PACKAGES = {"skill-creator": ("pyyaml",), "mcp-builder": ("mcp<2",)}
# What says the script never started (a file error of the script's own is its run).
NOT_RUN = re.compile(
    r"ModuleNotFoundError|can't open file|command not found|: not found$|"
    r"^(?:\S*bash: )(?:line \d+: )?[^:]+: (?:No such file or directory|Permission denied)$|"
    r"Cannot find module|Cannot find package|ERR_MODULE_NOT_FOUND",
    re.M,
)
PROGRAMS = ("python", "python3", "node", "bash", "nohup", "scripts/", "./", "get-", "uv ")


@dataclass
class Live:
    """The session state the runner reads: fixed here."""

    settings: Settings
    registry: Registry
    chat_id: str | None = "measure"


def command_of(quote: str, skill: str) -> str | None:
    """The command a model would run for a SKILL.md quote, or None (not a command)."""
    text = quote.strip()
    if match := re.match(r"^`([^`]+)`", text):
        text = match.group(1)
    if match := re.match(r"^from ([\w.]+) import", text):
        return f'python -c "import {match.group(1)}"'
    if not text.startswith(PROGRAMS):
        return None
    text = re.sub(r"\s*\[[^\]]*\]", "", text)
    text = re.sub(r"<[^>]*skill[^>]*path>|<path-to-skill>", f"/skills/{skill}", text)
    text = re.sub(r"<[^>]*>", "x", text)
    return text.split(" — ")[0].strip()


def main() -> None:
    corpus = Path(sys.argv[1])
    rows = list(csv.DictReader((corpus / "MANIFEST.tsv").open(), delimiter="\t"))
    data = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp())
    counts = {"ran": 0, "exit 0": 0, "no command": 0}
    for row in rows:
        root = corpus / row["corpus_path"]
        skill = Skill(root.name, "", root, root / "SKILL.md", root.parent, {"name": root.name})
        registry = Registry(skills={root.name: skill}, directories=())
        values: dict[str, Any] = {"storage_path": f"{data}/chats.db", "run_allow": True}
        values |= {"run_allow_install": True, "skill_packages": PACKAGES}
        settings = replace(Settings(), **values)

        def approve(request: RunRequest) -> Verdict:
            return Verdict("approved")

        runner = command_runner(settings, None, Live(settings, registry), approve)
        assert runner is not None, "no sandbox here"
        command = command_of(row["skill_md_quote"], root.name)
        if command is None:
            counts["no command"] += 1
            print(f"--    {root.name:28} {row['script']:36} (no command line in SKILL.md)")
            continue
        result = json.loads(
            runner.run({"command": command, "skill_name": root.name, "timeout_s": 60}).content
        )
        text = result.get("stderr", "") + result.get("stdout", "") + result.get("error", "")
        ok = (
            result.get("error_code") in (None, "TIMEOUT")  # a timeout: it ran, and long
            and result.get("exit_code") not in (126, 127)
            and not NOT_RUN.search(text)
        )
        counts["ran"] += ok
        counts["exit 0"] += ok and result.get("exit_code") == 0
        why = "" if ok else (text.strip().splitlines() or ["?"])[-1][:90]
        mark = "ran " if ok else "no  "
        print(f"{mark}  {root.name:28} {row['script']:36} $ {command[:60]}  {why}")
    named = len(rows) - counts["no command"]
    print(
        f"{counts['ran']} of {named} command lines started a script "
        f"({counts['exit 0']} exited 0); {counts['no command']} of {len(rows)} scripts "
        "have no command line in their SKILL.md"
    )


if __name__ == "__main__":
    main()
