"""The consent question in a real terminal, where what the user sees decides what
runs: every character of the command is on the card (invisible ones as markers),
and "always" covers what the card says it covers (the skill and the program), in
the current chat only.

The screen is read back with pyte, which draws what a terminal would.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from consent_helpers import QUESTION, bundled_repl, results, run_call
from helpers import wait_for
from openai_server import ScriptedServer, reply
from pty_session import PtySession

from skillchat.ui.consent import always_scope


@pytest.fixture
def repl(server: ScriptedServer, pty_sessions: Callable[..., PtySession]) -> PtySession:
    return bundled_repl(server, pty_sessions)


def test_invisible_characters_are_shown_on_the_card(
    server: ScriptedServer, repl: PtySession
) -> None:
    hidden = "echo safe\u200b\u200d\ufeff\u2060\u200e\u200f\u061c\u202e\U000e0041\u00a0end"
    server.script(reply("", calls=[run_call(hidden)]), reply("declined"))
    repl.line("go")
    repl.expect(QUESTION)
    markers = "<U+200B><U+200D><U+FEFF><U+2060><U+200E><U+200F><U+061C><U+202E><U+E0041>"
    assert f"$ echo safe{markers}<U+00A0>end" in repl.screen()
    repl.send("n")  # one key, no Enter
    repl.prompt()
    assert results(server)[0]["error_code"] == "NOT_ALLOWED"
    card = repl.screen().split("run_command", 2)[-1]  # the tool card after the answer
    assert f"safe{markers}" in card
    assert f"safe{markers}" in repl.run("/show 1")  # the call in full


def test_always_covers_the_program_it_names_in_this_chat_only(
    server: ScriptedServer, repl: PtySession
) -> None:
    """ "Always" for `echo one` from calculator covers calculator's `echo` commands:
    not another program under the same skill name, not `echo` claimed by another
    skill, not `echo` chained to something else, and nothing after /new."""
    server.script(
        reply("", calls=[run_call("echo one")]),
        reply("ran one"),
        reply("", calls=[run_call("echo two")]),
        reply("ran two"),
        reply("", calls=[run_call("pwd")]),
        reply("declined pwd"),
        reply("", calls=[run_call("echo two", skill="commit-message")]),
        reply("declined other skill"),
        reply("", calls=[run_call("echo two; pwd")]),
        reply("declined chain"),
        reply("", calls=[run_call("echo three")]),
        reply("declined after new"),
    )
    repl.line("one")
    card = repl.expect(QUESTION)
    assert "always = echo … from skill calculator, until this chat ends" in card
    repl.send("a")  # one key, no Enter
    assert "ran one" in repl.prompt()
    screen_two = repl.run("two")  # covered: no question
    assert QUESTION not in screen_two and "ran two" in screen_two
    for message, shown in (
        ("three", "always = pwd … from skill calculator"),
        ("four", "always = echo … from skill commit-message"),
        ("five", "always = this exact command from skill calculator"),
    ):
        repl.line(message)
        assert shown in repl.expect(QUESTION)
        repl.send("n")  # one key, no Enter
        repl.prompt()
    got = results(server)  # this chat's tool results, as the model got them
    assert [r.get("stdout") for r in got[:2]] == ["one\n", "two\n"]
    assert [r.get("error_code") for r in got[2:]] == ["NOT_ALLOWED"] * 3
    repl.run("/new")
    repl.line("six")
    repl.expect(QUESTION)  # a new chat: "always" was not carried over
    repl.send("n")  # one key, no Enter
    assert "declined after new" in repl.prompt()
    assert results(server)[0]["error_code"] == "NOT_ALLOWED"
    assert repl.quit() == 0


@pytest.mark.parametrize(
    ("command", "covered"),
    [
        ("echo hi there", ("echo",)),
        ("/skills/pdf/scripts/fill.sh a.pdf", ("/skills/pdf/scripts/fill.sh",)),
        ("python3 /skills/pdf/scripts/fill.py a.pdf", ("python3", "/skills/pdf/scripts/fill.py")),
        ("bash scripts/run.sh", ("bash", "scripts/run.sh")),
        ("python3 -c 'import os'", None),  # inline code: the exact command only
        ("env", None),
        ("FOO=1 echo hi", None),
        ("echo 'unclosed", None),
        ("echo hi | sh", None),
        ("echo $(id)", None),
        ("echo hi > f", None),
        ("echo a\nrm -rf /x", None),
    ],
)
def test_what_always_covers(command: str, covered: tuple[str, ...] | None) -> None:
    expected = ("s", True, covered) if covered else ("s", False, (command,))
    assert always_scope("s", command) == expected


def test_keys_typed_before_the_question_do_not_answer_it(
    server: ScriptedServer, repl: PtySession
) -> None:
    """`y⏎` typed while the model is still thinking is not consent to a command that
    was not on screen yet; the answer given after the card is."""
    server.script(
        reply("", calls=[run_call("echo typed-ahead-$((7000 + 13))")], hold="thinking"),
        reply("after the answer"),
    )
    repl.line("go")
    assert wait_for(lambda: len(server.completions) == 1)  # the model is thinking
    repl.send("y\r")  # typed ahead, before any question
    assert wait_for(lambda: repl.pending_input() == 2)  # in skillchat's terminal, unread
    server.release("thinking")
    repl.expect(QUESTION)
    repl.send("n")  # one key, no Enter
    assert "after the answer" in repl.prompt()
    assert results(server)[0]["error_code"] == "NOT_ALLOWED"
    assert "typed-ahead-7013" not in repl.screen()
