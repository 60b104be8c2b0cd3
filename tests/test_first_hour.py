"""A new user's first steps without a key and without `ask`: the one-line way
forward when no key is set (ask, the REPL before its prompt, `--local` offline or
without llama.cpp), `skillchat "QUESTION"` / `-p` as `claude` and `llm` take them,
and `config init` followed by a local model and the real skills."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from chat_helpers import sent
from helpers import REPO, closed_port, one_line_error, session_options, skill_folder, skillchat
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.sections import user_data_dir


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "notes", "name: notes\ndescription: Keeps notes.\n")
    return root


# --- no key --------------------------------------------------------------------------


def test_ask_without_a_key_names_the_keyless_way(skills: Path) -> None:
    line = one_line_error(skillchat("ask", "--skills-dir", str(skills), "hi"))
    assert "OPENAI_API_KEY is not set" in line and "--api-base" in line
    assert "--local" in line and "--gguf" in line


def test_a_provider_key_missing_names_the_keyless_way_too(skills: Path) -> None:
    done = skillchat("ask", "-m", "anthropic/claude-sonnet-4-5", "--skills-dir", str(skills), "hi")
    line = one_line_error(done)
    assert "ANTHROPIC_API_KEY is not set" in line and "--local" in line


def test_the_repl_without_a_key_stops_before_its_prompt(skills: Path, pty_sessions) -> None:
    session = pty_sessions("--skills-dir", str(skills))
    assert session.wait() == 1
    screen = "".join(session.output)
    assert "skillchat: error: OPENAI_API_KEY is not set" in screen and "--local" in screen
    assert "❯" not in screen and "(no answer)" not in screen
    done = skillchat("chats", "list")
    assert done.returncode == 0 and done.stdout.strip() == ""  # no chat was left behind


def test_local_without_llama_cpp_gives_the_install_line_of_this_install(tmp_path: Path) -> None:
    """Here, an editable pip install: that venv's pip and the pinned packages, never
    `pip install 'skillchat[local]'` (an index's package of that name). The pip and
    uv installs of a real wheel: tests/test_install.py."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    # As if the package were not installed: `import xllamacpp` fails, find_spec is None.
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['xllamacpp'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(REPO)])}
    line = one_line_error(skillchat("ask", "--local", "hi", env=env))
    assert line.endswith(
        f"(skillchat's [local] extra): {sys.executable} -m pip install "
        "'xllamacpp==2026.10.11549' 'huggingface_hub==2.4.0'"
    )
    assert "skillchat[local]" not in line


def test_local_offline_names_the_hub_and_hf_endpoint_without_an_errno() -> None:
    pytest.importorskip("xllamacpp")
    hub = f"http://127.0.0.1:{closed_port()}"
    env = {**os.environ, "HF_ENDPOINT": hub, "HF_HUB_DISABLE_TELEMETRY": "1"}
    line = one_line_error(skillchat("ask", "--local", "hi", env=env, timeout=120))
    assert f"from {hub}" in line and "cannot be reached" in line and "HF_ENDPOINT" in line
    assert "Errno" not in line and "resume" not in line  # nothing was downloaded


# --- a question without `ask` --------------------------------------------------------


@pytest.mark.parametrize("model", ["--model", "-m"])
@pytest.mark.parametrize("flag", ["-p", "--print"])
def test_print_answers_once_and_exits(
    server: ScriptedServer, skills: Path, model: str, flag: str
) -> None:
    server.script(reply("4"))
    options = session_options(server, skills)
    options[0] = model
    done = skillchat(flag, *options, "what is 2+2?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"
    assert sent(server, 0)[-1] == {"role": "user", "content": "what is 2+2?"}


def test_print_after_the_question_and_unquoted_words(server: ScriptedServer, skills: Path) -> None:
    server.script(reply("4"))
    done = skillchat("what", "is", "2+2?", "-p", *session_options(server, skills))
    assert done.returncode == 0, done.stderr
    assert sent(server, 0)[-1] == {"role": "user", "content": "what is 2+2?"}


def test_print_reads_a_pipe_when_no_question_is_given(server: ScriptedServer, skills) -> None:
    server.script(reply("ok"))
    done = skillchat("-p", *session_options(server, skills), input="piped words\n")
    assert done.returncode == 0, done.stderr
    assert "piped words" in sent(server, 0)[-1]["content"]


def test_a_question_starts_the_repl_with_it(server: ScriptedServer, skills, pty_sessions) -> None:
    server.script(reply("Four."), reply("Five."))
    session: PtySession = pty_sessions(
        "-m", "openai/test-model", *session_options(server, skills)[2:], "what is 2+2?"
    )
    screen = session.prompt()
    assert "❯ what is 2+2?" in screen and "Four." in screen
    assert "Five." in session.run("and 2+3?")
    assert session.quit() == 0
    assert sent(server, 0)[-1] == {"role": "user", "content": "what is 2+2?"}
    assert len(server.completions) == 2


def test_commands_and_their_typos_stay_commands(skills: Path) -> None:
    assert skillchat("chats", "list").returncode == 0
    typos = {("chatz",): "chats", ("aks", "hi"): "ask", ("doctr",): "doctor"}
    for typo, meant in {**typos, ("chat", "list"): "chats"}.items():
        done = skillchat(*typo)
        assert done.returncode == 2 and f"Did you mean '{meant}'" in done.stderr


def test_a_question_without_a_terminal_points_to_print(skills: Path) -> None:
    done = skillchat("-m", "openai/test-model", "--skills-dir", str(skills), "what is 2+2?")
    line = one_line_error(done, 2)
    assert "skillchat -p 'QUESTION'" in line
    assert not (user_data_dir() / "chats.db").exists() or skillchat("chats", "list").stdout == ""


# --- config init, then a local model with the real skills ---------------------------


def test_config_init_then_gguf_with_the_real_skills_fits_the_model(
    smollm2: Path, shared: Path
) -> None:
    """`config init` leaves the catalog adaptive (its keys are commented out): with
    the 236 real skills and SmolLM2's 8,192-token context the catalog is fitted to a
    quarter of the budget and the request is accepted, where the written-out
    30,000-character default sent 8,411 tokens (HTTP 400)."""
    assert skillchat("config", "init").returncode == 0
    folders = sorted({p.parent.parent for p in (shared / "real-skills").rglob("SKILL.md")})
    dirs = [arg for folder in folders for arg in ("--skills-dir", str(folder))]
    done = skillchat(
        "ask", "--gguf", str(smollm2), "--max-tokens", "8", *dirs, "Say hi", timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "catalog_max_chars = 4608" in done.stderr  # (8192 - 2048) * 3 / 4
    sent_tokens = int(done.stderr.split("tokens: ")[1].split(" in")[0].replace(",", ""))
    assert sent_tokens < 8192 - 2048  # prompt and reply fit the context
