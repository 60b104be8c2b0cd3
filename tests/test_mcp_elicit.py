"""A server's question to the user (`elicitation/create`), through the real `skillchat`:
tests/mcp_servers.py's `asks` server, whose `form` tool asks one of its `FORMS` and
returns the answer as its result, over streamable HTTP (one server for the module)
and stdio. `ask` declines unless `--allow-elicit`, then answers from the schema's
defaults only; the REPL shows a card and reads the fields."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from chat_helpers import tool_messages
from helpers import session_options
from openai_server import ScriptedServer, call, reply
from test_mcp import ask, http, shared_server, stdio

from skillchat.errors import McpError
from skillchat.mcp.elicit import checked, from_defaults, read_form

if TYPE_CHECKING:
    from pty_session import PtySession


@pytest.fixture(scope="module")
def asks_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from shared_server("asks", tmp_path_factory)


def answered(server: ScriptedServer) -> Any:
    """What the `form` tool returned: the client's answer, as the server got it."""
    got = json.loads(tool_messages(server)[-1]["content"])
    assert "content" in got, got
    return json.loads(got["content"])


def form_call(schema: str) -> dict[str, Any]:
    return call("mcp__srv__form", {"schema": schema})


def test_ask_declines_unless_allow_elicit_then_answers_from_defaults_only(
    server: ScriptedServer, tmp_path: Path, asks_url: str
) -> None:
    config = http("srv", asks_url)
    server.script(reply(calls=[form_call("defaults")]), reply("went on"))
    done = ask(server, tmp_path, config, "--allow-mcp", "ask me")
    assert done.returncode == 0, done.stderr
    assert answered(server) == {"action": "decline", "content": None}
    assert "asked a question: declined (answering needs --allow-elicit)" in done.stderr
    assert "went on" in done.stdout

    server.script(reply(calls=[form_call("defaults")]), reply("went on"))
    done = ask(server, tmp_path, config, "--allow-mcp", "--allow-elicit", "ask me")
    assert answered(server) == {"action": "accept", "content": {"name": "Ada", "age": 36}}
    assert "accepted (answered with the schema's defaults)" in done.stderr

    # A required field without a default: nothing typed is read, the question declined.
    server.script(reply(calls=[form_call("good")]), reply("went on"))
    done = ask(server, tmp_path, config, "--allow-mcp", "--allow-elicit", "ask me")
    assert answered(server) == {"action": "decline", "content": None}
    assert "no default for the required age" in done.stderr and "went on" in done.stdout


def test_over_stdio_too(server: ScriptedServer, tmp_path: Path) -> None:
    server.script(reply(calls=[form_call("defaults")]), reply("went on"))
    config = stdio("srv", "asks", tmp_path)
    done = ask(server, tmp_path, config, "--allow-mcp", "--allow-elicit", "x")
    assert done.returncode == 0, done.stderr
    assert answered(server)["content"] == {"name": "Ada", "age": 36}


def test_a_form_is_read_and_checked_against_its_schema() -> None:
    from mcp_servers import FORMS
    from mcp_types import ElicitRequestFormParams

    def params(schema: dict[str, Any]) -> ElicitRequestFormParams:
        return ElicitRequestFormParams(message="m", requested_schema=schema)

    form = read_form("srv", params(FORMS["good"]))
    _, age, color, ok = form.fields
    assert (age.kind, age.required, age.default) == ("integer", True, None)
    assert checked(age, "40") == 40 and checked(ok, "no") is False
    assert checked(color, "red") == "red"
    for item, value in ((age, "4.5"), (age, "200"), (color, "blue"), (ok, "maybe")):
        with pytest.raises(McpError):
            checked(item, value)
    assert from_defaults(form).action == "decline"
    with pytest.raises(McpError, match="its field 'where' is not a string"):
        read_form("srv", params(FORMS["nested"]))
    bad_default = {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}
    with pytest.raises(McpError, match="default that does not fit"):
        read_form("srv", params(bad_default))


