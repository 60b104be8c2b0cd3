"""The terminal habits people bring from other chat tools, each in a real
pseudo-terminal against the scripted server: `/context`, `/copy`, the external
editor, stored keys, `/model` completion, the status line, notifications."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest
from chat_helpers import sent
from consent_helpers import BUNDLED, QUESTION, run_call
from helpers import session_options, skill_folder, skillchat, wait_for
from openai_server import ScriptedServer, call, reply
from pty_session import LINE_DONE
from sandbox_helpers import require_sandbox
from terminal_helpers import Start, repl_starter, shell_script


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    skill_folder(
        root, "notes", "name: notes\ndescription: Keeps notes.\n", "# Notes\n" + "n" * 3000
    )
    return root


@pytest.fixture
def repl(server: ScriptedServer, skills: Path, pty_sessions: Start) -> Start:
    return repl_starter(server, skills, pty_sessions)


def _row(shown: str, name: str) -> int:
    """The token count on the `/context` row named `name`."""
    match = re.search(rf"^{re.escape(name)}\s+([\d,]+)", shown, re.MULTILINE)
    assert match, f"no row {name!r} in:\n{shown}"
    return int(match.group(1).replace(",", ""))


def test_context_shows_each_part_and_what_compact_would_free(server, repl, tmp_path) -> None:
    server.script(
        reply(calls=[call("get_skill", {"skill_name": "notes"})]),
        reply("noted " + "x" * 600),
        reply("second " + "y" * 600),
        reply("third"),
        reply("fourth"),
    )
    (tmp_path / "config.toml").write_text("context_window = 100000\n")
    session = repl("--config", str(tmp_path / "config.toml"))
    fresh = session.run("/context")
    assert _row(fresh, "skills catalog") > 0 and _row(fresh, "tool definitions") > 0
    assert _row(fresh, "history") == 0
    assert "/compact would free nothing" in fresh
    for text in ("take a note", "more", "and more", "last"):
        session.run(text)
    shown = session.run("/context")
    skill = _row(shown, "skill notes")
    assert skill >= 1000  # the 3,000-character body, as get_skill returned it
    assert _row(shown, "history") > 400
    total = int(
        re.search(r"~([\d,]+) tokens of the model's 100,000-token window", shown)
        .group(1)
        .replace(",", "")
    )  # type: ignore[union-attr]
    parts = [
        _row(shown, n)
        for n in (
            "system prompt",
            "skills catalog",
            "tool definitions",
            "skill notes",
            "attachments",
            "history",
            "tool results",
        )
    ]
    assert total == sum(parts)
    frees = re.search(r"/compact would free up to ~([\d,]+) tokens", shown)
    assert frees and int(frees.group(1).replace(",", "")) >= skill  # the older turns hold it
    assert session.quit() == 0


def clipboard_tool(tmp_path: Path, name: str = "wl-copy") -> tuple[dict[str, str], Path]:
    """A clipboard tool that writes what it is given to a file, first on PATH."""
    bin_dir = tmp_path / "bin"
    got = tmp_path / "clipboard"
    shell_script(bin_dir, name, f"cat > {got}")
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "WAYLAND_DISPLAY": "wayland-test"}
    return env, got


def test_copy_sends_the_answer_by_osc52_and_to_the_clipboard_tool(server, repl, tmp_path) -> None:
    server.script(reply("first answer"), reply("second **answer**\nline two"))
    env, got = clipboard_tool(tmp_path)
    session = repl(env=env)
    session.run("one")
    session.run("two")
    shown = session.run("/copy")
    assert "copied answer 2 (26 characters) to the clipboard: OSC 52 and wl-copy" in shown
    sent = "".join(session.output)
    assert osc52_payloads(sent) == ["second **answer**\nline two"]
    assert got.read_text() == "second **answer**\nline two"
    assert "copied answer 1" in session.run("/copy 1")
    assert got.read_text() == "first answer"
    assert "1-2 (none: the last)" in session.run("/copy 3")
    assert session.quit() == 0


def test_copy_prints_plainly_what_no_clipboard_takes(server, repl) -> None:
    lines = [f"line {i:04d} " + "z" * 60 for i in range(1200)]  # ~85,000 characters
    server.script(reply("\n\n".join(lines)))
    session = repl(env={"WAYLAND_DISPLAY": "", "DISPLAY": ""})
    session.run("long")
    shown = session.run("/copy")
    assert "no clipboard here: answer 1" in shown
    assert shown.rstrip().endswith(lines[-1])  # the whole answer, as it was
    assert "\x1b]52;" not in "".join(session.output)
    assert session.quit() == 0


def osc52_payloads(output: str) -> list[str]:
    return [
        base64.b64decode(m).decode("utf-8")
        for m in re.findall(r"\x1b\]52;c;([A-Za-z0-9+/=]*)\x07", output)
    ]


def test_ctrl_x_ctrl_e_edits_the_line_in_the_editor_then_enter_sends_it(server, repl, tmp_path):
    seen = tmp_path / "seen"
    editor = shell_script(
        tmp_path,
        "editor.sh",
        f'cp "$1" {seen}; stat -c %a "$1" >> {seen}; '
        'printf "%s\\nsecond line\\n" "$(cat "$1")" > "$1"',
    )
    server.script(reply("got it"))
    session = repl(env={"VISUAL": "", "EDITOR": editor})
    session.send("a draft")
    session.send("\x18\x05")  # Ctrl-X Ctrl-E
    session.until_screen(lambda lines: any("second line" in line for line in lines))
    session.send("\r")
    session.expect(LINE_DONE)
    assert "got it" in session.prompt()
    assert seen.read_text() == "a draft600\n"  # the typed line, in a private file
    assert sent(server)[-1] == {"role": "user", "content": "a draft\nsecond line"}
    assert session.quit() == 0


def test_model_completes_the_configured_and_recently_used_models(server, repl, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[models.fast]\nmodel = "openai/fast-one"\napi_base = "{server.base_url}"\n')
    server.script(reply("earlier"), reply("now"))
    earlier = repl("--config", str(config), "--model", "openai/used-before")
    earlier.run("an earlier chat")
    assert earlier.quit() == 0
    session = repl("--config", str(config))
    session.send("/model ")
    session.send("\t")
    menu = session.until_screen(
        lambda lines: (
            any("[models.fast]: openai/fast-one" in line for line in lines)
            and any("used in chat" in line for line in lines)
        )
    )
    rows = [line for line in menu if "used in chat" in line or "[models." in line]
    assert any("openai/used-before" in row for row in rows)
    assert any("the current model" in line for line in menu)
    session.send("\x15")  # Ctrl-U: nothing sent
    assert session.quit() == 0


def test_the_status_line_shows_the_items_chosen_in_their_order(server, repl, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'context_window = 100000\n[ui]\nstatus_line = ["context", "model", "tokens", "nope"]\n'
    )
    server.script(
        reply("an answer " + "w" * 3000, usage={"prompt_tokens": 1200, "completion_tokens": 34})
    )
    session = repl("--config", str(config))
    assert "[ui] status_line: unknown item(s) nope left out" in "".join(session.output)
    session.run("hi")
    last = session.until_screen(lambda lines: "1,234 tokens" in lines[-1])[-1].strip()
    assert re.fullmatch(r"context \d+% · openai/test-model · 1,234 tokens", last), last
    assert "chat " not in last  # not chosen
    assert session.quit() == 0


@pytest.mark.parametrize("after_s", [0, 3600])
def test_a_waiting_question_and_a_long_turn_notify_by_osc9_once_the_turn_is_long(
    server, tmp_path, pty_sessions, after_s: int
) -> None:
    """A question, and the answer, notify in a turn that has run `notify_after_s`; one
    a moment after Enter finds the user still looking: nothing."""
    require_sandbox()
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\nnotify = "osc9"\nnotify_after_s = {after_s}\n')
    server.script(reply(calls=[run_call("echo hi")]), reply("done"))
    session = repl_starter(server, BUNDLED, pty_sessions)("--config", str(config))
    session.line("go")
    session.expect(QUESTION)
    said = "\x1b]9;skillchat: a question waits for you\x07" in "".join(session.output)
    session.send("n")
    assert "done" in session.prompt()
    ready = "\x1b]9;skillchat: the answer is ready\x07" in "".join(session.output)
    assert (said, ready) == ((True, True) if after_s == 0 else (False, False))
    assert session.quit() == 0


def test_a_turn_under_the_threshold_does_not_ring(server, repl, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ui]\nnotify_after_s = 3600\n")
    server.script(reply("quick"))
    session = repl("--config", str(config))
    start = len("".join(session.output))
    assert "quick" in session.run("hi")
    assert "\x07" not in plain_text_of_osc("".join(session.output)[start:])
    assert session.quit() == 0


def plain_text_of_osc(output: str) -> str:
    """`output` without the OSC sequences prompt-toolkit itself may send (a BEL ends them)."""
    return re.sub(r"\x1b\][^\x07\x1b]*\x07", "", output)


def test_a_message_typed_while_a_reply_comes_is_sent_after_it(server, repl) -> None:
    server.script(reply("the first answer", hold="thinking"), reply("the second answer"))
    session = repl()
    session.line("first")
    assert wait_for(lambda: len(server.completions) == 1)  # the turn is under way
    session.send("then this one\r")  # typed ahead: queued in the terminal
    assert wait_for(lambda: session.pending_input() == len("then this one\r"))
    server.release("thinking")
    session.expect("the first answer")
    session.expect("the second answer")
    session.prompt()
    assert [m["content"] for m in sent(server) if m["role"] == "user"] == [
        "first",
        "then this one",
    ]
    screen = session.screen()
    assert screen.index("the first answer") < screen.index("then this one")
    assert session.quit() == 0


def test_vi_keys_when_the_config_asks(server, repl, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[ui]\nediting_mode = "vi"\n')
    server.script(reply("ok"))
    session = repl("--config", str(config))
    session.send("world")
    session.send("\x1b")  # normal mode
    session.until_screen(lambda lines: any("world" in line for line in lines))
    session.send("0ihello \r")  # to the line's start, insert, send
    session.expect(LINE_DONE)
    session.prompt()
    assert sent(server)[-1]["content"] == "hello world"
    assert session.quit() == 0


WARNING_DARK, WARNING_LIGHT = "\x1b[33m (user only)", "\x1b[38;5;166m (user only)"
COLOURS = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|38;5;\d+|9[0-7])m")


@pytest.mark.parametrize(
    ("theme", "env", "answer", "expected"),
    [
        ("dark", {}, None, WARNING_DARK),
        ("light", {}, None, WARNING_LIGHT),
        ("auto", {"COLORFGBG": "0;15"}, None, WARNING_LIGHT),
        ("auto", {"COLORFGBG": "15;0"}, None, WARNING_DARK),
        ("auto", {}, "\x1b]11;rgb:ffff/fafa/f0f0\x07", WARNING_LIGHT),
        ("auto", {}, "\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\", WARNING_DARK),
    ],
)
def test_the_theme_follows_the_config_or_the_terminals_background(
    server, skills, tmp_path, pty_sessions, theme, env, answer, expected
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\ntheme = "{theme}"\n')
    skill_folder(
        skills, "manual", "name: manual\ndescription: Mine.\ndisable-model-invocation: true\n"
    )  # `/skills` says "(user only)" in the warning style
    env = {"NO_COLOR": "", "COLORFGBG": "", **env}
    if not env["COLORFGBG"]:
        del env["COLORFGBG"]
    session = pty_sessions(*session_options(server, skills), "--config", str(config), env=env)
    if answer is not None:
        session.expect("\x1b]11;?\x07")
        session.send(answer)
    session.prompt()
    assert expected in session.run("/skills") or expected in "".join(session.output)
    assert session.quit() == 0


def test_no_color_leaves_every_repl_line_without_colour(server, repl, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[ui]\ntheme = "light"\nstatus_line = ["x"]\n')
    server.script(reply(calls=[call("get_skill", {"skill_name": "notes"})]), reply("**done**"))
    session = repl("--config", str(config), env={"NO_COLOR": "1"})
    session.run("/notes go")
    session.run("/copy 9")  # an error line
    session.run("/context")
    assert session.quit() == 0
    assert not COLOURS.search("".join(session.output))


@pytest.mark.parametrize("no_color", ["1", ""])
def test_no_color_holds_for_ask_skills_list_and_errors_on_a_terminal(
    server, skills, pty_sessions, no_color: str
) -> None:
    """On a terminal, where colour would be used: none with NO_COLOR, some without
    (so the check can fail)."""
    server.script(reply(calls=[call("get_skill", {"skill_name": "notes"})]), reply("**done**"))
    runs = [
        ("ask", *session_options(server, skills), "go"),
        ("skills", "list", "--skills-dir", str(skills)),
        ("ask", *session_options(server, skills), "/nope-not-a-skill go"),
    ]
    seen = ""
    for args in runs:
        session = pty_sessions(*args, env={"NO_COLOR": no_color})
        session.wait()
        seen += "".join(session.output)
    assert bool(COLOURS.search(seen)) == (no_color == "")


def test_keys_set_reads_the_key_hidden_at_a_terminal(pty_sessions) -> None:
    session = pty_sessions("keys", "set", "anthropic")
    session.expect("key for ANTHROPIC_API_KEY: ")
    session.send("sk-ant-typed-secret-123\r")
    assert session.wait() == 0
    assert "sk-ant-typed-secret" not in "".join(session.output)  # not echoed
    assert "stored ANTHROPIC_API_KEY" in "".join(session.output)


@pytest.mark.parametrize(
    ("ui", "said"),
    [
        ('theme = "pink"', "[ui] theme must be dark, light or auto"),
        ('editing_mode = "ed"', "[ui] editing_mode must be emacs or vi"),
        ('notify = "siren"', "[ui] notify must be bell, osc9, osc777 or off"),
        ("status_line = [1]", "'ui.status_line' must be a list of strings"),
    ],
)
def test_a_wrong_ui_value_is_one_config_line(tmp_path, ui: str, said: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[ui]\n{ui}\n")
    done = skillchat("--config", str(config), "ask", "hi")
    assert done.returncode == 1 and said in done.stderr and len(done.stderr.splitlines()) == 1
