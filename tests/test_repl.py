"""The interactive session in a real pseudo-terminal against the scripted server: what
the user sees, what each key does, what skillchat sent, and what the database kept."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from chat_helpers import sent, system_text
from helpers import session_options, skill_folder, skillchat
from openai_server import ScriptedServer, call, reply
from pty_session import ESC_ENTER, UP, PtySession, paste

from skillchat.chats.store import ChatStore, StoredMessage
from skillchat.sections import user_data_dir

REPO = Path(__file__).resolve().parents[1]
MIDDLE = "line 15 of the long file"
MARKER = "CALCULATOR-BODY-MARKER-91d2"


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """The bundled skills, one with a long file, and a skill named like a built-in."""
    root = tmp_path / "skills"
    shutil.copytree(REPO / "skillchat" / "bundled_skills" / "calculator", root / "calculator")
    with (root / "calculator" / "SKILL.md").open("a") as f:
        f.write(f"\n{MARKER}\n")
    long = "\n".join(f"line {n} of the long file" for n in range(1, 31))
    (root / "calculator" / "long.md").write_text(long + "\n")
    skill_folder(root, "help", "name: help\ndescription: Writes help pages.\n", "# Help pages\n")
    return root


@pytest.fixture
def repl(
    server: ScriptedServer, skills: Path, pty_sessions: Callable[..., PtySession]
) -> Callable[..., PtySession]:
    """Start sessions on the server and skills (extra arguments appended), each at its
    prompt; any left running are killed at the end."""

    def start(*args: str) -> PtySession:
        session = pty_sessions(*session_options(server, skills), *args)
        session.prompt()
        return session

    return start


def stored(chat_id: str | None = None) -> list[StoredMessage]:
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.get_chat(chat_id) if chat_id else store.last_chat()
        assert chat is not None
        return store.load_messages(chat.id)


def test_an_exchange_with_tool_cards_the_toolbar_and_show(server, repl) -> None:
    long = call("read_file_in_skill", {"skill_name": "calculator", "file_path": "long.md"})
    server.script(reply("Reading.", calls=[long]), reply("The answer is **39.1**."))
    session = repl()
    session.expect("openai/test-model · chat new · 0 tokens")  # the bottom toolbar
    session.send("/calc")
    session.expect("Exact arithmetic")  # the completion menu shows the skill's description
    session.send("\t")
    session.expect("/calculator")
    screen = session.run(" what is 17% of 230?")
    assert "#1 get_skill · /calculator" in screen and "#2 read_file_in_skill" in screen
    assert "more lines" in screen and MIDDLE not in screen  # the card is shortened
    assert "Reading." in screen and "The answer is 39.1." in screen
    session.expect(f"chat {_last_chat_id()} · skills: calculator · 30 tokens")
    assert sent(server, 0)[1] == {"role": "user", "content": "what is 17% of 230?"}
    assert MIDDLE in session.run("/show 2")
    assert "/show needs the number of a tool card (1-2)" in session.run("/show 9")
    assert session.quit() == 0
    assert len(server.completions) == 2
    assert MARKER in json.dumps(server.completions[0].body)  # the model got the body...
    files = list(user_data_dir().glob("chats.db*"))
    assert files and all(MARKER.encode() not in f.read_bytes() for f in files)  # ...not the disk


def _last_chat_id() -> str:
    with ChatStore.open(user_data_dir() / "chats.db") as store:
        chat = store.last_chat()
        assert chat is not None
        return chat.id


def test_multiline_paste_and_ctrl_c_on_the_prompt(server, repl) -> None:
    server.script(reply("one"), reply("two"), reply("three"))
    session = repl()
    assert "one" in session.run("first line" + ESC_ENTER + "second line")
    assert "two" in session.run(paste("pasted a\npasted b"))
    session.send("\x03")  # Ctrl-C on an empty prompt: a hint, not an exit
    session.expect("press Ctrl-D or type /exit to quit")
    session.redrawn()
    session.send("typed by mistake\x03")  # Ctrl-C on a line: clears it
    assert "three" in session.run("meant")
    users = [m["content"] for m in sent(server) if m["role"] == "user"]
    assert users == ["first line\nsecond line", "pasted a\npasted b", "meant"]
    assert session.quit() == 0


def test_ctrl_c_stops_a_reply_keeps_it_marked_and_the_chat_goes_on(server, repl) -> None:
    server.script(reply("tick " * 200, chunks=100, chunk_delay=0.03), reply("after"))
    session = repl()
    session.line("count slowly")
    session.expect("tick tick tick")
    session.interrupt()
    # Keys are not echoed while a reply streams: an echoed ^C shifted the redrawn
    # reply and the interrupted text was printed twice.
    assert "^C" not in session.expect("interrupted")
    session.prompt()
    last = stored()[-1]
    assert last.interrupted and last.message["content"].startswith("tick tick tick")
    assert last.message["content"].endswith("[interrupted]")
    assert len(last.message["content"]) < len("tick " * 200)
    assert "after" in session.run("go on")
    assert sent(server)[-2] == last.message  # the model is told what the user saw
    assert session.quit() == 0


def test_new_chats_and_resume(server, repl) -> None:
    server.script(reply("**alpha** answer"), reply("beta answer"), reply("alpha again"))
    session = repl()
    assert "alpha answer" in session.run("alpha question")
    alpha = _last_chat_id()
    assert "new chat" in session.run("/new")
    assert "beta answer" in session.run("beta question")
    assert sent(server)[1:] == [{"role": "user", "content": "beta question"}]
    listing = session.run("/chats")
    assert "alpha question" in listing and "beta question" in listing
    session.send(f"/resume {alpha[:3]}")
    session.send("\t")
    session.expect(alpha)
    resumed = session.run("")
    assert f"resumed chat {alpha} · 2 messages · alpha question" in resumed
    assert "alpha answer" in resumed and "**" not in resumed  # the last reply, rendered
    assert "alpha again" in session.run("and again")
    assert [m["content"] for m in sent(server)][1:] == [
        "alpha question",
        "**alpha** answer",
        "and again",
    ]
    assert session.quit() == 0
    assert [m.message["content"] for m in stored(alpha)][-1] == "alpha again"


def test_reload_model_and_a_skill_shadowed_by_a_command(server, repl, skills) -> None:
    server.script(reply("fresh used"), reply("on the other model"), reply("help pages"))
    session = repl()
    assert "/help is a built-in command; use the skill with /skill help" in "".join(session.output)
    skill_folder(
        skills, "fresh", "name: fresh\ndescription: Added while running.\n", "# Fresh body\n"
    )
    assert "3 skills; new: fresh" in session.run("/reload")
    assert "fresh used" in session.run("/fresh try it")
    fresh = "# Fresh body\n\n\nARGUMENTS: try it"  # no placeholder: the words are appended
    assert json.loads(sent(server)[-1]["content"])["documentation"] == fresh
    assert '"name": "fresh"' in (system_text(server) or "")
    listing = session.run("/skills")
    assert "● fresh" in listing and "help (use /skill help)" in listing
    assert "model: openai/other-model" in session.run("/model openai/other-model")
    assert "on the other model" in session.run("hello")
    assert server.completions[-1].body["model"] == "other-model"
    assert "/resume ID" in session.run("/help")  # the command ran: nothing went to the model
    assert "help pages" in session.run("/skill help write one")
    help_body = "# Help pages\n\n\nARGUMENTS: write one"
    assert json.loads(sent(server)[-1]["content"])["documentation"] == help_body
    assert session.quit() == 0
    assert len(server.completions) == 3


def test_history_and_continue_across_runs(server, repl) -> None:
    server.script(reply("first run"), reply("second run"))
    first = repl()
    assert "first run" in first.run("remember this line")
    assert first.quit() == 0
    second = repl("-c")
    assert "resumed chat" in "".join(second.output)
    second.send(UP)
    second.expect("remember this line")
    assert "second run" in second.run("")
    assert [m["content"] for m in sent(server)][1:] == [
        "remember this line",
        "first run",
        "remember this line",
    ]
    assert second.quit() == 0
    assert len(stored()) == 4


def test_a_history_file_that_cannot_be_used_is_one_line_and_the_repl_goes_on(server, repl) -> None:
    """A folder where the history file should be: neither read nor written (as root
    too, unlike a file without permissions)."""
    (user_data_dir() / "history").mkdir(parents=True)
    server.script(reply("first answer"), reply("second answer"))
    session = repl()
    assert "first answer" in session.run("hello")
    assert "second answer" in session.run("again")
    assert session.quit() == 0
    out = "".join(session.output)
    assert out.count("input history") == 1 and "Traceback" not in out
    assert "Exception" not in out and "Errno" not in out


def test_the_model_library_and_rich_load_after_the_prompt_is_drawn(server, tmp_path) -> None:
    plain = tmp_path / "plain"  # nothing to warn about before the prompt (no shadowed name)
    shutil.copytree(REPO / "skillchat" / "bundled_skills" / "calculator", plain / "calculator")
    session = PtySession(
        *session_options(server, plain),
        env={"PYTHONPROFILEIMPORTTIME": "1"},  # every import logs a line as it completes
    )
    try:
        before = session.prompt()
        assert re.search(r"\| +prompt_toolkit\r", before)
        assert not re.search(r"\| +(openai|httpx)\b", before)  # not even one of their modules
        # Nothing before the prompt prints through Rich: it loads behind it, with the
        # Markdown the first reply needs (its console is made when something prints).
        assert not re.search(r"\| +rich\b", before)
        # No message needed. At any depth: -X importtime counts nesting across threads,
        # and the backend loads beside the prompt's own late imports.
        session.expect(" skillchat.engine.backends.openai_backend\r")
        assert session.quit() == 0
    finally:
        session.close()
    assert not server.completions


def test_an_unusable_database_stops_the_session_before_the_prompt(server, skills) -> None:
    db = user_data_dir() / "chats.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"not a database at all" * 20)
    session = PtySession("--api-base", server.base_url, "--skills-dir", str(skills))
    assert session.wait() == 1
    screen = "".join(session.output)
    assert "skillchat: error:" in screen and "chat database is unreadable" in screen
    assert "❯" not in screen


def test_no_terminal_or_options_before_a_command_are_usage_errors(skills) -> None:
    piped = skillchat("--skills-dir", str(skills), input="hello\n", timeout=30)
    assert piped.returncode == 2 and "use: skillchat ask" in piped.stderr
    misplaced = skillchat("--model", "x", "chats", "list", timeout=30)
    assert misplaced.returncode == 2
    assert "session options go after the command: skillchat chats" in misplaced.stderr
