"""Which model a skill's turns go to: its `model:`, or the config's `[skill_models]`;
two scripted servers stand for two named models and every request is checked to
have gone to the right one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_helpers import RecordingView, make_chat
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply

from skillchat.config import load_settings
from skillchat.engine import resolve
from skillchat.skills.registry import discover

FORK = '<skill name="digest">'


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    """The second named model's server."""
    with ScriptedServer() as second:
        yield second


def skills(tmp_path: Path, frontmatter: str) -> Path:
    """A skills folder with `digest`, trusted: its own `model:` is honoured
    (an untrusted skill's needs the user's yes: tests/hostile/test_hostile_forks.py)."""
    root = tmp_path / "skills"
    skill_folder(
        root,
        "digest",
        f"name: digest\ndescription: Digests things.\n{frontmatter}",
        "# Digest\nAnswer in one line.\n",
    )
    trusted = skillchat("skills", "trust", "digest", "--skills-dir", str(root))
    assert trusted.returncode == 0, trusted.stderr
    return root


def named(server: ScriptedServer) -> dict[str, dict[str, str]]:
    return {"fast": {"model": "openai/fast-model", "api_base": server.base_url}}


def test_a_fork_runs_on_its_named_model_on_its_own_server(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path, "context: fork\nmodel: fast\n")
    other.when("", reply("from the fast model"), system=FORK)
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "digest", "task": "digest it"})]),
        reply("done"),
    )
    reg = discover([root])
    chat = make_chat(server, reg, named_models=named(other))
    assert chat.send("go").answer == "done"
    assert [r.body["model"] for r in other.completions] == ["fast-model"]
    assert FORK in other.completions[0].body["messages"][0]["content"]
    assert [r.body["model"] for r in server.completions] == ["test-model", "test-model"]
    assert not any(FORK in json.dumps(r.body["messages"][:1]) for r in server.completions)
    answer = json.loads(server.completions[-1].body["messages"][-1]["content"])
    assert answer["model"] == "openai/fast-model"
    assert chat.settings.model.name == "openai/test-model"  # the parent stays on its model


def test_the_config_overrides_the_skills_model_and_ask_runs_the_fork(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path, "context: fork\nmodel: haiku\n")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[models.fast]\nmodel = "openai/fast-model"\napi_base = "{other.base_url}"\n\n'
        '[skill_models]\ndigest = "fast"\n'
    )
    other.when("", reply("fork answer"), system=FORK)
    server.script(reply("parent: fork answer"))
    done = skillchat("ask", "--config", str(config), *session_options(server, root),
                     "/digest count")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "parent: fork answer"
    assert [r.body["model"] for r in other.completions] == ["fast-model"]
    assert other.completions[0].body["messages"][-1]["content"] == "count"
    assert len(server.completions) == 1 and "haiku" not in done.stderr
    assert re.search(r"· forks: [\d,]+ tokens on openai/fast-model ·", done.stderr), done.stderr


