"""A server reached with --api-base is fitted to the window its /props reports, as a
local model (--gguf) is: the catalog shrinks to a share of it and a `max_tokens` is
sent. `config init` writes defaults commented out, so they never count as the user's
own choice and the fitting still happens after it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import skillchat
from openai_server import ScriptedServer, error, reply

PROPS_4K = {"default_generation_settings": {"n_ctx": 4096}}
WORDS = "checks and reports on a long list of things a user may want from it " * 4


@pytest.fixture
def many_skills(isolated_env: Path) -> Path:
    """40 skills whose descriptions alone take ~11,000 characters of catalog."""
    root = isolated_env / "many"
    for i in range(40):
        name = f"skill-{chr(97 + i // 26)}{chr(97 + i % 26)}"
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {name} {WORDS.strip()}\n---\n# Body\n"
        )
    return root


def ask(server: ScriptedServer, skills: Path, *extra: str) -> dict:
    server.script(reply("fine"))
    done = skillchat(
        "ask", "--api-base", server.base_url, "--model", "m", "--skills-dir", str(skills),
        *extra, "hi",
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "fine", done.stderr
    body: dict = server.completions[-1].body
    return body


def system_chars(body: dict) -> int:
    return sum(len(m["content"]) for m in body["messages"] if m["role"] == "system")


def test_a_server_whose_props_gives_its_window_is_fitted_like_a_local_model(
    server: ScriptedServer, many_skills: Path
) -> None:
    unfitted = ask(server, many_skills)
    assert "max_tokens" not in unfitted  # no /props: nothing known, nothing sent
    server.props = PROPS_4K
    fitted = ask(server, many_skills)
    assert fitted["max_tokens"] == 1024  # a quarter of the window for the reply
    # The catalog fits a quarter of what the reply leaves: (4096 - 1024) * 3 / 4 chars.
    assert system_chars(fitted) < system_chars(unfitted) - 6000
    assert [r.path for r in server.requests].count("/props") == 2


def test_what_the_user_set_wins_over_the_servers_window(
    server: ScriptedServer, many_skills: Path
) -> None:
    server.props = PROPS_4K
    body = ask(server, many_skills, "--max-tokens", "77")
    assert body["max_tokens"] == 77


def test_config_init_leaves_the_catalog_to_be_fitted(
    server: ScriptedServer, many_skills: Path
) -> None:
    assert skillchat("config", "init").returncode == 0
    show = skillchat("config", "show")
    assert show.returncode == 0 and "catalog_max_chars" in show.stdout
    server.props = PROPS_4K
    body = ask(server, many_skills)
    assert body["max_tokens"] == 1024
    assert system_chars(body) < 9000


def test_a_too_long_request_says_when_the_catalog_is_most_of_it(
    server: ScriptedServer, many_skills: Path, tmp_path: Path
) -> None:
    refused = "request (8411 tokens) exceeds the available context size (8192 tokens)"
    server.script(error(400, refused))
    argv = ["ask", "--api-base", server.base_url, "--model", "m", "--skills-dir"]
    done = skillchat(*argv, str(many_skills), "hi")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert refused in done.stderr and "the skills catalog is" in done.stderr
    assert "catalog_max_chars" in done.stderr
    (tmp_path / "none").mkdir()
    server.script(error(400, refused))
    done = skillchat(*argv, str(tmp_path / "none"), "hi")  # no catalog: no such hint
    assert done.returncode == 1 and refused in done.stderr
    assert "the skills catalog" not in done.stderr
