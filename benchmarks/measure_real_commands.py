"""How many of the real skills' scripts run when a model copies the command line its
SKILL.md shows, verbatim, through run_command (commands allowed, installs allowed,
the packages the README of the corpus names declared in the config's [packages],
the network off for the run). Run it with this checkout and with an older one on
PYTHONPATH to compare.

"Runs" means the script started: no exit 126/127, no missing module, no missing
script file, no refusal. It may still fail on its placeholder arguments.

    python benchmarks/measure_real_commands.py CORPUS_FOLDER
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
from dataclasses import fields, replace
from pathlib import Path

from skillchat.config import Settings
from skillchat.sandbox.command_tool import Verdict
from skillchat.sandbox.setup import command_runner
from skillchat.skills.model import Skill
from skillchat.skills.registry import Registry

PACKAGES = {
    "skill-creator": ("pyyaml",),
    "mcp-builder": ("anthropic", "mcp<2"),
    "slack-gif-creator": ("pillow", "imageio", "numpy"),
}
NOT_RUN = (
    "ModuleNotFoundError",
    "can't open file",
    "No such file or directory",
    "command not found",
    ": not found",
    "Permission denied",
)


def main() -> None:
    corpus = Path(sys.argv[1])
    rows = list(csv.DictReader((corpus / "MANIFEST.tsv").open(), delimiter="\t"))
    skills = {}
    for row in rows:
        root = corpus / row["corpus_path"]
        name = root.name
        skills[name] = Skill(name, "", root, root / "SKILL.md", root.parent, {"name": name})
    registry = Registry(skills=skills, directories=())
    with tempfile.TemporaryDirectory() as tmp:
        values = {"storage_path": f"{tmp}/chats.db", "run_allow": True}
        names = {f.name for f in fields(Settings)}
        if "run_allow_install" in names:
            values |= {"run_allow_install": True, "skill_packages": PACKAGES}
        settings = replace(Settings(), **values)
        runner = command_runner(
            settings, registry, None, lambda: None, lambda r: Verdict("approved")
        )
        assert runner is not None, "no sandbox here"
        ran = 0
        for row in rows:
            name = Path(row["corpus_path"]).name
            command = row["skill_md_quote"].strip().strip("`")
            result = json.loads(
                runner.run({"command": command, "skill_name": name, "timeout_s": 60}).content
            )
            text = result.get("stderr", "") + result.get("stdout", "") + result.get("error", "")
            ok = (
                "error_code" not in result
                and result.get("exit_code") not in (126, 127)
                and not any(s in text for s in NOT_RUN)
            )
            ran += ok
            why = "" if ok else (text.strip().splitlines() or ["?"])[-1][:100]
            print(f"{'ran ' if ok else 'no  '} {name:28} {row['script']:40} {why}")
        print(f"{ran} of {len(rows)} scripts started")


if __name__ == "__main__":
    main()
