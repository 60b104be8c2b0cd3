"""Real skills with the real package index and npm registry: slack-gif-creator builds
a GIF into the scratch folder, mcp-builder's `connections.py` imports `mcp`,
skill-creator's `quick_validate.py` validates a skill with PyYAML from the config's
[packages] (and mcp-builder's requirements narrowed there to what its script works
with), md-to-docx converts Markdown to a .docx with `docx` and `marked` from npm.

Opt-in, like the real model: `REAL_INDEX_DIR` names a folder that keeps the chats
database and the environments (with uv's cache) between runs, so a second run
installs nothing. Without it the tests are skipped, with the reason."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import NO_SHARED, REAL_SKILLS_SCRIPTS, skillchat
from openai_server import ScriptedServer, call, reply
from sandbox_helpers import require_sandbox

ANTHROPIC = REAL_SKILLS_SCRIPTS / "anthropics-skills" / "skills"
COPILOT = REAL_SKILLS_SCRIPTS / "github-awesome-copilot" / "skills"
GIF = (
    'cd /skills/slack-gif-creator && python -c "from core.gif_builder import GIFBuilder; '
    "from PIL import Image; b = GIFBuilder(64, 64, 10); "
    "[b.add_frame(Image.new('RGB', (64, 64), (i * 40, 0, 0))) for i in range(5)]; "
    "b.save('/scratch/out.gif')\" && python -c \"print(open('/scratch/out.gif', 'rb').read(6))\""
)


@pytest.fixture
def cached(tmp_path: Path) -> Path:
    """A config keeping chats and environments in `REAL_INDEX_DIR`."""
    require_sandbox()
    folder = os.environ.get("REAL_INDEX_DIR")
    if not folder:
        pytest.skip("REAL_INDEX_DIR is not set: the real package index is not used")
    if not ANTHROPIC.is_dir():
        pytest.skip(NO_SHARED)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[storage]\npath = "{folder}/chats.db"\n\n[run]\nallow = true\nallow_install = true\n\n'
        # mcp-builder's `mcp>=1.1.0` resolves to mcp 2, whose API its script predates.
        '[packages]\nskill-creator = ["pyyaml"]\nmcp-builder = ["mcp<2"]\n'
    )
    return config


def run(
    server: ScriptedServer, config: Path, skill: str, command: str, skills: Path = ANTHROPIC
) -> dict[str, Any]:
    server.script(
        reply("", calls=[call("run_command", {"command": command, "skill_name": skill})]),
        reply("done"),
    )
    argv = ["ask", "--json", "--model", "openai/test-model", "--api-base", server.base_url]
    argv += ["--skills-dir", str(skills), "--config", str(config), "go"]
    done = skillchat(*argv, timeout=900)
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)["tool_calls"]
    return json.loads(calls[0]["result"])


def test_slack_gif_creator_builds_a_gif(server: ScriptedServer, cached: Path) -> None:
    result = run(server, cached, "slack-gif-creator", GIF)
    assert result["stdout"].splitlines()[-1] == "b'GIF89a'", result
    assert "/scratch/out.gif" in result["files_written"]


def test_mcp_builder_connections_imports_mcp(server: ScriptedServer, cached: Path) -> None:
    command = "cd /skills/mcp-builder/scripts && python -c 'import connections; print(\"ok\")'"
    result = run(server, cached, "mcp-builder", command)
    assert result["stdout"] == "ok\n", result


def test_skill_creator_validates_with_pyyaml_from_the_config(
    server: ScriptedServer, cached: Path
) -> None:
    command = "python /skills/skill-creator/scripts/quick_validate.py /skills/skill-creator"
    result = run(server, cached, "skill-creator", command)
    assert result["exit_code"] == 0, result
    assert "valid" in result["stdout"].lower()


def test_md_to_docx_converts_markdown_with_its_npm_packages(
    server: ScriptedServer, cached: Path
) -> None:
    """The SKILL.md's own line, relative to the folder holding the skill: the docx
    and marked packages from its scripts/package.json, installed with npm."""
    command = (
        "printf '# Title\\n\\nSome **bold** text.\\n' > in.md && "
        "node skills/md-to-docx/scripts/md-to-docx.mjs in.md out.docx && "
        "python3 -c \"import zipfile; print('word/document.xml' in "
        "zipfile.ZipFile('out.docx').namelist())\""
    )
    result = run(server, cached, "md-to-docx", command, skills=COPILOT)
    assert result.get("exit_code") == 0, result
    assert result["stdout"].splitlines()[-1] == "True"
    assert "/scratch/out.docx" in result["files_written"]


def test_the_consent_card_resolution_has_versions_and_download_sizes(
    cached: Path, tmp_path: Path
) -> None:
    from skillchat.sandbox.detect import probe
    from skillchat.sandbox.envs.install import InstallLimits
    from skillchat.sandbox.envs.resolve import resolve_python
    from skillchat.sandbox.envs.store import EnvStore

    tools = probe().tools
    assert tools is not None
    store = EnvStore(Path(os.environ["REAL_INDEX_DIR"]) / "resolve")
    resolution = resolve_python(store, ("pyyaml",), tools, InstallLimits())
    ((package),) = resolution.packages
    assert package.name == "pyyaml" and package.version[0].isdigit()
    assert package.size is not None and package.size > 10_000
    assert resolution.download() == package.size
