"""A real skill (a copy, marked `context: fork`) run as a fork on the real model
chosen for it in `[skill_models]`, while the chat itself is on the scripted server:
the fork's requests go to llama.cpp, only its answer reaches the parent."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from fork_helpers import digest_skills
from helpers import session_options, skillchat
from openai_server import ScriptedServer, reply
from real_model import RealModel

SKILL = "what-context-needed"


def test_a_real_skill_forks_onto_the_real_model(
    real_model: RealModel, server: ScriptedServer, shared: Path, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    copy = skills / SKILL
    shutil.copytree(shared / "real-skills" / "github-awesome-copilot" / SKILL, copy)
    text = (copy / "SKILL.md").read_text()
    (copy / "SKILL.md").write_text(
        text.replace(f"name: {SKILL}\n", f"name: {SKILL}\ncontext: fork\n", 1)
    )
    config = tmp_path / "config.toml"
    # The fork's answer needs only to be there: each token costs the server a pass.
    config.write_text(
        f'[models.local]\nmodel = "{real_model.model}"\napi_base = "{real_model.base_url}"\n'
        f'backend = "openai"\nmax_tokens = 8\n\n[skill_models]\n{SKILL} = "local"\n'
    )
    server.script(reply("relayed the fork's answer"))
    done = skillchat("ask", "--config", str(config), *session_options(server, skills), "--json",
                     f"/{SKILL} where is the login handled?", timeout=300,
                     stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [run] = report["forks"]
    assert run["model"] == real_model.model and run["outcome"] == "answered"
    assert run["requests"] == 1 and run["tokens"] > 0
    assert set(report["usage_by_model"]) == {"openai/test-model", real_model.model}
    # The scripted server saw only the parent: one request, with the fork's answer in it.
    [parent] = server.completions
    result = json.loads(parent.body["messages"][-1]["content"])
    assert result["forked"] is True and result["answer"].strip()
    assert "Files I Need" not in json.dumps(
        parent.body["messages"][1:]
    )  # the body stayed in the fork


def test_a_skill_forks_onto_a_local_gguf_named_in_the_config(
    smollm2: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    """`[models.tiny] gguf = FILE` and `[skill_models] digest = "tiny"`: the fork runs
    on the embedded llama.cpp while the chat stays on its server."""
    skills = digest_skills(tmp_path / "skills", "note one\n")
    config = tmp_path / "config.toml"
    config.write_text(
        "max_tokens = 16\n[local]\ncontext_max = 2048\n[run]\nenabled = false\n"
        f'[models.tiny]\ngguf = "{smollm2}"\n\n[skill_models]\ndigest = "tiny"\n'
    )
    server.script(reply("relayed the fork's answer"))
    done = skillchat("ask", "--config", str(config), *session_options(server, skills), "--json",
                     "/digest count the notes", timeout=300, subprocess=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["forks"]
    assert run["model"] == smollm2.stem and run["requests"] >= 1 and run["tokens"] > 0
    [parent] = server.completions  # the scripted server saw only the parent
    assert parent.body["model"] == "test-model"
    result = json.loads(parent.body["messages"][-1]["content"])
    assert result["forked"] is True and result["skill_name"] == "digest"
