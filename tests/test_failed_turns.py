"""A failed turn does not pile up: the unanswered message is not sent again with the
next ones, `/retry` sends it on purpose, and a chat whose only turn failed is marked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chat_helpers import sent
from helpers import BOTH_PROTOCOLS, model_for, session_options, skillchat
from openai_server import ScriptedServer, error, reply
from pty_session import PtySession

# A failed turn is the loop's, whatever the protocol (tests/conftest.py).
pytestmark = BOTH_PROTOCOLS


def ask(server: ScriptedServer, tmp_path: Path, *args: str):
    config = tmp_path / "config.toml"
    config.write_text("max_retries = 0\n")
    empty = tmp_path / "no-skills"
    empty.mkdir(exist_ok=True)
    return skillchat("ask", "--model", model_for(server), "--api-base", server.base_url,
                     "--config", str(config), "--skills-dir", str(empty), *args)  # fmt: skip


def test_the_unanswered_message_is_not_sent_again(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(error(500, "boom"), error(500, "boom again"), reply("answered"))
    assert ask(server, tmp_path, "first question").returncode == 1
    listing = skillchat("chats", "list")  # one message: the table marks it "(no answer)"
    assert listing.stdout.split("\t")[3:] == ["1", "first question\n"]
    assert ask(server, tmp_path, "-c", "second question").returncode == 1
    table = PtySession("chats", "list")  # two messages, still no reply: still marked
    try:
        table.wait()
    finally:
        table.close()
    assert "(no answer) first question" in "".join(table.output)
    assert ask(server, tmp_path, "-c", "third question").returncode == 0
    users = [m["content"] for m in sent(server) if m["role"] == "user"]
    assert users == ["third question"]  # not three questions in a row
    chat_id = listing.stdout.split("\t")[0]
    shown = skillchat("chats", "show", chat_id, "--json")
    assert shown.returncode == 0, shown.stderr
    assert "first question" in shown.stdout and "second question" in shown.stdout  # kept


def test_retry_sends_the_last_message_again(
    server: ScriptedServer, tmp_path: Path, pty_sessions: Callable[..., PtySession]
) -> None:
    (tmp_path / "no-skills").mkdir()
    server.script(error(500, "boom"), reply("second try worked"), reply("another answer"))
    config = tmp_path / "config.toml"
    config.write_text("max_retries = 0\n")
    session = pty_sessions(
        *session_options(server, tmp_path / "no-skills"), "--config", str(config)
    )
    session.prompt()
    assert "error" in session.run("what is up")
    assert "second try worked" in session.run("/retry")
    assert [m["content"] for m in sent(server) if m["role"] == "user"] == ["what is up"]
    assert "another answer" in session.run("/retry")
    roles = [m["role"] for m in sent(server)]
    assert roles[-3:] == ["user", "assistant", "user"]  # the first answer stays, asked again
    assert session.quit() == 0