def test_the_repl_card_reads_each_field_until_it_fits(
    server: ScriptedServer, tmp_path: Path, asks_url: str, pty_sessions: Callable[..., PtySession]
) -> None:
    (tmp_path / "config.toml").write_text(http("srv", asks_url, "allow = true"))
    (tmp_path / "skills").mkdir()
    server.script(
        reply(calls=[form_call("good")]), reply("filled"),
        reply(calls=[form_call("good")]), reply("declined"),
    )  # fmt: skip
    repl = pty_sessions(
        *session_options(server, tmp_path / "skills"), "--config", str(tmp_path / "config.toml"),
        timeout=120,
    )  # fmt: skip
    repl.prompt()
    repl.line("one")
    card = repl.expect("[a]nswer / [d]ecline / [c]ancel:")
    assert "MCP server 'srv' asks" in card and "Who are you?" in card
    assert "age (integer, required)" in card and "one of: red, green" in card
    repl.send("a")
    repl.expect("Your name [Ada]: ")
    repl.line("")
    repl.expect("age (required): ")
    repl.line("old")
    repl.expect("must be a whole number")
    repl.expect("age (required): ")  # asked again: what is typed before is dropped
    repl.line("40")
    repl.expect("color [green]: ")
    repl.line("blue")
    repl.expect("must be one of: red, green")
    repl.expect("color [green]: ")
    repl.line("red")
    repl.expect("ok [True]: ")
    repl.line("")
    assert "filled" in repl.prompt()
    content = {"name": "Ada", "age": 40, "color": "red", "ok": True}
    assert answered(server) == {"action": "accept", "content": content}
    repl.line("two")
    repl.expect("[a]nswer / [d]ecline / [c]ancel:")
    repl.send("d")
    assert "declined" in repl.prompt()
    assert answered(server) == {"action": "decline", "content": None}
    assert repl.quit() == 0


def test_a_url_mode_question_shows_its_address_is_never_opened_and_ask_declines_it(
    server: ScriptedServer, tmp_path: Path, asks_url: str, pty_sessions: Callable[..., PtySession]
) -> None:
    """The `link` tool asks the user to open an address: the REPL's card shows it
    (cleaned, never opened) and `a` says the user opened it; `ask` declines it even
    with --allow-elicit, as there is no default to answer a URL with."""
    from mcp_servers import LINK

    config = http("srv", asks_url)
    link = call("mcp__srv__link", {})
    server.script(reply(calls=[link]), reply("went on"))
    done = ask(server, tmp_path, config, "--allow-mcp", "--allow-elicit", "link me")
    assert done.returncode == 0, done.stderr
    assert answered(server) == {
        "action": "decline",
        "content": None,
    }
    assert "MCP server 'srv' asked a question: declined" in done.stderr
    assert LINK not in done.stdout and "went on" in done.stdout

    (tmp_path / "config.toml").write_text(http("srv", asks_url, "allow = true"))
    hostile = call("mcp__srv__link", {"url": "https://x.example/\x1b]0;pwned\x07a"})
    server.script(reply(calls=[link]), reply("opened"), reply(calls=[hostile]), reply("no"))
    opened = tmp_path / "opened"  # a browser the user has: it would leave this file
    browser = {"BROWSER": f"touch {opened} %s", "DISPLAY": ":0"}
    repl = pty_sessions(
        *session_options(server, tmp_path / "skills"), "--config", str(tmp_path / "config.toml"),
        timeout=120, env=browser,
    )  # fmt: skip
    repl.prompt()
    repl.line("link me")
    card = repl.expect("Opened it? [a]ccept / [d]ecline / [c]ancel:")
    assert "MCP server 'srv' asks" in card and "Sign in to the demo service" in card
    assert "open this address yourself (skillchat does not): " + LINK in " ".join(card.split())
    repl.send("a")
    assert "opened" in repl.prompt()
    assert answered(server) == {"action": "accept", "content": None}
    repl.line("again")
    card = repl.expect("Opened it? [a]ccept / [d]ecline / [c]ancel:")
    assert "https://x.example/" in card and "\x1b]0;pwned" not in "".join(repl.output)
    repl.send("c")
    repl.prompt()
    assert answered(server)["action"] == "cancel"
    assert repl.quit() == 0
    assert not opened.exists()
