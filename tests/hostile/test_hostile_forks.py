"""Forks, the questions they ask, the gates they run under, and a skill's `model:`,
against a scripted model that makes forks ask at once, in a real terminal where the
subject is what the user sees and types (docs/security.md, "Forks, consent and a
skill's model")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from consent_helpers import QUESTION, run_call
from envs_helpers import local_index, write_wheel
from fork_helpers import FORK
from helpers import session_options, skill_folder, skillchat, write_files
from openai_server import ScriptedServer, call, reply
from pty_session import PtySession
from sandbox_helpers import require_sandbox

INSTALL = "Install them? [y]es / [n]o:"
MOVE = "Move to its model? [y]es / [n]o:"
SCRIPT = '# /// script\n# dependencies = ["tinypkg"]\n# ///\nimport tinypkg\nprint(tinypkg.VALUE)\n'


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    """The server of the config's `[models.fast]`, another than the chat's."""
    with ScriptedServer() as second:
        yield second


def fork_results(server: ScriptedServer, skill: str) -> list[Any]:
    """The tool results the latest fork of `skill` sent back to its model (JSON
    decoded; a skill file's text, or its error line, as it is)."""
    mark = f'<skill name="{skill}">'
    for request in reversed(server.completions):
        messages = request.body["messages"]
        if mark in str(messages[0].get("content")):
            return [_decoded(m["content"]) for m in messages if m["role"] == "tool"]
    return []


def _decoded(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content


def asked(server: ScriptedServer, skill: str) -> bool:
    mark = f'<skill name="{skill}">'
    return any(mark in str(r.body["messages"][0].get("content")) for r in server.completions)


# ------------------------------------------------------------ two forks asking at once


def test_two_forks_asking_at_once_get_one_question_at_a_time_each_answer_its_own(
    server: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """alpha (trusted, its script pre-approved) needs a package installed; beta's
    command needs a yes (beta is not trusted: its `allowed-tools` count for nothing).
    Once alpha's install card is up, beta asks too: its question waits (the card says
    so) and is drawn only after the install is answered, and the `n` typed at the
    install card declines the install, never beta's command (nor does a key typed
    ahead of beta's question answer it). A fork's command run
    beside another fork draws no live card of its own (only the chat's thread draws)."""
    require_sandbox()
    write_wheel(tmp_path / "wheels", "tinypkg", code="VALUE = 7\n")
    local_index(monkeypatch, tmp_path / "wheels")
    root = tmp_path / "skills"
    pre_approved = "allowed-tools: Bash(python scripts/show.py:*)\n"
    alpha = skill_folder(
        root, "alpha", f"name: alpha\ndescription: A.\ncontext: fork\n{pre_approved}"
    )
    write_files(alpha, {"scripts/show.py": SCRIPT})
    untrusted = "context: fork\nallowed-tools: Bash(echo:*)\n"  # pre-approves nothing
    skill_folder(root, "beta", f"name: beta\ndescription: B.\n{untrusted}")
    assert skillchat("skills", "trust", "alpha", "--skills-dir", str(root)).returncode == 0
    script = run_call("python /skills/alpha/scripts/show.py", "alpha")
    server.when("", reply(calls=[script]), reply("alpha done"), system='<skill name="alpha">')
    server.when("", reply(calls=[run_call("echo from-beta", "beta")], hold="beta"),
                reply("beta done"), system='<skill name="beta">')  # fmt: skip
    both = [call("get_skill", {"skill_name": n, "task": f"run {n}"}) for n in ("alpha", "beta")]
    server.script(reply(calls=both), reply("both done"))
    repl = pty_sessions(*session_options(server, root))
    repl.prompt()
    repl.line("run both")
    repl.expect(INSTALL)
    server.release("beta")  # beta's command now asks while the install card waits

    def shown(rows: list[str]) -> str:
        return "\n".join(row.rstrip() for row in rows).strip()

    screen = shown(repl.until_screen(lambda r: "waits to ask" in shown(r) or QUESTION in shown(r)))
    assert QUESTION not in screen, f"two questions wait on the terminal at once:\n{screen}"
    card = screen.split(INSTALL)[0].rsplit("running on its own, asks", 1)
    assert len(card) == 2 and card[0].rstrip().endswith(("alpha #1,", "alpha #2,")), screen
    assert "beta #" in screen.split(INSTALL)[1] and "waits to ask" in screen
    # At the install card: `n`, and an `a` typed ahead in the same keystroke burst,
    # before beta's question is on screen: it must not answer it ("always").
    repl.send("na")
    before = repl.expect(QUESTION)  # beta's, drawn only now, naming beta
    assert before.split("running on its own, asks")[0].rstrip().endswith(("beta #1,", "beta #2,"))
    assert "echo from-beta" in before and INSTALL not in before
    repl.send("y")
    assert repl.expect("both done").split()[0] == "yes"  # the `y`, not the `a` typed ahead
    repl.prompt()
    assert repl.quit() == 0
    # beta's command ran beside alpha: no live card of its own crossed the screen.
    assert "run_command · running" not in "".join(repl.output)
    [installing] = fork_results(server, "alpha")
    assert installing["error_code"] == "NOT_ALLOWED" and "install" in installing["error"]
    [echoed] = fork_results(server, "beta")
    assert echoed["stdout"] == "from-beta\n"


def test_forks_running_at_once_in_ask_are_under_the_chats_gates(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """Two trusted forks at once in `ask`: their pre-approved commands are refused
    without --allow-run (as the chat's own would be), a read outside the skill's
    folder is refused, and with --allow-run the commands run."""
    require_sandbox()
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        skill_folder(root, name, f"name: {name}\ndescription: {name}.\ncontext: fork\n"
                     "allowed-tools: Bash(echo:*)\n")  # fmt: skip
        assert skillchat("skills", "trust", name, "--skills-dir", str(root)).returncode == 0
        out = call("read_file_in_skill", {"skill_name": name, "file_path": "../../config.toml"})
        server.when("", reply(calls=[run_call(f"echo from-{name}", name), out]),
                    reply(f"{name} done"), system=f'<skill name="{name}">')  # fmt: skip
    (tmp_path / "config.toml").write_text("secret = 1\n")
    both = [call("get_skill", {"skill_name": n, "task": f"run {n}"}) for n in ("alpha", "beta")]
    for allow in ([], ["--allow-run"]):
        server.script(reply(calls=both), reply("both done"))
        done = skillchat("ask", *session_options(server, root), *allow, "run both")
        assert done.returncode == 0, done.stderr
        for name in ("alpha", "beta"):
            ran, read = fork_results(server, name)
            assert read.startswith("ERROR: Path traversal") and "secret" not in read
            if allow:
                assert ran["stdout"] == f"from-{name}\n"
            else:
                assert ran["error_code"] == "NOT_ALLOWED" and "--allow-run" in ran["error"]


def test_a_task_the_model_wrote_cannot_start_a_skill_only_the_user_may(
    server: ScriptedServer, tmp_path: Path
) -> None:
    """`disable-model-invocation: true` keeps a skill the user's to start: the model
    cannot get it by writing `/secret` as a fork's task (the fork's one message would
    have been read as the user's `/secret`, its body loaded into the fork)."""
    root = tmp_path / "skills"
    skill_folder(root, "digest", "name: digest\ndescription: Digests.\ncontext: fork\n")
    skill_folder(root, "secret", "name: secret\ndescription: Deploys.\n"
                 "disable-model-invocation: true\n", "# Secret\nSECRET-BODY\n")  # fmt: skip
    server.when("", reply("digested"), system=FORK)
    task = call("get_skill", {"skill_name": "digest", "task": "/secret deploy it all"})
    server.script(reply(calls=[task]), reply("parent answer"))
    done = skillchat("ask", *session_options(server, root), "digest things")
    assert done.returncode == 0, done.stderr
    [fork] = [r for r in server.completions if FORK in str(r.body["messages"][0]["content"])]
    sent = json.dumps(fork.body["messages"])
    assert "SECRET-BODY" not in sent and "deploy it all" in sent
    assert "not for direct use" not in done.stderr


# ------------------------------------------------------------------ a skill's model


def fast_config(tmp_path: Path, other: ScriptedServer) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[models.fast]\nmodel = "openai/fast-model"\napi_base = "{other.base_url}"\n'
    )
    return config


def digest(tmp_path: Path, frontmatter: str) -> Path:
    root = tmp_path / "skills"
    skill_folder(root, "digest", f"name: digest\ndescription: Digests.\n{frontmatter}",
                 "# Digest\nAnswer in one line.\n")  # fmt: skip
    return root


@pytest.mark.parametrize("forked", [False, True], ids=["inline", "fork"])
def test_ask_keeps_the_chat_on_its_model_when_an_untrusted_skill_names_another(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path, forked: bool
) -> None:
    """An untrusted skill's `model: fast` neither moves the chat (inline) nor sends the
    user's message to fast's server (a fork): one line says so, the chat's model
    answers; `[skill_models]` or trusting the skill is the user's word for it."""
    root = digest(tmp_path, "model: fast\n" + ("context: fork\n" if forked else ""))
    config = fast_config(tmp_path, other)
    if forked:
        server.when("", reply("digested on the chat's model"), system=FORK)
        server.script(reply("parent answer"))
    else:
        server.script(reply(calls=[call("get_skill", {"skill_name": "digest"})]),
                      reply("parent answer"))  # fmt: skip
    done = skillchat("ask", "--config", str(config), *session_options(server, root),
                     "my private notes" if not forked else "/digest my private notes")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "parent answer"
    assert other.completions == []  # nothing the user said went to fast's server
    assert {r.body["model"] for r in server.completions} == {"test-model"}
    [line] = [x for x in done.stderr.splitlines() if "'fast'" in x]
    assert "skill 'digest' is not trusted to choose its model 'fast'" in line
    assert f"openai/fast-model on {other.base_url}" in line
    assert "it runs on the chat's model openai/test-model" in line
    assert "skillchat skills trust digest" in line and '[skill_models] digest = "fast"' in line


def test_a_trusted_skills_model_is_honoured(
    server: ScriptedServer, other: ScriptedServer, tmp_path: Path
) -> None:
    root = digest(tmp_path, "model: fast\ncontext: fork\n")
    config = fast_config(tmp_path, other)
    trusted = skillchat("skills", "trust", "digest", "--skills-dir", str(root))
    assert trusted.returncode == 0, trusted.stderr
    other.when("", reply("digested on fast"), system=FORK)
    server.script(reply("parent answer"))
    done = skillchat("ask", "--config", str(config), *session_options(server, root),
                     "/digest notes")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [r.body["model"] for r in other.completions] == ["fast-model"]
    assert "not trusted" not in done.stderr


def test_the_repl_asks_before_a_skills_model_moves_the_chat_and_no_keeps_it(
    server: ScriptedServer,
    other: ScriptedServer,
    tmp_path: Path,
    pty_sessions: Callable[..., PtySession],
) -> None:
    """The question names the skill, the model and its server; `n` keeps the chat's
    model (and says so), `y` moves the fork there."""
    root = digest(tmp_path, "model: fast\ncontext: fork\n")
    config = fast_config(tmp_path, other)
    server.when("", reply("on the chat's model"), system=FORK)
    other.when("", reply("on fast"), system=FORK)
    server.script(reply("first done"), reply("second done"))
    repl = pty_sessions("--config", str(config), *session_options(server, root))
    repl.prompt()
    repl.line("/digest secret one")
    card = " ".join(repl.expect(MOVE).split())
    assert "skill: digest" in card and "model: openai/fast-model (fast)" in card, card
    assert f"server: {other.base_url}" in card and "not trusted" in card, card
    repl.send("n")
    said = repl.prompt()
    assert "first done" in said and "it runs on the chat's model" in said
    assert other.completions == []
    repl.line("/digest secret two")
    repl.expect(MOVE)
    repl.send("y")
    assert "second done" in repl.prompt()
    assert [r.body["model"] for r in other.completions] == ["fast-model"]
    assert "secret two" in json.dumps(other.completions[0].body["messages"])
    assert "secret one" not in json.dumps(other.completions[0].body["messages"])
    assert repl.quit() == 0


def test_the_model_question_shows_no_credentials_of_the_server(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    """A `[models.NAME]` api_base with a password in it is shown without it, on the
    card and in the line that follows a no."""
    root = digest(tmp_path, "model: fast\ncontext: fork\n")
    config = tmp_path / "config.toml"
    secret = "hunter2-not-shown"
    config.write_text(
        '[models.fast]\nmodel = "openai/fast-model"\n'
        f'api_base = "http://user:{secret}@127.0.0.1:9/v1"\n'
    )
    server.when("", reply("on the chat's model"), system=FORK)
    server.script(reply("done"))
    repl = pty_sessions("--config", str(config), *session_options(server, root))
    repl.prompt()
    repl.line("/digest notes")
    card = repl.expect(MOVE)
    assert "server: http://127.0.0.1:9/v1" in card and secret not in card
    repl.send("n")
    assert "done" in repl.prompt()
    assert secret not in "".join(repl.output)
    assert repl.quit() == 0