def test_a_fork_on_another_server_is_fitted_to_that_servers_window(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    """The chat's server reports 4,096 tokens, the skill model's 32,768: each request
    gets the reply share (a quarter) of its own server's window."""
    root = skills(tmp_path, "context: fork\nmodel: fast\n")
    server.props = {"default_generation_settings": {"n_ctx": 4096}}
    other.props = {"default_generation_settings": {"n_ctx": 32768}}
    config = tmp_path / "config.toml"
    config.write_text(
        f'[models.fast]\nmodel = "openai/fast-model"\napi_base = "{other.base_url}"\n'
    )
    other.when("", reply("fork answer"), system=FORK)
    server.script(reply("parent: fork answer"))
    done = skillchat("ask", "--config", str(config), *session_options(server, root),
                     "/digest count")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [r.body["max_tokens"] for r in other.completions] == [8192]
    assert [r.body["max_tokens"] for r in server.completions] == [1024]


def test_a_claude_alias_without_a_table_falls_back_with_one_line(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path, "context: fork\nmodel: sonnet\n")
    server.when("", reply("fork on the chat's model"), system=FORK)
    server.script(reply("ok"))
    view = RecordingView()
    make_chat(server, discover([root]), view).send("/digest x")
    notes = [n for n in view.of("notice") if "sonnet" in n]
    assert notes == [
        "skill 'digest' asks for model 'sonnet', a Claude Code alias with no "
        "[models.sonnet] in the config: it runs on the chat's model openai/test-model"
    ]
    assert [r.body["model"] for r in server.completions] == ["test-model", "test-model"]


def test_an_inline_skills_model_takes_the_chats_next_requests(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path, "model: fast\n")
    server.script(reply(calls=[call("get_skill", {"skill_name": "digest"})]))
    other.script(reply("answered by the skill's model"))
    view = RecordingView()
    chat = make_chat(server, discover([root]), view, named_models=named(other))
    assert chat.send("go").answer == "answered by the skill's model"
    assert len(server.completions) == 1 and len(other.completions) == 1
    assert chat.settings.model.name == "openai/fast-model"
    assert any("its model openai/fast-model" in n for n in view.of("notice"))


def test_a_skill_models_entry_must_be_a_model_name(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[skill_models]\ndigest = 3\n")
    done = skillchat("ask", "--config", str(config), "hi")
    assert (
        done.returncode != 0
        and "config.toml:2: 'skill_models.digest' must be a model name" in done.stderr
    )


def test_a_model_id_from_a_skill_needs_the_users_word(
    server: ScriptedServer, tmp_path: Path
) -> None:
    root = skills(tmp_path, "context: fork\nmodel: gpt-pricey\n")
    server.when("", reply("fork"), system=FORK)
    server.script(reply("ok"), reply("ok"))
    view = RecordingView()
    make_chat(server, discover([root]), view).send("/digest x")
    assert [n for n in view.of("notice") if "gpt-pricey" in n] == [
        "skill 'digest' asks for model 'gpt-pricey', which the config does not name: it runs "
        'on the chat\'s model openai/test-model ([skill_models] digest = "gpt-pricey" allows it)'
    ]
    allowed = make_chat(server, discover([root]), skill_models={"digest": "openai/gpt-pricey"})
    allowed.send("/digest y")
    assert [r.body["model"] for r in server.completions] == [
        "test-model", "test-model", "gpt-pricey", "test-model"
    ]  # fmt: skip


def test_a_local_file_that_cannot_start_falls_back_with_one_line(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`[models.mine] gguf = FILE` with no such file: the fork runs on the chat's model."""
    root = skills(tmp_path, "context: fork\nmodel: mine\n")
    server.when("", reply("fork on the chat's model"), system=FORK)
    server.script(reply("ok"))
    view = RecordingView()
    missing = tmp_path / "missing.gguf"
    chat = make_chat(server, discover([root]), view, named_models={"mine": {"gguf": str(missing)}})
    chat.send("/digest x")
    [note] = [n for n in view.of("notice") if "local model" in n]
    assert note.startswith(f"skill 'digest' asks for the local model {missing}, which cannot start")
    assert note.endswith("it runs on the chat's model openai/test-model")
    assert [r.body["model"] for r in server.completions] == ["test-model", "test-model"]


def test_a_named_server_model_does_not_keep_the_chats_local_file(tmp_path: Path) -> None:
    """A chat on a local file (`gguf`) whose skill names a server model: that model's
    table says where it runs, the chat's file is not it."""
    config = tmp_path / "config.toml"
    config.write_text(
        'gguf = "/models/chat.gguf"\n[models.fast]\nmodel = "openai/fast"\n'
        'api_base = "http://127.0.0.1:9/v1"\n[models.tiny]\ngguf = "/models/tiny.gguf"\n'
    )
    settings = load_settings(config)
    assert resolve.named(settings, "fast", resolve.asked(settings)).gguf is None
    tiny = resolve.named(settings, "tiny", resolve.asked(settings))
    assert tiny.gguf == "/models/tiny.gguf" and tiny.model == "tiny"
