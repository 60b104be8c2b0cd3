"""Nothing hostile reaches the terminal raw: a skill, a file name and a scripted model
full of escape sequences, control characters, bidi overrides and Rich markup, through
the real CLI (piped, and in a pseudo-terminal read back with pyte, which obeys what a
terminal would) and through the interactive session.

What must hold: no escape sequence, BEL, backspace, carriage return, C1 control or
bidi override from the input comes out; the window title is never set; `[/bold]` is
printed as text and crashes nothing; `[link=...]` and Markdown links never become
terminal hyperlinks; and the hostile text is still shown (made visible, as ␛ ␇ ␈ ␍
and <U+009B>), not silently lost.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest
from helpers import one_line_error, session_options, skillchat
from openai_server import ScriptedServer, call, error, reply
from pty_session import PtySession

# Clipboard write, window title, hyperlink, clear screen, a red-blink SGR, backspaces,
# a carriage return, a C1 CSI, a bidi override, DEL, then Rich markup.
HOSTILE = (
    "Evil \x1b]52;c;cHduZWQ=\x07 \x1b]0;PWNED\x07 \x1b]8;;file:///etc/passwd\x1b\\here"
    "\x1b]8;;\x1b\\ \x1b[2J \x1b[31;5mred \x08\x08 \rX \x9b31m \u202eabc \x7f "
    "[/bold] [link=file:///etc/passwd]click[/link]"
)
# Sequences from HOSTILE that must never come out as they went in.
RAW = ("\x1b]", "\x07", "\x08", "\x9b", "\u202e", "\x7f", "\x1b[2J", "\x1b[31;5m")
SGR = re.compile(r"\x1b\[[0-9;]*m")  # Rich's own styling (bold, dim; NO_COLOR is set)
VISIBLE = "␛]52;c;cHduZWQ=␇"  # how the clipboard write is shown instead


def assert_inert(output: str, *, terminal: bool = False) -> None:
    """No raw sequence of HOSTILE in `output`; piped output has no ESC, backspace or CR
    at all. (On a terminal prompt-toolkit moves its cursor with single backspaces and
    CRs of its own; HOSTILE's two backspaces must still not come out.)"""
    for seq in (*RAW, "\x08\x08") if terminal else RAW:
        if terminal and seq == "\x08":
            continue
        assert seq not in output, f"{seq!r} reached the output:\n{output!r}"[:3000]
    if not terminal:
        assert "\x1b" not in output and "\r" not in output, output


def screen_of(raw: str, rows: int = 300) -> pyte.Screen:
    """What a 120-column terminal shows after `raw`."""
    screen = pyte.Screen(120, rows)
    pyte.Stream(screen).feed(raw)
    return screen


def shown(screen: pyte.Screen) -> str:
    return "\n".join(line.rstrip() for line in screen.display)


def yaml_string(text: str) -> str:
    """`text` as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text)


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A skill whose description, metadata, body and a file name are hostile, and a
    folder (not a valid skill) whose name is."""
    root = tmp_path / "skills"
    evil = root / "evil"
    (evil / "scripts").mkdir(parents=True)
    (evil / "SKILL.md").write_text(
        f"---\nname: evil\ndescription: {yaml_string(HOSTILE)}\n"
        f"metadata:\n  author: {yaml_string(HOSTILE)}\n---\n"
        f"# Body {HOSTILE}\n\n[docs](https://example.com/docs) {HOSTILE}\n",
        encoding="utf-8",
    )
    (evil / "scripts" / "run\x1b]0;FILE\x07.sh").write_text("echo\n")
    bad = root / "bad\x1b[2J\x1b]0;DIR\x07"
    bad.mkdir()
    (bad / "SKILL.md").write_text(f"---\nname: {yaml_string(HOSTILE)}\n---\n", encoding="utf-8")
    return root


def run_in_pty(pty_sessions: Callable[..., PtySession], *args: str) -> tuple[int, str]:
    """`skillchat ARGS` in a pseudo-terminal to the end: its exit status and raw output."""
    session = pty_sessions(*args)
    status = session.wait()
    return status, "".join(session.output)


def test_skills_commands_piped(skills: Path) -> None:
    outputs = [
        skillchat("skills", "list", "--skills-dir", str(skills)),
        skillchat("skills", "show", "evil", "--skills-dir", str(skills)),
        skillchat("skills", "validate", str(skills)),
    ]
    for done in outputs:
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        assert_inert(done.stdout + done.stderr)
    listing, show, validate = outputs
    assert VISIBLE in listing.stdout and "[/bold] [link=file:///etc/passwd]click[/link]" in (
        listing.stdout
    )
    assert show.stdout.count(VISIBLE) == 3 and "run␛]0;FILE␇.sh" in show.stdout
    assert "bad␛[2J␛]0;DIR␇" in validate.stdout  # the folder's name, made visible
    for args, where in ((("list",), ("skills", 0)), (("show", "evil"), ("frontmatter",))):
        done = skillchat("skills", *args, "--json", "--skills-dir", str(skills))
        assert_inert(done.stdout)
        doc = json.loads(done.stdout)  # JSON: parsed back, the text is intact
        for key in where:
            doc = doc[key]
        assert doc["description"] == HOSTILE


def test_skills_commands_on_a_terminal(skills: Path, pty_sessions) -> None:
    for args, status in (
        (("skills", "list", "--skills-dir", str(skills)), 0),
        (("skills", "show", "evil", "--skills-dir", str(skills)), 0),
        (("skills", "show", "evil", "--file", "SKILL.md", "--skills-dir", str(skills)), 0),
        (("skills", "validate", str(skills)), 1),
    ):
        code, raw = run_in_pty(pty_sessions, *args)
        assert code == status and "internal error" not in raw, raw
        assert_inert(raw, terminal=True)
        assert "\x1b" not in SGR.sub("", raw), raw  # no sequence but Rich's styling
        screen = screen_of(raw)
        assert screen.title == "", args
        assert "␛]52;c;cHduZWQ=␇" in shown(screen).replace("\n", ""), shown(screen)
    code, raw = run_in_pty(pty_sessions, "skills", "list", "--long", "--skills-dir", str(skills))
    assert "[/bold]" in shown(screen_of(raw))


def hostile_model(server: ScriptedServer) -> None:
    """A reply with a hostile tool call (its name and arguments), then a hostile answer
    with a Markdown link."""
    server.script(
        reply(
            HOSTILE,
            calls=[
                call(f"tool{HOSTILE}", {"skill_name": HOSTILE}),
                call("get_skill", {"skill_name": "evil"}),
            ],
        ),
        reply(f"# Answer {HOSTILE}\n\nSee [the docs](https://example.com/docs).\n"),
    )


def test_a_hostile_model_through_ask_and_the_saved_chat(server, skills: Path) -> None:
    hostile_model(server)
    done = skillchat(
        "ask", *session_options(server, skills), f"hello {HOSTILE}", stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout + done.stderr)
    assert VISIBLE in done.stdout and VISIBLE in done.stderr  # the answer; narration, cards
    assert "[/bold]" in done.stdout
    chat_id = json.loads(skillchat("chats", "list", "--json").stdout)[0]["id"]
    for args in (("list",), ("show", chat_id), ("export", chat_id)):
        listed = skillchat("chats", *args)
        assert listed.returncode == 0, listed.stderr
        assert_inert(listed.stdout + listed.stderr)
        assert "␛]52;c;cHduZWQ=␇" in listed.stdout  # the title (from the message), the reply
    assert VISIBLE in skillchat("chats", "export", chat_id).stdout
    exported = skillchat("chats", "export", chat_id, "--format", "json").stdout
    assert_inert(exported)
    contents = [m["content"] for m in json.loads(exported)["messages"]]
    assert any(isinstance(c, str) and HOSTILE in c for c in contents)


def test_a_hostile_model_on_a_terminal(server, skills: Path, pty_sessions) -> None:
    hostile_model(server)
    code, raw = run_in_pty(pty_sessions, "ask", *session_options(server, skills), "hello")
    assert code == 0, raw
    assert_inert(raw, terminal=True)
    assert "\x1b]" not in raw  # no OSC at all: Markdown links are not hyperlinks
    screen = shown(screen_of(raw))
    assert "https://example.com/docs" in screen  # the link's target, shown as text
    assert "␛]52;c;cHduZWQ=␇" in screen.replace("\n", "")
    chat_id = json.loads(skillchat("chats", "list", "--json").stdout)[0]["id"]
    for args in (("chats", "list"), ("chats", "show", chat_id)):
        code, raw = run_in_pty(pty_sessions, *args)
        assert code == 0, raw
        assert_inert(raw, terminal=True)
        assert screen_of(raw).title == ""


def test_a_provider_error_is_one_inert_line(server, skills: Path) -> None:
    server.script(error(400, message=HOSTILE))
    done = skillchat("ask", *session_options(server, skills), "hi", stdin=subprocess.DEVNULL)
    line = one_line_error(done)
    assert_inert(done.stdout + done.stderr)
    assert "␛]52;c;cHduZWQ=␇" in line


def test_the_interactive_session(server, skills: Path, tmp_path: Path, pty_sessions) -> None:
    """`/skills`, the completion menus, cards, `/show`, `/attach`, `/chats` and `/resume`
    with a hostile skill, model and workspace file name: the raw stream carries none
    of the input's sequences, and the screen pyte draws from it has the hostile text
    made visible."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "notes\x1b]0;FILE\x07.md").write_text("notes\n")
    server.script(reply("first"))  # a saved chat whose title is hostile
    first = skillchat("ask", *session_options(server, skills), HOSTILE, stdin=subprocess.DEVNULL)
    assert first.returncode == 0, first.stderr
    hostile_model(server)
    session = pty_sessions(*session_options(server, skills), "--workspace", str(workspace))
    session.prompt()
    assert VISIBLE in session.run("/skills")
    session.send("/ev")
    session.expect("Evil ␛]52;c")  # the completion menu: the description, made visible
    session.send("\x15")  # Ctrl-U: clear the line
    session.run("hello")
    assert "get_skill" in session.run("/show 2")
    assert VISIBLE in session.run("/show 1")  # the unknown tool's name, in its error
    session.send("/attach no")
    session.expect("notes␛]0;FILE␇.md")  # the completion menu: the file name, made visible
    session.send("\t")
    session.expect("^G")  # inserted: prompt-toolkit shows the BEL in the input line as ^G
    assert "attached notes␛]0;FILE␇.md" in session.run("")
    listing = session.run("/chats")
    assert "Evil ␛]52;c" in listing  # the first chat's title
    chat_id = listing.split("* ", 1)[1].split()[0]
    session.run("/new")
    resumed = session.run(f"/resume {chat_id}")
    assert "resumed chat" in resumed and "<U+202E>abc ␡ [/bold]" in resumed
    session.send("/resume ")
    session.expect("Evil ␛]52;c")  # the completion menu: chat titles
    session.send("\x15")
    assert session.quit() == 0
    raw = "".join(session.output)
    assert_inert(raw, terminal=True)
    assert screen_of(raw, rows=40).title == ""


def test_clean_keeps_text_and_json_text_stays_json() -> None:
    from skillchat.ui.safe import clean, json_text, one_line

    assert clean("a\tb\r\nc\n") == "a\tb\nc\n"  # tabs, newlines and Windows lines read as text
    assert clean("naïve → 日本") == "naïve → 日本"
    assert clean("\x1b[1m\x00\x9b\u2066") == "␛[1m␀<U+009B><U+2066>"
    assert one_line("a\n\x1bb  c", limit=4) == "a ␛…"
    document = {"k": HOSTILE}
    dumped = json_text(document)
    assert json.loads(dumped) == document
    assert_inert(dumped)
